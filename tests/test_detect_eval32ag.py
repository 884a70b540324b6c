"""The classes of the final blind set eval32ag fixed after its measurement (tests/data/eval32ag/RESULTS.md), each on its
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


def test_an_undated_tool_parser_record_and_its_traceback_are_one_requests_error() -> None:
    """TA: hermes_tool_parser's 'Error in extracting tool call from response.' pasted without its date, and its
    traceback whose innermost frames are json's decoder under the parser's extract_tool_calls (JSONDecodeError): the
    exception was raised inside one request's tool-call extraction, which vLLM answers without tool calls. No critical
    finding, no engine error, no failed launch."""
    d = diagnose("eval32ag/009.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in by_id(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")
