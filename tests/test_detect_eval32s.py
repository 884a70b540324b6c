"""The misses of issue 32's blind set eval32s (tests/data/eval32s/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.failures.kinds import FailureKind
from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, diagnose, suggestions

DATA = Path(__file__).parent / "data" / "eval32s"
_RUN = RunState(False, False)


def _line(name: str, needle: str) -> str:
    """The excerpt's first line holding needle, without its '(Process pid=N) ' prefix."""
    line = next(ln for ln in (DATA / name).read_text().splitlines() if needle in ln)
    return line.split(") ", 1)[1] if line.startswith("(") else line


def test_a_fatal_signal_in_a_worker_is_the_engines_death() -> None:
    """FA (002: vLLM ~0.2 under Ray, '(RayWorker pid=1451) *** SIGBUS received at time=… on cpu 3 ***', Ray's
    logging.cc copy of it, then 'Fatal Python error: Bus error'): Abseil's failure-signal handler (installed by
    Ray's core worker) and CPython's faulthandler print these only as the process dies of the signal: the engine
    died, killed by SIGBUS — one finding for the copies, not a refusal, not healthy."""
    d = diagnose("eval32s/002.log")
    crashed = by_id(d)["engine_crashed"]
    assert crashed["severity"] == "critical" and crashed["data"]["signal"] == "SIGBUS", d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d)


def test_faulthandlers_line_alone_names_its_signal_and_a_bare_one_is_anybodys() -> None:
    """The faulthandler line read alone gives the same death; printed bare (no process prefix) it is any
    process's, not read; after a requested stop, nothing."""
    text = _line("002.log", "Fatal Python error")
    f = hosted.death(text, _RUN)
    assert f is not None and f.kind == FailureKind.ENGINE_CRASHED and f.details["signal"] == "SIGBUS"
    assert hosted.death(text, _RUN, prefixed=False) is None
    assert hosted.death(text, RunState(True, False, True)) is None


def test_vllms_no_device_refusal_under_another_programs_logger_is_a_failed_start() -> None:
    """FC (019: SkyRL's '… - ERROR - skyrl: Error processing batch: Failed to infer device type, please set the
    environment variable `VLLM_LOGGING_LEVEL=DEBUG` …', then rich's boxed traceback): vLLM's DeviceConfig raises
    this only while the engine's config is built and no platform was detected (config/device.py, 0.32): no
    engine starts — read, not refused; the exception line printed bare says the same."""
    d = diagnose("eval32s/019.log")
    assert by_id(d)["engine_startup_failed"]["severity"] == "critical", d["findings"]
    bare = "RuntimeError: " + _line("019.log", "Failed to infer").split("batch: ", 1)[1].strip()
    f = hosted.death(bare, _RUN, prefixed=False)
    assert f is not None and f.details["phase"] == "startup" and f.details["before_serving"]


def test_a_hosts_start_up_timeout_is_a_failed_start_not_memory() -> None:
    """FD (026: vLLM ~0.8 on Modal, the weights loaded and torch.compile at work, then 'Runner failed with
    exception: Runner has been initializing for too long: 300 seconds'): Modal stopped the container while vLLM
    was still starting — the launch failed, of the platform's start-up limit: no OOM, no memory flag."""
    d = diagnose("eval32s/026.log")
    found = by_id(d)
    assert found["engine_startup_failed"]["severity"] == "critical", d["findings"]
    assert "cuda_oom" not in found
    assert "--gpu-memory-utilization" not in suggestions(d)
