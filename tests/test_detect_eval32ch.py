"""The class of the blind set eval32ch fixed after its measurement (tests/data/eval32ch/RESULTS.md), on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, diagnose, lines


def test_start_up_hang_warnings_while_the_workers_move_on_are_no_stuck_engine() -> None:
    """CH1 (006): five "No available shared memory broadcast block found in 60 seconds" over 301 s at start-up, the
    workers logging their next steps between and after them (profiling, CUDA-graph memory), then a worker's illegal
    memory access: the failed start, no engine_stuck."""
    d = diagnose("eval32ch/006.log")
    assert "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_stuck" not in by_id(d), d["findings"]


def test_start_up_hang_warnings_with_nothing_after_them_still_page(tmp_path: Path) -> None:
    """The other side: the same excerpt cut at its last hang warning (no later step, no failure) is a start-up that
    hangs: engine_stuck."""
    keep = lines("eval32ch/006.log")
    last = max(i for i, x in enumerate(keep) if "No available shared memory broadcast block" in x)
    log = tmp_path / "hung.log"
    log.write_text("\n".join(keep[: last + 1]) + "\n")
    d = diagnose(log)
    assert "engine_stuck" in by_id(d), d["findings"]
