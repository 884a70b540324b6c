"""The classes of the blind set eval32bu fixed after its measurement (tests/data/eval32bu/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.parse import startonly
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, critical, diagnose

_RAISED = (
    "Exception: WorkerProc initialization failed due to an exception in a background process. "
    "See stack trace for root cause."
)
_RECORD = "(EngineCore_DP0 pid=7) ERROR 09-12 17:00:46 [core.py:718] "
_STATS = (
    "(APIServer pid=5) INFO 09-12 17:00:40 [loggers.py:123] Engine 000: Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 0.0 tokens/s, Running: 0 reqs, Waiting: 0 reqs, GPU KV cache usage: 0.0%, "
    "Prefix cache hit rate: 0.0%"
)


def test_the_exception_wait_for_ready_raises_is_the_failed_start() -> None:
    """BU1 (003): vllm-ascend's EngineCore record 'Exception: WorkerProc initialization failed due to an exception in a
    background process. See stack trace for root cause.', then 'Process EngineCore_DP0:', nothing else. V1's
    MultiprocExecutor builds that Exception in WorkerProc.wait_for_ready and raises it there only (a worker answered
    not ready, or its pipe closed), under _init_executor: the executor's build, the failed start-up."""
    d = diagnose("eval32bu/003.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_error" not in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "lines",
    [
        [_RECORD + _RAISED],  # the record alone, no 'Process EngineCore_DP0:' after it
        [_RECORD + _RAISED[:118]],  # cut inside 'See stack trace for root cause.'
        [_RECORD.replace("DP0", "0") + _RAISED],  # one engine core, no data parallelism
    ],
)
def test_the_same_exception_reads_so_in_each_record(tmp_path: Path, lines: list[str]) -> None:
    p = tmp_path / "x.log"
    p.write_text("\n".join(lines) + "\n")
    d = diagnose(p)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]


def test_under_data_parallelism_with_the_frames_it_still_reads_as_before() -> None:
    """eval32br 003: the words under wait_for_ready's frames on EngineCore_DP4, then EngineCore_DP1's 'EngineCore failed
    to start.' record: the failed start, as before (BQ1's frame reading and the core's own words)."""
    d = diagnose("eval32br/003.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "lines",
    [
        # later trees' shorter text ('WorkerProc initialization failed.'): not the words read
        [_RECORD + "Exception: WorkerProc initialization failed."],
        # another Exception in the same record
        [_RECORD + "Exception: worker 1 did not answer", "(EngineCore_DP0 pid=7) Process EngineCore_DP0:"],
        # a stats line first: the engine had served (a second launch's lines would say more), no failed start read
        [_STATS, _RECORD + _RAISED],
    ],
)
def test_other_exceptions_of_the_record_stay_the_engines_error(tmp_path: Path, lines: list[str]) -> None:
    p = tmp_path / "x.log"
    p.write_text("\n".join(lines) + "\n")
    d = diagnose(p)
    assert critical(d) and "engine_startup_failed" not in by_id(d), d["findings"]


def test_raised_reads_the_words_only_before_serving() -> None:
    run = RunState(shutdown=False, stats_seen=False)
    assert startonly.raised(_RAISED, run)
    assert not startonly.raised(_RAISED, run._replace(stats_seen=True))
    assert not startonly.raised("Exception: WorkerProc initialization failed.", run)
    assert not startonly.raised("RuntimeError: " + _RAISED[len("Exception: ") :], run)
