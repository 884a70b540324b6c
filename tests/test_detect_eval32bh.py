"""The classes of blind set eval32bh fixed after its measurement (tests/data/eval32bh/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosekit import DATA, by_id, critical, diagnose


@pytest.mark.parametrize(
    "log",
    [
        # BH1: an OpenRLHF Ray worker's traceback through vLLM's worker_base.py init_worker (the worker's class
        # resolved and built while the executor is set up), cut in importlib
        "eval32bh/009.log",
        # BH1's second real excerpt of the frame: a 2026 worker's multiproc_executor ERROR records cut under
        # v1/worker/worker_base.py init_worker (worker_class(**kwargs))
        "eval32l/002.log",
        # BH1: a 2026 EngineCore's record through gpu_model_runner.py profile_cudagraph_memory →
        # _init_minimal_kv_cache_for_profiling (the start-up's CUDA-graph memory estimate), cut
        "eval32bh/011.log",
    ],
)
def test_a_traceback_cut_in_a_start_up_only_frame_is_a_failed_start(log: str) -> None:
    """A cut traceback through a function vLLM runs only while it starts (a worker's construction, the CUDA-graph
    memory profiling) is the failed start-up, not an error of phase unknown, and never a crash while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_loggings_report_of_a_failed_log_call_is_no_failure() -> None:
    """BH5: the tail of Python logging's 'Logging error' report (handleError: the log call's stack printed as a
    traceback's frames, through from_engine_args → SchedulerConfig → logger.info, then 'Message: ...' and 'Arguments:
    (None,)'): the record is lost and the program goes on. No critical finding, no failed start-up."""
    d = diagnose("eval32bh/018.log")
    assert not critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")


def test_bare_frames_without_loggings_message_and_arguments_still_tell(tmp_path: Path) -> None:
    """The other side of BH5: the same bare frames with the report's 'Arguments:' line gone are read as before (a
    start-up frame under a cut traceback); and a bare traceback cut in frames still tells at the stream's end
    (eval32bh 001, FastChat's worker under runpy)."""
    lines = (DATA / "eval32bh/018.log").read_text().splitlines()
    log = tmp_path / "no-arguments.log"
    log.write_text("\n".join(lines[:-1]) + "\n")
    assert "engine_startup_failed" in by_id(diagnose(log))
    assert critical(diagnose("eval32bh/001.log"))


def test_fastchats_vllm_worker_dying_before_it_registered_is_a_failed_start(tmp_path: Path) -> None:
    """BH1: V1's engine came up, then FastChat's model_worker announced 'Loading the model [...] ... worker type: vLLM
    worker...' and its stderr traceback through runpy's _run_module_as_main followed, cut, before 'Register to
    controller': the worker never came up (a failed start-up, not an error of unknown phase). Registered first, the
    same traceback is read as before (phase unknown)."""
    d = diagnose("eval32bh/001.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    lines = (DATA / "eval32bh/001.log").read_text().splitlines()
    log = tmp_path / "registered.log"
    log.write_text(
        "\n".join(
            [*lines[:8], "2025-03-27 11:37:40 | INFO | model_worker | Register to controller", *lines[8:]]
        )
    )
    assert "engine_startup_failed" not in by_id(diagnose(log))
