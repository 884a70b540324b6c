"""The classes of the blind set eval32ao fixed after its measurement (tests/data/eval32ao/RESULTS.md), on their real
excerpts and on the earlier sets' excerpts holding the same lines. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from observe.parse import frames
from tests.diagnosekit import by_id, critical, diagnose, suggestions


@pytest.mark.parametrize(
    "log",
    [
        # AO1: V0 0.10's engine.py:467 record, headed by its traceback, cut under "engine = MQLLMEngine.from_vllm_config("
        "eval32ao/014.log",
        # the same record of 0.8.3 (from_vllm_config) and of 0.6.4 / 0.7 (from_engine_args), cut deeper in the build
        "eval32q/018.log",
        "eval32m/007.log",
        "eval32ag/010.log",
        "eval32an/008.log",
    ],
)
def test_run_mp_engines_record_of_the_engines_build_is_a_failed_start(log: str) -> None:
    """run_mp_engine (engine/multiprocessing/engine.py 0.6 → 0.10) builds the MQLLMEngine, then calls engine.start(),
    and logs what either raised with its traceback: a traceback through the build call is the engine's failed
    start-up, never a crash while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_only_the_build_call_is_read_under_the_header() -> None:
    """The build's source line is read under the record's header; run_mp_engine's own frame and its engine.start()
    call (the loops of an engine already built) are not."""
    assert frames.read_under_header("    engine = MQLLMEngine.from_vllm_config(")
    assert frames.read_under_header("    engine = MQLLMEngine.from_engine_args(engine_args=engine_args,")
    assert not frames.read_under_header("    engine.start()")
    assert not frames.read_under_header(
        '  File "/usr/local/lib/python3.12/dist-packages/vllm/engine/multiprocessing/engine.py", line 455, '
        "in run_mp_engine"
    )


def test_the_free_memory_refusal_hard_wrapped_after_is_less_is_read() -> None:
    """AO2: V1's worker refusal "Free memory on device cuda:0 (F/T GiB) on startup is less than desired GPU memory
    utilization (U, R GiB)." (gpu_worker.py init_device) hard-wrapped after "is less": its first line holds the
    device's figures, so it is the busy GPU, with the utilization sized to what is free."""
    d = diagnose("eval32ao/027.log")
    f = by_id(d).get("gpu_memory_busy")
    assert f is not None and f["severity"] == "critical", d["findings"]
    assert (f["data"]["free_gib"], f["data"]["total_gib"]) == (79.12, 94.97)
    assert "engine_error" not in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]
    assert suggestions(d).get("--gpu-memory-utilization") == [0.81], suggestions(d)
