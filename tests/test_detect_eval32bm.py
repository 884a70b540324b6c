"""The classes of the blind set eval32bm fixed after its measurement (tests/data/eval32bm/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_a_0_8_1_bare_traceback_of_a_requests_regex_validation_is_that_requests() -> None:
    """BM1 (017): V1 0.8.1's flush-left frames through v1/structured_output/utils.py validate_structured_output_request
    into xgrammar's Grammar.from_regex, ending 'RuntimeError: ... Regex parsing error ...'. 0.8.0 / 0.8.1 kept the
    validator there (0.8.2+ moved it to backend_<name>.py); processor.py's _validate_structured_output calls it while
    processing the request's input, and the server answers that one request with the error. No critical finding, no
    failed launch."""
    d = diagnose("eval32bm/017.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in by_id(d) and "engine_startup_failed" not in by_id(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")


def test_a_bare_v0_engine_process_traceback_cut_at_the_mq_build_call_is_a_failed_start() -> None:
    """BM2 (020): V0 0.8.x's engine process printing its own traceback bare, no record in front of it
    (multiprocessing's _bootstrap -> run -> run_mp_engine's 'raise e' -> 'engine = MQLLMEngine.from_vllm_config('),
    cut after the caret line. run_mp_engine builds the MQLLMEngine there before engine.start(): a raise through that
    line is the engine's failed build, read as under run_mp_engine's ERROR record: engine_startup_failed, phase
    startup, never a crash while serving."""
    d = diagnose("eval32bm/020.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert by_id(d)["engine_startup_failed"]["data"].get("phase") == "startup", d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert [la["status"] for la in d["launches"]] == ["failed"], d["launches"]
