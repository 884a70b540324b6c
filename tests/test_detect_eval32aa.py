"""The class the two blind sets measured on the shipping tree share (tests/data/eval32aa/RESULTS.md NB,
tests/data/eval32ab/RESULTS.md OA), each on its real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import diagnose


@pytest.mark.parametrize(
    "log",
    [
        "eval32aa/008.log",  # V1 0.8.4: 'Added request' in the same second, then the line and its traceback
        "eval32ab/002.log",  # V1 0.8: a stats line with 32 running, then the line over a Ray compiled graph's frames
    ],
)
def test_the_engine_cores_exception_after_it_served_is_a_crash_while_serving(log: str) -> None:
    """0.8's run_engine_core logs 'EngineCore hit an exception' for the core's start-up and its busy loop alike
    (one try around both, read in the 0.8.4 wheel); after the engine had served, it was the busy loop: a critical
    engine_error in phase serving, never 'Engine failed to start'."""
    d = diagnose(log)
    ids = {f["id"] for f in d["findings"]}
    assert "engine_startup_failed" not in ids, d["findings"]
    err = [f for f in d["findings"] if f["id"] == "engine_error" and f["severity"] == "critical"]
    assert err and err[0]["data"]["phase"] == "serving", d["findings"]
