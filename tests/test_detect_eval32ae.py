"""Fixes for the blind set eval32ae's misses (tests/data/eval32ae/RESULTS.md), each on its real excerpt and on the
neighbour it must not disturb. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import critical, diagnose
from tests.evalkit import failing

_START = (
    "INFO 11-11 21:10:01 api_server.py:528] vLLM API server version 0.6.3.post1\n"
    "INFO 11-11 21:12:40 launcher.py:27] Route: /v1/chat/completions, Methods: POST\n"
    "INFO:     Application startup complete.\n"
)


def test_a_jinja2_error_under_the_chat_handlers_record_is_one_requests_not_the_engines() -> None:
    """RB: 0.6's serving_chat.py renders the request's chat template inside its try, logs the exception
    (logger.exception 'Error in applying chat template from request') and answers an error response: jinja2's
    exception line under that record, the message cut off, is one request's failure, never an engine error."""
    d = diagnose("eval32ae/029.log")
    assert not failing(d) and not critical(d), d["findings"]


def test_the_chat_template_message_and_its_traceback_leave_a_serving_engine_healthy(tmp_path: Path) -> None:
    """RB's whole record as 0.6.3 prints it, after a start-up, then the 400 it answered."""
    rec = "ERROR 11-11 21:14:55 serving_chat.py:158] "
    log = tmp_path / "vllm.log"
    log.write_text(
        _START
        + rec
        + "Error in applying chat template from request\n"
        + rec
        + "Traceback (most recent call last):\n"
        + rec
        + '  File "/usr/local/lib/python3.12/dist-packages/jinja2/environment.py", line 936, in handle_exception\n'
        + rec
        + "jinja2.exceptions.TemplateSyntaxError: expected token 'end of print statement', got 'name'\n"
        + 'INFO:     10.0.0.1:50436 - "POST /v1/chat/completions HTTP/1.1" 400 Bad Request\n'
    )
    d = diagnose(log)
    assert not failing(d) and not critical(d), d["findings"]


def test_a_jinja2_error_under_another_vllm_record_is_still_the_engines(tmp_path: Path) -> None:
    """Only the server's request handlers answer a template's failure: the same exception under the engine's
    own record stays a critical error."""
    log = tmp_path / "vllm.log"
    rec = "ERROR 11-11 21:14:55 engine.py:160] "
    log.write_text(_START + rec + "jinja2.exceptions.UndefinedError: 'messages' is undefined\n")
    d = diagnose(log)
    assert failing(d), d["findings"]
