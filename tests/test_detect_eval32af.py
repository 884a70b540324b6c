"""The classes the late blind set eval32af found (tests/data/eval32af/RESULTS.md SA-SE), each on its real excerpt.
Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import by_id, critical, diagnose


def test_a_streamed_requests_harmony_parse_error_is_that_requests_not_the_engines() -> None:
    """SA: gpt-oss's openai_harmony.HarmonyError ('Unexpected token 13 while expecting start token 200006') under
    serving_chat's stream generator: vLLM feeds the parser one request's tokens and answers that request; the engine
    goes on. No critical finding, no failed launch."""
    d = diagnose("eval32af/010.log")
    assert not critical(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")


def test_a_tool_parser_plugins_bare_tracebacks_are_requests_errors() -> None:
    """SB: tracebacks printed bare whose innermost frame is a tool parser's extract_tool_calls_streaming (a
    --tool-parser-plugin's hermes copy), with vLLM's 'Error trying to handle streaming tool call.': the server
    answers that request without the tool call; no engine error, in start-up or serving."""
    d = diagnose("eval32af/014.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in by_id(d), d["findings"]


def test_a_hybrid_models_kv_tokens_below_max_model_len_are_no_refusal_when_vllm_reported_room() -> None:
    """SC: Kimi-Linear's 'GPU KV cache size: 75,840 tokens' for a max_model_len of 120,000, with 'Maximum
    concurrency for 120,000 tokens per request: 2.48x': V1 logs the concurrency after its KV size check passed, so
    the engine started; no 'vLLM refuses to start'."""
    d = diagnose("eval32af/011.log")
    assert "max_model_len_exceeds_kv_cache" not in by_id(d), d["findings"]
    assert all(la.get("status") != "rejected" for la in d.get("launches") or []), d.get("launches")


@pytest.mark.parametrize("log", ["eval32af/017.log", "eval32af/018.log"])
def test_xinferences_rest_launch_model_traceback_is_a_failed_launch(log: str) -> None:
    """SD: Xinference's restful_api ERROR and its traceback through launch_model (once 'Timed out after 601 seconds
    waiting for clients. 1/2 clients joined.'): the model's launch failed — a failed start-up, never a death while
    serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_wrappers_traceback_into_the_api_servers_module_frame_after_the_client_closed_is_a_failure() -> (
    None
):
    """SE: tt-inference-server's 'Shutting down MQLLMEngineClient output handler.' (V0's client closing, which
    build_async_engine_client's finally does after a failed start too: no stop asked for), then the traceback of its
    run_vllm_api_server.py into api_server.py's module frame, cut: the server died before it came up."""
    d = diagnose("eval32af/030.log")
    assert critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
