"""The classes of the blind set eval32bb fixed after its measurement (tests/data/eval32bb/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosekit import DATA, by_id, critical, diagnose


def _no_failure(d: dict) -> None:
    assert not critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d) and "engine_startup_failed" not in by_id(d), d["findings"]
    assert all(la.get("status") not in ("crashed", "failed") for la in d.get("launches") or []), d.get(
        "launches"
    )


def test_a_chat_handlers_own_record_cut_before_its_exception_is_one_requests_error() -> None:
    """BB6 (020): serving_chat.py's ERROR record from its header on, its outermost frame create_chat_completion (the
    handler whose except logged it: 'Error in preprocessing prompt inputs', the line the paste left out), cut in
    _make_request_with_harmony: one request answered with an error, not the engine's failure."""
    _no_failure(diagnose("eval32bb/020.log"))


def test_the_same_record_of_another_real_log_from_its_header_on_is_one_requests_error(tmp_path: Path) -> None:
    """BB6's second excerpt: eval32ai 029's serving_chat.py record ('Error in preprocessing prompt inputs', vLLM 0.8)
    read from its traceback's header on (its message line left out, as 020's paste left it): still one request's."""
    lines = (DATA / "eval32ai/029.log").read_text().splitlines(keepends=True)
    assert "Error in preprocessing prompt inputs" in lines[0] and "Traceback (most recent" in lines[1]
    log = tmp_path / "headless.log"
    log.write_text("".join(lines[1:]))
    _no_failure(diagnose(log))


def test_a_bare_traceback_through_the_servers_prompt_tokenizing_is_one_requests_error() -> None:
    """BB6 (021): a bare traceback through serving_engine.py's _tokenize_prompt_input_or_inputs (OpenAIServing
    tokenizing one request's prompt, called only from a request handler) into lmcache_vllm's injection, ending in an
    AttributeError: that request's error, not a failed start-up."""
    _no_failure(diagnose("eval32bb/021.log"))


@pytest.mark.parametrize(
    "log",
    [
        # serving_chat's stream generator record whose traceback goes on into AsyncLLM's output handler
        "eval32ai/008.log",
        "eval32k/005.log",
        # a bare request traceback through create_chat_completion into V0's engine generate
        "eval32i/022.log",
        # OpenAIServingChat built at the API server's start-up (serving_engine.py __init__), not a request
        "eval32ay/006.log",
    ],
)
def test_the_engines_failure_through_the_same_files_still_pages(log: str) -> None:
    """The other side of BB6: records and tracebacks through serving_chat.py / serving_engine.py that hold the engine's
    failure (its frames under the handler, or the server's construction) stay critical."""
    assert critical(diagnose(log))
