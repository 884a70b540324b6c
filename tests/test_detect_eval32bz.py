"""The classes of the blind set eval32bz fixed after its measurement (tests/data/eval32bz/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines


def test_the_0_22_context_length_refusal_in_an_asgi_traceback_is_one_requests() -> None:
    """BZ1 (019, a false alarm): uvicorn's "Exception in ASGI application" traceback of one request, ending in
    'VLLMValidationError: This model's maximum context length is 8192 tokens. However, you requested 512 output tokens
    and your prompt contains at least 7681 input tokens, for a total of at least 8193 tokens. …' (0.22's wording), the
    server answering 200s around it: that request's refusal (prompt_too_long, a warning, its 7,681 prompt tokens and
    the 8,192 limit read), never a critical engine error."""
    d = diagnose("eval32bz/019.log")
    assert not critical(d), d["findings"]
    ptl = by_id(d).get("prompt_too_long")
    assert ptl is not None and ptl["severity"] == "warning", d["findings"]
    assert (ptl["data"]["max_prompt_tokens"], ptl["data"]["limit"]) == (7681, 8192), ptl


def test_the_0_22_wording_without_the_output_clause_is_not_misread(tmp_path: Path) -> None:
    """The other side: the numbers are the prompt's, not the output's — a line whose output count is larger than the
    prompt's reads the prompt's count."""
    line = next(x for x in lines("eval32bz/019.log") if "maximum context length" in x)
    log = tmp_path / "swapped.log"
    log.write_text(line.replace("you requested 512 output tokens", "you requested 9000 output tokens") + "\n")
    ptl = by_id(diagnose(log)).get("prompt_too_long")
    assert ptl is not None and ptl["data"]["max_prompt_tokens"] == 7681, ptl


def test_a_serving_engine_below_one_full_length_request_is_no_refused_start() -> None:
    """BZ2 (021, a false alarm): V1 0.8.4, gemma-3 (sliding-window layers), 'GPU KV cache size: 69,904 tokens' and
    'Maximum concurrency for 131,072 tokens per request: 0.53x', then the route table, startup complete and stats lines:
    the engine is up, so no "vLLM refuses to start" (max_model_len_exceeds_kv_cache); the low concurrency stays named."""
    d = diagnose("eval32bz/021.log")
    assert not critical(d), d["findings"]
    assert "max_model_len_exceeds_kv_cache" not in by_id(d), d["findings"]
    assert "low_max_concurrency" in by_id(d), d["findings"]


def test_the_same_kv_lines_without_the_engine_up_still_read_the_refusal(tmp_path: Path) -> None:
    """The other side: the same two KV lines alone (no stats, no API server start after them): the refused start."""
    two = [x for x in lines("eval32bz/021.log") if "GPU KV cache size" in x or "Maximum concurrency" in x]
    log = tmp_path / "kv.log"
    log.write_text("\n".join(two) + "\n")
    d = diagnose(log)
    assert "max_model_len_exceeds_kv_cache" in by_id(d), d["findings"]
