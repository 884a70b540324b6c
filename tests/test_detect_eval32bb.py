"""The classes of the blind set eval32bb fixed after its measurement (tests/data/eval32bb/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.parse import mainexit
from observe.parse.failtypes import RunState
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


def test_a_hosts_console_script_traceback_cut_after_vllms_import_lines_is_a_failed_start() -> None:
    """BB4 (013): PaddleX's and vLLM's import-time lines (no platform, libcuda.so.1 missing), then a bare traceback whose
    outermost frame is the paddleocr console script's <module>, cut there: the program that loaded vLLM raised an
    exception nothing caught and exits before serving. Failing, never a crash while serving."""
    d = diagnose("eval32bb/013.log")
    assert critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert {(f.get("data") or {}).get("phase") for f in critical(d)} == {"startup"}, d["findings"]


@pytest.mark.parametrize(
    ("log", "program"), [("eval32y/016.log", "trl"), ("eval32as/022.log", "llamafactory-cli")]
)
def test_other_hosts_console_script_frames_read_only_under_a_header_once_vllm_spoke(
    log: str, program: str
) -> None:
    """BB4's reader on the real outermost frames of two more hosts' tracebacks (TRL's trl, LLaMA-Factory's
    llamafactory-cli): the program's exit once vLLM's lines came in the same stream; not without a header read, not
    when no line was vLLM's (eval32as 022 stays refused, class AS1), not after a requested stop."""
    lines = (DATA / log).read_text().splitlines()
    assert lines[0].startswith("Traceback (most recent call last):")
    frame = lines[1].strip()
    f = mainexit.died(frame, RunState(False, False, False, True), headed=True)
    assert f is not None and f.details["frame"] == f"{program}.<module>" and f.details["phase"] == "startup"
    assert mainexit.died(frame, RunState(False, True, False, True), headed=True).details["phase"] == "unknown"
    assert mainexit.died(frame, RunState(False, False, False, True)) is None
    assert mainexit.died(frame, RunState(False, False), headed=True) is None
    assert mainexit.died(frame, RunState(True, False, True, True), headed=True) is None
