"""The classes of the final blind set eval32ak fixed after its measurement (tests/data/eval32ak/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from observe.parse import frames, mainexit, native, vllmcli
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose, suggestions

_RUN = RunState(shutdown=False, stats_seen=False)


def test_bare_frames_through_vllms_ipex_ops_are_vllms_traceback() -> None:
    """XA (004): bare frames from vLLM's own vllm/_ipex_ops.py (the Intel Extension for PyTorch ops vLLM calls on
    CPU / XPU in place of _custom_ops) into ipex's fusions, cut before the exception line: a traceback through vLLM's
    code, read (not refused) and failing, its phase unknown."""
    d = diagnose("eval32ak/004.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    line = next(x for x in (DATA / "eval32ak" / "004.log").read_text().splitlines() if "_ipex_ops.py" in x)
    m = frames.vllm_frame(line)
    assert m is not None and m.group("func") == "rotary_embedding"
    # a user's own folder named vllm holding a module of that name is not vLLM's package
    assert frames.vllm_frame(line.replace("/vllm/vllm/_ipex_ops.py", "/vllm/my_ops.py")) is None


def test_the_model_registrys_import_traceback_is_a_failed_start() -> None:
    """XD (026): the model registry's ERROR record ([registry.py:975], logger.exception of _try_load_model_cls /
    _try_inspect_model_cls) with a frame of importing the model's module (qwen3_5.py, in <module>; a Windows build's
    backslashes): the model class cannot be imported, so the architecture cannot be inspected and the config is never
    built — a failed start, never a crash."""
    d = diagnose("eval32ak/026.log")
    assert critical(d), d["findings"]
    assert d["findings"][0]["data"]["phase"] == "startup", d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert [la["status"] for la in d["launches"]] == ["failed"], d["launches"]
    line = next(x for x in (DATA / "eval32ak" / "026.log").read_text().splitlines() if "qwen3_5.py" in x)
    msg = line.split("] ", 1)[1]
    f = frames.cut_frame(msg, _RUN, "registry.py")
    assert f is not None and f.details["phase"] == "startup" and f.details["frame"] == "qwen3_5.<module>"
    # the same frame under another logger's record, or a layer's module import under the registry's: not this reading
    assert frames.cut_frame(msg, _RUN, "utils.py") is None
    deeper = next(
        x for x in (DATA / "eval32ak" / "026.log").read_text().splitlines() if "qwen_gdn_linear_attn.py" in x
    )
    assert frames.cut_frame(deeper.split("] ", 1)[1], _RUN, "registry.py") is None


def test_a_ucx_backtrace_under_a_ray_workers_prefix_is_that_workers_crash() -> None:
    """XC (008): frames 14-23 of UCX's native backtrace ('%2d 0x%016lx %s()  %s:%u', ucs/debug/debug.c: libffi,
    _ctypes, _PyEval_EvalFrameDefault) under '(RayWorkerWrapper pid=…, ip=…)': UCX's error handler prints it only on
    the way to the process's death (a fatal signal re-raised after it, or ucs_fatal's abort), so that worker died —
    engine_crashed, phase unknown, nothing about memory."""
    d = diagnose("eval32ak/008.log")
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]
    assert by_id(d)["engine_crashed"]["data"]["phase"] == "unknown", d["findings"]
    line = (DATA / "eval32ak" / "008.log").read_text().splitlines()[4]
    text = line.split(") ", 1)[1].strip()
    assert native.ucx_frame(text, _RUN) is not None
    # not after a requested stop, and not another shape of numbered line
    assert native.ucx_frame(text, RunState(shutdown=True, stats_seen=False, requested=True)) is None
    assert native.ucx_frame("18 0x0000000000149096 took 12 ms", _RUN) is None


def test_a_bare_ucx_backtrace_is_anybodys(tmp_path: Path) -> None:
    """The other side of XC: the same frames with no process prefix are any program's process (UCX is loaded by many):
    nothing of vLLM's to read, the log is refused as before."""
    lines = [x.split(") ", 1)[1] for x in (DATA / "eval32ak" / "008.log").read_text().splitlines()]
    bare = tmp_path / "bare.log"
    bare.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError):
        diagnose(bare)


@pytest.mark.parametrize("log", ["eval32ak/013.log", "eval32ak/029.log"])
def test_lm_evals_traceback_cut_under_its_console_script_is_the_evaluation_dying(log: str) -> None:
    """XB (013, 029): lm-evaluation-harness's frames (bin/lm_eval or bin/lm-eval 'in <module>' → cli_evaluate →
    simple_evaluate → evaluate), cut before the exception: the console script's frame is printed only for an exception
    nothing caught, so the evaluation command (the vLLM engine in its process) exits — read, failing, phase unknown,
    nothing about memory."""
    d = diagnose(log)
    assert critical(d), d["findings"]
    assert all(f["data"].get("phase") == "unknown" for f in critical(d)), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    top = next(x for x in (DATA / log).read_text().splitlines() if "in <module>" in x).strip()
    f = mainexit.died(top, _RUN)
    assert f is not None and f.details["frame"] == "cli_evaluate" and f.details["phase"] == "unknown"
    # another program's console script, or after a requested stop: not this reading
    assert mainexit.died(top.replace('lm_eval"', 'lm_evalx"').replace('lm-eval"', 'lm-evalx"'), _RUN) is None
    assert mainexit.died(top, RunState(shutdown=True, stats_seen=False, requested=True)) is None


def test_vllm_clis_status_panel_saying_the_server_process_terminated_is_a_failed_start() -> None:
    """XE (030): vllm-cli's Status panel '✗ Server process terminated unexpectedly' (box drawing, then its GPU table of
    four empty A10s): vllm-cli draws it only while it waits for the server's ready line, when the child process is gone
    (ui/server_control.py start_server_with_config) — the vLLM server died while starting. A failed start; nothing
    about memory (the GPUs are empty) and no out-of-memory named."""
    d = diagnose("eval32ak/030.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "cuda_oom" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    panel = (DATA / "eval32ak" / "030.log").read_text().splitlines()[1].strip()
    f = vllmcli.death(panel, _RUN)
    assert f is not None and f.details["phase"] == "startup" and f.details.get("before_serving")
    # another program's words without vllm-cli's mark, or after a requested stop: not this reading
    assert vllmcli.death("❌ API server process terminated unexpectedly", _RUN) is None
    assert vllmcli.death(panel, RunState(shutdown=True, stats_seen=False, requested=True)) is None
