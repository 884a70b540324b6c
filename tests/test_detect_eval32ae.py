"""Fixes for the blind set eval32ae's misses (tests/data/eval32ae/RESULTS.md), each on its real excerpt and on the
neighbour it must not disturb. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from observe.parse.envelope import json_object
from tests.diagnosekit import DATA, by_id, critical, diagnose
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


def test_nims_json_record_cut_in_its_launchers_traceback_is_a_failed_launch() -> None:
    """RA: NVIDIA NIM logs JSON records; the launcher's ERROR record carries its traceback in exc_info (runpy's
    _run_module_as_main -> vllm_nvext's launch.py main -> prepare_environment), and the paste cuts the record
    mid-line. Read up to the cut, as Python printed it: the launch died (phase unknown), never a crash while
    serving."""
    d = diagnose("eval32ae/019.log")
    err = by_id(d).get("engine_error")
    assert err and err["severity"] == "critical" and err["data"]["phase"] == "unknown", d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "seg,rec",
    [
        (
            '{"level": "ERROR", "exc_info": "Traceback (most recent call last):\\n  File \\"/a',
            {"level": "ERROR"},
        ),
        ('{"message": "x\\u00', {"message": "x"}),
        ('{"message": "x\\', {"message": "x"}),
        ('{"message": "x\\\\', {"message": "x\\"}),
    ],
)
def test_a_json_record_cut_inside_a_string_is_read_up_to_the_cut(seg: str, rec: dict) -> None:
    got = json_object(seg)
    assert got is not None and all(got[k] == v for k, v in rec.items()), got


def test_a_json_record_cut_outside_a_string_is_not_read() -> None:
    assert json_object('{"level": "ERROR", "line_number": 12') is None


def test_the_lone_gguf_mapping_refusal_is_vllms_failed_start() -> None:
    """vLLM's GGUF loader raises 'Failed to map GGUF parameters (N): [...]' when it cannot name a file's tensors;
    the line alone (its first letter lowered by the paste) is vLLM's refusal while loading the model: a failed
    start-up, not anybody's RuntimeError of an unknown phase (015, which the host-only reading already reports)."""
    d = diagnose("eval32ae/015.log")
    err = by_id(d).get("engine_error")
    assert err and err["severity"] == "critical" and err["data"]["phase"] == "startup", d["findings"]


def test_another_lone_runtime_error_line_stays_anybodys(tmp_path: Path) -> None:
    """Any Python program prints a RuntimeError: alone and bare, it is read as the host's failure, phase unknown."""
    log = tmp_path / "x.log"
    log.write_text("RuntimeError: failed to map parameters (18288)\n")
    err = by_id(diagnose(log)).get("engine_error")
    assert err and err["data"]["phase"] == "unknown", err


def test_torchserves_worker_traceback_into_the_hubs_http_error_is_a_failed_start(tmp_path: Path) -> None:
    """RC (030: TorchServe's vLLM example, each line behind '[ISO] [INFO ] W-9000-model_1.0-stdout MODEL_LOG - ', the
    worker's traceback through huggingface_hub's get_hf_file_metadata → _request_wrapper → 'hf_raise_for_status(
    response)', cut; no line vLLM wrote): the Hub answered a file of the model with an HTTP error while the worker
    loaded it — the model's load, its engine's start, failed: a critical start-up failure, not a death while
    serving."""
    d = diagnose("eval32ae/030.log")
    assert failing(d) and critical(d), d["findings"]
    assert [(f["id"], f["data"]["phase"]) for f in d["findings"]] == [("engine_startup_failed", "startup")]
    # the same traceback not behind TorchServe's worker (anybody's script fetching from the Hub) is not read
    bare = [
        ln.split(" MODEL_LOG - ", 1)[1] for ln in (DATA / "eval32ae" / "030.log").read_text().splitlines()
    ]
    path = tmp_path / "030-bare.log"
    path.write_text("\n".join(bare) + "\n")
    with pytest.raises(InputError, match="no vLLM log lines"):
        diagnose(path)
