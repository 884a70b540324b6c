"""The classes of the final blind set eval32aj fixed after its measurement (tests/data/eval32aj/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose


@pytest.mark.parametrize(
    "log",
    [
        # WB: gunicorn's '[ERROR] Exception in worker process' after a V0 0.4.3 engine's config (load_wsgi raised)
        "eval32aj/005.log",
        # WF: Xinference's worker traceback through launch_builtin_model, cut above its ERROR line, no vLLM line
        "eval32aj/026.log",
        # WG: Triton's model_lifecycle "failed to load 'vllm_model' version 1" after the backend's initialize raised
        "eval32aj/028.log",
    ],
)
def test_a_hosts_own_word_that_the_launch_failed_is_a_failed_start(log: str) -> None:
    """The program hosting vLLM says the model's launch failed (its worker's boot, its launch, its model load): a
    failed start-up, never a death while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_bare_traceback_of_a_requests_grammar_validation_is_that_requests() -> None:
    """WC: a bare traceback through v1/structured_output/backend_guidance.py validate_guidance_grammar ending in a
    TypeError: vLLM validates each request's grammar while processing its input and answers that request with the
    error. No critical finding, no failed start-up."""
    d = diagnose("eval32aj/010.log")
    assert not critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")


def test_a_request_handlers_record_cut_at_the_end_after_healthy_stats_is_no_crash() -> None:
    """WE: healthy stats lines, then serving_chat.py's ERROR record cut mid-word at the excerpt's end: a request
    handler's record is one request answered with an error; nothing under it says the engine died. At most a warning;
    no crashed launch."""
    d = diagnose("eval32aj/023.log")
    assert not critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert all(la.get("status") not in ("crashed", "failed") for la in d.get("launches") or []), d.get(
        "launches"
    )


def test_a_request_handlers_record_with_the_engines_failure_under_it_still_pages() -> None:
    """The other side of WE (eval32ai 008): serving_chat's 'Error in chat completion stream generator.' whose
    traceback goes on into AsyncLLM's output handler (the engine core's failure re-raised), cut: still critical."""
    d = diagnose("eval32ai/008.log")
    assert critical(d), d["findings"]


def test_verls_rollout_loop_dying_under_vllms_worker_is_the_engines_failure() -> None:
    """WD (016: verl's '(WorkerDict pid=…) Exception in thread Thread-3 (_loop_forever):' and its traceback through
    vllm_rollout_spmd.py's _loop_forever → execute_method → inference_engine.execute_method, cut before the
    exception): the loop that runs the vLLM executor's calls on vLLM's worker catches nothing, so the thread ended
    and the executor waits on it: a critical failure, phase unknown (start-up's calls run there too)."""
    d = diagnose("eval32aj/016.log")
    assert critical(d), d["findings"]
    frame = next(
        x for x in (DATA / "eval32aj" / "016.log").read_text().splitlines() if "in _loop_forever" in x
    )
    f = hosted.frame(frame.split(") ", 1)[1].strip(), RunState(shutdown=False, stats_seen=False))
    assert f is not None and f.details["phase"] == "unknown" and f.details["frame"] == "_loop_forever"
    other = frame.replace("_loop_forever", "_loop")  # another function of the same file is not the loop
    assert hosted.frame(other.split(") ", 1)[1].strip(), RunState(shutdown=False, stats_seen=False)) is None
