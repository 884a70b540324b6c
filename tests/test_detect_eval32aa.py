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


def test_v1_engine_dead_error_follows_a_started_engine() -> None:
    """ND (eval32aa 025, V1 0.9.2 behind swift deploy): a LoRA adapter's ValueError, then EngineDeadError's own
    message ('EngineCore encountered an issue. …', v1/engine/exceptions.py). V1 raises it only once the client
    marked the core dead: the core's busy loop sent ENGINE_CORE_DEAD (run_engine_core sends it only when the core
    was built; a failed build logs 'EngineCore failed to start') or the core monitor, which starts after the ready
    handshake, saw it exit; a failed start raises 'Engine core initialization failed' instead. So it is a death
    after start-up, never 'Engine failed to start'."""
    d = diagnose("eval32aa/025.log")
    ids = {f["id"] for f in d["findings"]}
    assert "engine_startup_failed" not in ids, d["findings"]
    dead = [f for f in d["findings"] if f["id"] == "engine_crashed"]
    assert dead and dead[0]["severity"] == "critical" and dead[0]["data"]["phase"] == "serving", d["findings"]
