"""The classes of the blind set eval32av fixed after its measurement (tests/data/eval32av/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_a_cut_traceback_in_multimodal_profiling_is_a_failed_start() -> None:
    """AV2 (030): EngineCore's ERROR frames from vllm/multimodal/profiling.py's _get_mm_max_tokens into the
    Transformers backend's get_mm_max_tokens_per_item, cut before the exception: the MultiModalProfiler's per-item
    max-token count is asked for only while the engine is built (memory profiling, the encoder budget), so a
    failed start-up, never a death while serving."""
    d = diagnose("eval32av/030.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_the_engine_clients_fatal_signal_line_is_the_engines_death() -> None:
    """AV1 (026): core_client's CRITICAL 'Got fatal signal from worker processes, shutting down' (V1's SIGUSR1
    handler, which then kills the client's process tree), with no stats before it: the engine's failed start,
    not a bare engine_error; no crash while serving claimed."""
    d = diagnose("eval32av/026.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d) and "engine_error" not in by_id(d), d["findings"]


def test_the_fatal_signal_after_the_engine_served_is_a_crash() -> None:
    """The same line after a stats line: the engine served, so its death is engine_crashed."""
    from observe.parse import deaths
    from observe.parse.failtypes import RunState

    f = deaths.fatal_signal(None, deaths.FATAL_SIGNAL, None, RunState(shutdown=False, stats_seen=True))  # type: ignore[arg-type]
    assert f.kind.value == "engine_crashed" and f.details["phase"] == "serving"
    f = deaths.fatal_signal(
        None, deaths.FATAL_SIGNAL, None, RunState(shutdown=True, stats_seen=True, requested=True)
    )  # type: ignore[arg-type]
    assert f.kind.value == "shutdown_noise"
