"""The rules table is the one place a finding is declared: docs/findings.md is generated from it,
every id it (and a diagnose over every real log and example) emits has its row, each id is written
as a literal in one module only, and each rule names the Settings fields it reads."""

from __future__ import annotations

import dataclasses
import inspect
import re
import subprocess
import sys
from pathlib import Path

import pytest

from observe import pipeline
from observe.errors import InputError
from observe.findingids import FindingId
from observe.rules import doc, table
from observe.rules.base import SECTIONS
from observe.settings import Settings

ROOT = Path(__file__).resolve().parents[2]


def test_the_findings_doc_is_what_the_rules_render() -> None:
    got = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "regen_findings_doc.py"), "--check"],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert got.returncode == 0, got.stdout + got.stderr
    assert (ROOT / "docs" / "findings.md").read_text(encoding="utf-8") == doc.render()


def test_every_id_has_one_doc_row_in_a_known_section() -> None:
    rows = [d for r in table.RULES for d in r.docs]
    assert len({d.id for d in rows}) == len(rows), "an id documented twice"
    assert {d.id for d in rows} == set(FindingId), "an id without its row, or a row without its id"
    assert all(d.section in SECTIONS for d in rows)
    emitted = {i for r in table.RULES for i in r.ids}
    assert emitted == set(FindingId)
    rendered = doc.render()
    for d in rows:
        assert f"`{d.id}`" in rendered


def test_every_warning_or_critical_row_says_what_is_done() -> None:
    """A row's advice is never empty; a finding a note answers says so in its advice column."""
    for d in table.docs().values():
        assert d.advice.strip() and d.evidence.strip(), d.id
        if d.note:
            assert "note" in d.advice, d.id


def _real_logs() -> list[Path]:
    logs = sorted((ROOT / "tests" / "data").rglob("*.log")) + sorted((ROOT / "examples").glob("*/vllm.log"))
    assert len(logs) > 50
    return logs


@pytest.fixture(scope="module")
def emitted_by_diagnose() -> set[str]:
    seen: set[str] = set()
    refused: set[str] = set()
    for log in _real_logs():
        try:
            d = pipeline.diagnose_paths([log])
        except InputError:
            refused.add(f"{log.parent.name}/{log.name}")
            continue
        seen |= {f.id for inst in d.instances for f in inst.findings}
    # no real log is refused (no line it reads): issue 32's class B (eval32c/RESULTS.md) was the last; but for
    # eval32h 030, whose two lines are Ray Serve's record and the user's own module printing AsyncEngineArgs (no
    # line vLLM wrote: refusing it is right, and its labels, healthy, hold), eval32k 025 (three lines of aiohttp's
    # TimeoutError, no line vLLM wrote: right, its labels hold), eval32m 017 / 018 (starlette's client-disconnect
    # traceback under Tenstorrent's fork and FastChat, no line vLLM wrote: right, their labels, healthy, hold), eval32q
    # 015 (uvicorn's four shutdown lines, no line vLLM wrote: right, its labels, healthy, hold), eval32o 014 / 028
    # (starlette's client-disconnect traceback; Unsloth's banner and notes: no line vLLM wrote, their labels, healthy,
    # hold), eval32s 012 (starlette's client-disconnect traceback under docker compose: right, its labels hold), eval32r
    # 014 (vLLM's record in pytest's caplog form 'ERROR    vllm.…:' and an elided traceback: not a line form observe
    # reads; its labels, healthy, hold), eval32w 022 / 024 (Xinference's error handling one request; Triton's service
    # lines: no line vLLM wrote, their labels, healthy, hold), eval32y 014 (uvicorn's ASGI traceback padded to a
    # terminal's width, no line vLLM wrote: its labels, healthy, hold), eval32x 003 / 022 (uvicorn's exception group over
    # a cancelled request; Dynamo's own lines draining a requested shutdown: no line vLLM wrote, their labels hold),
    # eval32ab 015 / 027 (Triton's service lines; tt-inference-server's own start-up lines: no line vLLM wrote, their
    # labels, healthy, hold). No longer refused: a log with no vLLM line whose host program printed a process's failure
    # (eval32s 003, t 001, u 025 / 029, x 027, aa 003, ab 004; ab 013, the vllm console script's frame,
    # parse/mainexit.py) is read as that failure, phase unknown (tests/test_detect_hostonly.py); eval32v 008 (Ray's core
    # worker failing to register, parse/hosted.py) is a failed start; eval32o 023 (verl's generate_sequences frame,
    # parse/hosted.py) is the rollout failing while serving; eval32ae 030 (TorchServe's worker's traceback into
    # huggingface_hub's hf_raise_for_status, parse/hosted.py) a failed start; eval32af 003 / 025 (Ray's 'ray start'
    # output; another server's ASGI exception group: no line vLLM wrote, their labels, healthy, hold)
    refused_ok = {
        "eval32h/030.log",
        "eval32k/025.log",
        "eval32m/017.log",
        "eval32m/018.log",
        "eval32q/015.log",
        "eval32o/014.log",
        "eval32o/028.log",
        "eval32s/012.log",
        "eval32r/014.log",
        "eval32w/022.log",
        "eval32w/024.log",
        "eval32x/003.log",
        "eval32x/022.log",
        "eval32y/014.log",
        "eval32ab/015.log",
        "eval32ab/027.log",
        "eval32af/003.log",
        "eval32af/025.log",
        # eval32ac 012 / 019 / 020 / 029 / 030: the commit-hash warning, Neuron's compile cache, lm-eval's progress,
        # BentoML's and RamaLama's own DEBUG lines (no line vLLM's logger wrote; their labels, healthy, hold)
        "eval32ac/012.log",
        "eval32ac/019.log",
        "eval32ac/020.log",
        "eval32ac/029.log",
        "eval32ac/030.log",
        # eval32aj 006 / 029 / 030: benchmark_serving's summary, Triton's backend table, another program's CPU start
        # (no line vLLM wrote; their labels, healthy, hold)
        "eval32aj/006.log",
        "eval32aj/029.log",
        "eval32aj/030.log",
        # eval32ai 005: a bench client's result table, no line vLLM wrote: refusing it is right, its labels hold
        "eval32ai/005.log",
        # eval32ag 017 / 022 / 023 / 025: trl vllm-serve's access line under a Slurm job's prefixes, OCRFlux's and
        # Langchain-Chatchat's own start-up lines, FlagCX / NCCL bootstrap lines (no line vLLM's logger wrote; their
        # labels, healthy, hold)
        "eval32ag/017.log",
        "eval32ag/022.log",
        "eval32ag/023.log",
        "eval32ag/025.log",
        # eval32al 007 / 015 / 022 / 025 / 030: uvicorn's ASGI traceback of one request, a lone serving_chat ERROR
        # record cut mid-name, Ray's dashboard failing to start, a start-up memory check that passed (its 2026 wording
        # without a logger prefix), uvicorn's ASGI traceback under LLaMA-Factory (their labels, healthy, hold)
        "eval32al/007.log",
        "eval32al/015.log",
        "eval32al/022.log",
        "eval32al/025.log",
        "eval32al/030.log",
        # eval32ak 001 / 011 / 012 / 021: one request's ASGI traceback, Ray's dashboard.log tail, a Jetson run script's
        # lines, olmocr's own start-up (no line vLLM's logger wrote; their labels, healthy, hold)
        "eval32ak/001.log",
        "eval32ak/011.log",
        "eval32ak/012.log",
        "eval32ak/021.log",
        # eval32an 010 / 020: one request's ASGI traceback (uvicorn to starlette) and a CUDA container's banner with
        # its no-driver warning (no line vLLM's logger wrote; their labels, healthy, hold)
        "eval32an/010.log",
        "eval32an/020.log",
        # eval32ao 004 / 009: a Ray cluster's start-up quoted with '> ' (the engine config and Ray's connect lines), and
        # uvicorn's ASGI traceback of one streaming request (starlette's disconnect listener, no line vLLM's logger
        # wrote): their labels, healthy, hold
        "eval32ao/004.log",
        "eval32ao/009.log",
        # eval32aq 025: Ray Serve's CUDA-graph capture, tqdm's progress bars under garbled '(RayWorkerProc pid=…)' (no
        # record of vLLM's logger): its labels, healthy, hold
        "eval32aq/025.log",
        # eval32au 028: GPUStack's own middleware ERROR ('Error processing streaming response') after its proxy's DEBUG
        # line, vLLM answered (no line vLLM's logger wrote): its labels, healthy, hold
        "eval32au/028.log",
        # eval32ax 015: LMCache's own per-request hit lines (vllm_v1_adapter.py, LMCache's logger), no line vLLM's
        # logger wrote: its labels, healthy, hold
        "eval32ax/015.log",
        # eval32bc 021 / 024 / 028 / 030: Xinference's own start-up, production-stack's router DEBUG line, vllm-omni's
        # own logger ('ERROR:vllm_omni.entrypoints.omni_llm:') with one request's caught error, AIBrix's
        # controller-manager (Go klog): no line vLLM's logger wrote; their labels, healthy, hold
        "eval32bc/021.log",
        "eval32bc/024.log",
        "eval32bc/028.log",
        "eval32bc/030.log",
        # eval32bg 002 / 028: a fused-MoE default-config WARNING quoted without its logger prefix, a NIXL handshake
        # assertion quoted alone: no line in vLLM's logger form; their labels, healthy, hold (016 / 018, xgrammar's
        # per-request FSM errors with elided prefixes, are read as one request's errors since BG2)
        "eval32bg/002.log",
        "eval32bg/028.log",
        # eval32bf 001 / 014: the head of one request's uvicorn run_asgi traceback, and the fused-MoE 'Using default MoE
        # config' WARNING quoted with its timestamp elided and hard-wrapped: no line in vLLM's logger form; their labels,
        # healthy, hold
        "eval32bf/001.log",
        "eval32bf/014.log",
        # eval32bb 025 / 026 / 027: LMCache's own lines (lmcache-vllm's store lines; LMCache's v1 adapter's 'number of
        # retrieved tokens is less than the expected' ERROR for one request; LMCacheMPConnector's store and prefetch
        # lines), no line vLLM's logger wrote: their labels, healthy, hold
        "eval32bb/025.log",
        "eval32bb/026.log",
        "eval32bb/027.log",
        # eval32ba 007 / 010 / 015 / 016 / 019 / 021 / 023-030: a lone 'Uvicorn running' line, GPUStack's worker lines,
        # lighteval's relay of vLLM's records in its own logger's form, a Jetson build tool's test banner, axolotl's
        # ConnectionError, TRL's 404 and its client's retries, a compose status, Langchain-Chatchat's and LightRAG's
        # banners, a Prometheus query (no line vLLM's logger wrote, as observe reads it: their labels, healthy, hold)
        *(f"eval32ba/{n}.log" for n in ("007", "010", "015", "016", "019", "021", "023", "024", "025")),
        *(f"eval32ba/{n}.log" for n in ("026", "027", "028", "029", "030")),
        # eval32be 015: the hard-wrapped tail of an args Namespace line, the stored copy starting mid-line (no logger
        # prefix, no line vLLM's logger wrote as observe reads it): its labels, healthy, hold
        "eval32be/015.log",
        # eval32bd 030: vllm bench serve's result block (the benchmark client's percentiles and 'Serving Benchmark
        # Result', 0 failed), no line vLLM's server wrote: its labels, healthy, hold
        "eval32bd/030.log",
        # eval32bh 014 / 016 / 024 / 026 / 028 / 029: OpenLLM's launcher lines, an llm-d EC connector's NIXL DEBUG
        # transfer lines without the timestamp of vLLM's prefix, Langchain-Chatchat's configuration dump, ART's and
        # Unsloth's own lines, Dynamo's 'dynamo serve' start-up lines (no line in vLLM's logger form as observe reads
        # it: their labels, healthy, hold)
        *(f"eval32bh/{n}.log" for n in ("014", "016", "024", "026", "028", "029")),
        # eval32bk 012 / 016 / 024 / 027 / 028 / 029 / 030: the --model deprecation WARNING without a timestamp, vllm
        # bench serve's result blocks, a bare 'KV Transfer metrics' line, the 'Skipping DeepGEMM warmup' note with the
        # author's 'xx:xx' time, a bare 'Resolved architecture' line and a PR's 'Preempting request' example without
        # vLLM's timestamp (no line in vLLM's logger form as observe reads it: their labels, healthy, hold)
        *(f"eval32bk/{n}.log" for n in ("012", "016", "024", "027", "028", "029", "030")),
        # eval32bn 020 / 021: vllm bench serve's result blocks ('Serving Benchmark Result', 1000 successful
        # requests), no line vLLM's server wrote: their labels, healthy, hold (tests/data/eval32bn/RESULTS.md)
        *(f"eval32bn/{n}.log" for n in ("020", "021")),
        # eval32bp 008 / 020 / 028 (the Aphrodite fork's own headers and notices), 016 (the MLPerf script's 'Adding
        # requests' / 'Processed prompts' bars), 022 (LocalAI's load lines), 026 (EuroEval's FULL_LOG copy of vLLM's
        # messages without level or prefix): no line in vLLM's logger form as observe reads it; their labels, healthy,
        # hold (tests/data/eval32bp/RESULTS.md)
        *(f"eval32bp/{n}.log" for n in ("008", "016", "020", "022", "026", "028")),
        # eval32bq 020: torch's c10 warning that TORCH_NCCL_AVOID_RECORD_STREAMS is deprecated, alone: no line vLLM
        # wrote; its labels, healthy, hold (tests/data/eval32bq/RESULTS.md)
        "eval32bq/020.log",
        # eval32bt 005: a lone 'Encoder cache will be initialized …' line without vLLM's prefix; eval32bu 020 / 023 / 024:
        # vllm-router's Rust log and AIBrix's gateway klog lines (I/W/E), no line vLLM wrote: their labels, healthy, hold
        # (tests/data/eval32bt/RESULTS.md, tests/data/eval32bu/RESULTS.md)
        "eval32bt/005.log",
        *(f"eval32bu/{n}.log" for n in ("020", "023", "024")),
        # eval32bv 006 / 009 / 018: a desktop app's Ollama-API proxy lines, InstructLab's "Waiting for the vLLM server"
        # lines, an offline run's 'Processed prompts' bars: no line vLLM's logger wrote; their labels, healthy, hold
        # (tests/data/eval32bv/RESULTS.md)
        *(f"eval32bv/{n}.log" for n in ("006", "009", "018")),
    }
    refused_misses = {
        # eval32ac 023 / 024 (class PB: RamaLama's container that never started): tests/data/eval32ac/RESULTS.md
        "eval32ac/023.log",
        "eval32ac/024.log",
        # eval32am 028 (class ZF: hipBLASLt's 'rocblaslt error' lines): tests/data/eval32am/RESULTS.md
        "eval32am/028.log",
        # eval32ap 012 (class AP3: FastChat's '| ERROR | stderr |' copy of uvicorn's request traceback, no vLLM line):
        # tests/data/eval32ap/RESULTS.md
        "eval32ap/012.log",
        # eval32as 022 (class AS1: llamafactory-cli's traceback cut before its VllmEngine frame, no vLLM line):
        # tests/data/eval32as/RESULTS.md
        "eval32as/022.log",
        # eval32au 023 (class AU1: FastChat's '| ERROR | stderr |' request traceback cut in vllm_worker's loop over
        # vLLM's AsyncLLMEngine.generate stream): tests/data/eval32au/RESULTS.md
        "eval32au/023.log",
        # eval32ax 028 (class AX1: DJL Serving's 'INFO  PyProcess W-<id>-model-stdout: ' relay of djl_python's 'Failed
        # invoke service.invoke_handler()' while the shards load): tests/data/eval32ax/RESULTS.md
        "eval32ax/028.log",
        # eval32bh 007 / 025 (BH2, a launcher's own verdict) and 015 / 021 (BH3, host tracebacks through LangChain's
        # VLLM wrapper and ART's local backend) are read since BH2 / BH3 (tests/data/eval32bh/RESULTS.md)
    }
    assert refused == refused_ok | refused_misses, refused
    return seen


def test_every_id_diagnose_emits_on_the_real_logs_has_its_row(emitted_by_diagnose: set[str]) -> None:
    documented = set(table.docs())
    assert emitted_by_diagnose - documented == set()
    assert len(emitted_by_diagnose) >= 15  # the logs exercise most rules, not a handful


def test_each_finding_id_is_a_literal_in_one_module_only() -> None:
    ids = {str(i) for i in FindingId}
    where: dict[str, set[str]] = {}
    for path in (ROOT / "observe").rglob("*.py"):
        for m in re.finditer(r"[\"']([a-z_0-9]+)[\"']", path.read_text(encoding="utf-8")):
            if m.group(1) in ids:
                where.setdefault(m.group(1), set()).add(str(path.relative_to(ROOT)))
    # ids that are also stats fields of the parser (another meaning, the same word); the failure kinds
    # of the same name are written in observe/failures/kinds.py
    other_meaning = {"preemptions", "silent_preemptions"}
    # the sidecar names engine_stuck in its own status document (observe/sidecar/service.py, and a pod's
    # entry of it: observe/sidecar/instance.py; another owner); observe/failures/stuck.py exports a function of
    # that name (its __all__)
    allowed = {
        "engine_stuck": {
            "observe/sidecar/service.py",
            "observe/sidecar/instance.py",
            "observe/failures/stuck.py",
        }
    }
    for fid, files in sorted(where.items()):
        extra = files - {"observe/findingids.py", "observe/failures/kinds.py"} - allowed.get(fid, set())
        if fid in other_meaning:
            continue
        assert not extra, f"{fid} is written as a literal in {sorted(extra)}"


def test_rules_name_the_settings_they_read() -> None:
    fields = {f.name for f in dataclasses.fields(Settings)}
    for rule in table.RULES:
        assert set(rule.settings) <= fields, rule.name
        src = inspect.getsource(inspect.getmodule(rule.detect))  # type: ignore[arg-type]
        src += "".join(p.read_text(encoding="utf-8") for p in (ROOT / "observe" / "advise").glob("*.py"))
        own = inspect.getsource(rule.detect) + "".join(inspect.getsource(k) for k in rule.states)
        read = set(re.findall(r"(?:settings|th)\.([a-z_]+)", own))
        assert read & fields <= set(rule.settings), f"{rule.name} reads {sorted(read & fields)}"
        for name in rule.settings:
            assert name in src, f"{rule.name} names {name} but neither it nor a lever reads it"
        for d in rule.docs:
            assert d.settings is None or set(d.settings) <= set(rule.settings), d.id


def test_levers_run_in_one_order() -> None:
    ranks = [lv.rank for lv in table.levers()]
    assert ranks == sorted(ranks) and len(set(ranks)) == len(ranks)


def test_rules_modules_stay_small() -> None:
    for path in [*(ROOT / "observe" / "rules").glob("*.py"), *(ROOT / "observe" / "advise").glob("*.py")]:
        n = len(path.read_text(encoding="utf-8").splitlines())
        assert n < 600, f"{path.name}: {n} lines"
    assert len((ROOT / "observe" / "diagnosis.py").read_text(encoding="utf-8").splitlines()) < 600


def test_levers_declare_the_findings_they_answer() -> None:
    """Each lever names the findings it answers, and the rule documenting each of them lists it (the
    KV plan answers queue_memory_bound as the queue rule's lever too, not as kv_cache_saturated's)."""
    documented = {d.id: r for r in table.RULES for d in r.docs}
    for lv in table.levers():
        assert lv.answers, lv
        for fid in lv.answers:
            assert lv in documented[fid].levers, (
                f"{documented[fid].name} documents {fid} but does not list its lever"
            )
    for r in table.RULES:
        for lv in r.levers:
            assert set(lv.answers) & set(r.ids), f"{r.name} lists a lever that answers none of its findings"
    advise_src = "".join(p.read_text(encoding="utf-8") for p in (ROOT / "observe" / "advise").glob("*.py"))
    for hidden in ("KV_IDS", "QUEUE_IDS"):
        assert hidden not in advise_src  # which lever answers what is the rules' declaration


def test_each_doc_names_an_alert_that_exists_and_its_runbook_section() -> None:
    from observe.failures import kinds as failurekinds
    from observe.monitoring import alerts

    names = {r["alert"] for r in alerts.alert_rules(Settings()) if "alert" in r}
    runbooks = (ROOT / "docs" / "runbooks.md").read_text(encoding="utf-8")
    docs = table.docs()
    paged = {fid: d.alert for fid, d in docs.items() if d.alert}
    for fid, alert in paged.items():
        assert alert in names, fid
        assert f"\n## {alert}\n" in runbooks, fid
        assert docs[fid].runbook == f"docs/runbooks.md#{alert.lower()}"
        assert f"[`{alert}`](runbooks.md#{alert.lower()})" in doc.render()
    # a finding the failure kinds feed pages with their alert (failurekinds, not restated)
    assert paged[FindingId.CUDA_OOM] == failurekinds.ALERT_OOM
    assert paged[FindingId.ENGINE_CRASHED] == failurekinds.ALERT_CRASHED
    assert paged[FindingId.ENGINE_STARTUP_FAILED] == failurekinds.ALERT_STARTUP_FAILED
    # the metric alerts that page on what a finding reports
    assert paged[FindingId.KV_CACHE_SATURATED] == "VLLMKVCacheSaturated"
    assert paged[FindingId.QUEUE_MEMORY_BOUND] == paged[FindingId.QUEUE_SEQ_BOUND] == "VLLMQueueBacklog"
    assert FindingId.LOW_PREFIX_CACHE_HIT_RATE not in paged  # information only: nothing pages


def test_release_ranges_in_the_doc_come_from_the_release_data(monkeypatch: pytest.MonkeyPatch) -> None:
    from observe.flags import vllmflags

    text = doc.render()
    assert (
        "{since:" not in text
        and "{before:" not in text
        and "{while:" not in text
        and "{defaults:" not in text
    )
    for flag in ("--kv-cache-memory-bytes", "--max-num-active-seqs", "--max-num-queued-reqs"):
        assert f"vLLM ≥ {vllmflags.introduced(flag)}" in text, flag
    gmu = [vllmflags.gpu_memory_utilization(r) for r in ("0.19.0", "0.20.0", "0.34.0")]
    assert f"({gmu[0]}; {gmu[1]} from 0.20.0; {gmu[2]} from 0.34.0)" in text
    # the text follows the data: another release in the data, another release in the doc
    real = vllmflags.introduced
    monkeypatch.setattr(
        vllmflags, "introduced", lambda f: "9.9.9" if f == "--max-num-queued-reqs" else real(f)
    )
    assert "running (vLLM ≥ 9.9.9)" in doc.render()
    # and no Doc or prose writes a release next to a flag itself
    raw = [doc.INTRO, *doc.BEFORE.values(), *doc.AFTER.values()]
    raw += [t for d in table.docs().values() for t in (d.evidence, d.advice, d.versions)]
    for t in raw:
        assert not re.search(r"(vLLM ≥|\(≥|default in) \d+\.\d", t), t[:120]
