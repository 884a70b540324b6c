"""The classes of the blind set eval32cb fixed after its measurement (tests/data/eval32cb/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines


def test_a_run_of_identical_404_request_records_is_each_requests_own() -> None:
    """CB1 (011, the false alarm): a 0.15 server's run of identical 'ERROR … [serving.py:231] Error with model
    error=ErrorInfo(message='The model `…` does not exist.', …, code=404)' records (one per request for a model it
    does not serve), 404 access lines between: each record is one request's, standing alone (the same words again at
    the site are the next request's record, not this one going on), so the engine kept serving: a warning, never
    critical; the model name the client sent stays redacted."""
    d = diagnose("eval32cb/011.log")
    assert not critical(d), d["findings"]
    err = by_id(d).get("engine_error")
    assert err is not None and err["severity"] == "warning", d["findings"]
    assert "llama3-3b-instruct" not in str(d), "the client's model name left observe"


def test_a_handler_record_that_goes_on_with_its_traceback_still_is_not_alone(tmp_path: Path) -> None:
    """The other side: the same record followed at its site by other words (its traceback's lines, here an exception
    line, then nothing served) is not one request's lone record: the engine did not serve after it, critical."""
    rec = next(x for x in lines("eval32cb/011.log") if "Error with model" in x)
    head = rec.split("Error with model", 1)[0]
    log = tmp_path / "goes_on.log"
    log.write_text(rec + "\n" + head + "RuntimeError: CUDA error: an illegal memory access was encountered\n")
    d = diagnose(log)
    assert critical(d), d["findings"]
