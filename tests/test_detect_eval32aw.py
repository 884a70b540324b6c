"""The classes of the blind set eval32aw fixed after its measurement (tests/data/eval32aw/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import by_id, critical, diagnose


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
