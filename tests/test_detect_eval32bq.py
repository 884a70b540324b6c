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


def test_a_dump_input_record_cut_to_its_first_word_is_a_step_that_failed_while_serving() -> None:
    """BQ3 (016): '(EngineCore_0 …) ERROR … [dump_input.py:69] Dumping', cut. vLLM's dump_input.py logs only inside
    dump_engine_exception, which only the engine core's failed model execution calls (execute_model_with_error_logging
    under step / step_with_batch_queue, read in 0.11.0's wheel): the engine's error while serving, never start-up."""
    d = diagnose("eval32bq/016.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    f = by_id(d)["engine_error"]
    assert f["data"]["phase"] == "serving" and "(startup)" not in f["title"], f
    assert "prompt_too_long" not in by_id(d), d["findings"]
