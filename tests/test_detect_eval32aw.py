"""The classes of the blind set eval32aw fixed after its measurement (tests/data/eval32aw/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_a_stream_generators_record_cut_in_its_own_frame_is_one_requests_error() -> None:
    """AW3: vllm-ascend serving, then serving_chat.py's "Error in chat completion stream generator." (logger.exception
    in one request's streaming generator) with its traceback hard-wrapped and cut in chat_completion_stream_generator:
    nothing says the engine died, so no critical finding and no failed launch."""
    d = diagnose("eval32aw/024.log")
    assert not critical(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")


def test_a_500_then_uvicorns_unasked_shutdown_is_the_server_dying_after_its_engine() -> None:
    """AW2: a chat completion answered 500 and, on the next line, uvicorn's 'Shutting down' with nothing asking for a
    stop: vLLM's launcher (terminate_if_errored) answers a request that met a dead engine so and tells uvicorn to
    exit. Critical, while serving; not a failed start-up."""
    d = diagnose("eval32aw/015.log")
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_a_stop_asked_for_or_a_lone_shutdown_stays_a_stop(tmp_path: Path) -> None:
    """AW2's edges, on 015's own two lines: a stop asked for before them (Ctrl-C's KeyboardInterrupt line, which
    shutdownmsg reads as a requested stop), a 'Shutting down' with no 500 just before it, or a line between the two,
    is a stop, not the server dying."""
    answered, stop = (DATA / "eval32aw/015.log").read_text().splitlines()
    between = "(APIServer pid=1) INFO:     Waiting for connections to close."
    cases = ([stop], [stop, answered], [answered, between, stop], ["KeyboardInterrupt", answered, stop])
    for i, text in enumerate(cases):
        log = tmp_path / f"{i}.log"
        log.write_text("\n".join(text) + "\n")
        d = diagnose(log)
        assert "engine_crashed" not in by_id(d), (i, d["findings"])


@pytest.mark.parametrize(
    "log",
    [
        # AW1: cut in _initialize_replica → _initialize_llm_replica (through concurrent.futures' thread run)
        "eval32aw/016.log",
        # AW1: cut in _run_orchestrator → _initialize_stages → StageRuntime.initialize → _initialize_stage_replicas
        "eval32aw/017.log",
        # AW1: cut in _initialize_stage_replicas → future.result() (bare, no '(APIServer pid=N)' prefix)
        "eval32aw/019.log",
    ],
)
def test_vllm_omnis_stage_init_traceback_cut_is_a_failed_start(log: str) -> None:
    """AW1: vllm-omni's AsyncOmniEngine builds its stages (async_omni_engine.py / stage_runtime.py
    _initialize_stages → _initialize_stage_replicas → _initialize_replica → _initialize_llm_replica) once, before
    it serves: its ERROR traceback through them, even cut before the exception, is a failed start-up."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
