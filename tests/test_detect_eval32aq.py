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
    """Narrow: another file's bracketed location, or core.py with text that is no exception line, reads nothing."""
    row = next(r for r in failrows.RULES if r.name == "core-record-tail")
    assert row.pattern.search("[core.py:393] RuntimeError: expected scalar type Half but found BFloat16")
    assert not row.pattern.search("[serving_chat.py:885] RuntimeError: boom")
    assert not row.pattern.search("[core.py:393] EngineCore started.")
    assert not row.pattern.search("x [core.py:393] RuntimeError: boom")
