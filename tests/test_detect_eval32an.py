"""The class of the blind set eval32an fixed after its measurement (tests/data/eval32an/RESULTS.md), on its real
excerpt and on the earlier sets' excerpts holding the same record. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from observe.parse import failures
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, critical, diagnose


@pytest.mark.parametrize(
    "log",
    [
        # AN1: two ERROR records of a 0.12 worker (Worker_TP5): "WorkerProc failed to start." and its traceback's head
        "eval32an/015.log",
        # the same record with more of the worker's traceback, no frame naming a start-up function
        "eval32k/024.log",
        "eval32z/004.log",
    ],
)
def test_a_workers_failed_to_start_record_is_the_engines_failed_start(log: str) -> None:
    """V1's WorkerProc.worker_main logs "WorkerProc failed to start." only while it still holds its ready pipe's
    writer (before it told the executor it was ready; after, "WorkerProc failed." or "hit an exception."): the
    engine never served, so the finding is its failed start-up, never a crash."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_the_record_after_the_engine_served_is_not_read_as_a_start() -> None:
    """After a stats line the record is not taken as a start (an excerpt joining two runs): it stays a raw
    ERROR record, with no claim that the engine was still being built."""
    f = failures.error_line("WorkerProc failed to start.", RunState(shutdown=False, stats_seen=True))
    assert f is not None and not f.details.get("before_serving")
    fresh = failures.error_line("WorkerProc failed to start.", RunState(shutdown=False, stats_seen=False))
    assert fresh is not None and fresh.details.get("before_serving") is True
