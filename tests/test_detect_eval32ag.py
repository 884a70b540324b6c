"""The class of the final blind set eval32ag fixed after its measurement (tests/data/eval32ag/RESULTS.md TB), on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_custom_all_reduces_cuda_check_relayed_by_dynamo_is_a_failed_start() -> None:
    """TB: 'INFO dynamo_engine_vllm::worker: VLLM: Failed: /workspace/csrc/custom_all_reduce.cuh:368 'invalid
    argument'' during CUDA-graph capture: vLLM's CUDACHECK printed it and exited the process (Dynamo only relays
    it). A failed start-up, never a death while serving; nothing about memory."""
    d = diagnose("eval32ag/018.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
