"""The classes of the blind set eval32aq fixed after its measurement (tests/data/eval32aq/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import failrows
from tests.diagnosekit import by_id, critical, diagnose


def test_the_engine_cores_record_tail_trimmed_to_its_location_is_the_engines_error() -> None:
    """AQ1: '[core.py:393] RuntimeError: expected scalar type Half but found BFloat16', the level and timestamp of
    V1's engine core's exception record trimmed: the engine core raised — critical engine_error, not refused, no
    memory advice."""
    d = diagnose("eval32aq/005.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]


def test_only_core_py_with_an_exception_line_is_read() -> None:
    """Narrow: another file's bracketed location, core.py with text that is no exception line, or a stop's
    KeyboardInterrupt, reads nothing."""
    rows = [r for r in failrows.RULES if r.name.startswith("core-record-tail")]

    def read(line: str) -> bool:
        return any(all(lit in line for lit in r.literals) and r.pattern.search(line) for r in rows)

    assert read("[core.py:393] RuntimeError: expected scalar type Half but found BFloat16")
    assert read("[core.py:12] torch.OutOfMemoryException: boom")
    assert not read("[serving_chat.py:885] RuntimeError: boom")
    assert not read("[core.py:393] EngineCore started.")
    assert not read("x [core.py:393] RuntimeError: boom")
    assert not read("[core.py:393] KeyboardInterrupt: terminated")


def test_the_row_adds_no_trigger_literal_to_the_engine_cores_lines() -> None:
    """The rows need the exception's own word, never "[core.py:": every line of the engine core's logger would
    otherwise be sent to the failure rules (the scan keeps a line with no failure literal off them)."""
    assert all("[core.py:" not in lit for r in failrows.RULES for lit in r.literals)
