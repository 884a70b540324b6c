"""The classes of the blind set eval32bq fixed after its measurement (tests/data/eval32bq/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import by_id, critical, diagnose


@pytest.mark.parametrize(
    "log",
    [
        # BQ1: V1 0.11's EngineCore record through multiproc_executor.py wait_for_ready, then the raw process traceback
        "eval32bq/005.log",
        # vLLM-Kunlun (~0.15): the same record's frame line 'multiproc_executor.py ... in wait_for_ready'
        "eval32bd/027.log",
        # vllm-omni's StageEngineCoreProc: the source line 'self.workers = WorkerProc.wait_for_ready(unready_workers)'
        "eval32bc/013.log",
    ],
)
def test_the_executor_waiting_for_its_workers_to_answer_ready_is_the_start(log: str) -> None:
    """BQ1: WorkerProc.wait_for_ready runs only in MultiprocExecutor._init_executor, under the engine core's
    construction; its 'WorkerProc initialization failed due to an exception in a background process.' is a worker that
    died before it was ready: the failed start-up, never a crash while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
