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
