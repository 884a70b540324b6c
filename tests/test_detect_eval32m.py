"""The misses of issue 32's thirteenth blind set (tests/data/eval32m/RESULTS.md), each on its real excerpt. Sources
in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import failures, triton
from observe.parse.failtypes import RunState
from tests.diagnosekit import critical
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def _records(name: str, needle: str) -> list[str]:
    """The messages of the excerpt's ERROR records that hold ``needle`` (after the '[file:line] ' prefix)."""
    lines = (DATA / "eval32m" / name).read_text().splitlines()
    return [ln.split("] ", 1)[1] for ln in lines if ln.startswith("ERROR") and needle in ln]


def test_a_safetensors_lookup_retried_at_start_up_is_no_failure() -> None:
    """AO (015: V1 0.9.2, '[config.py:130] Error retrieving safetensors: … retrying 1 of 2' then the last try's
    '[config.py:128] Error retrieving safetensors: …', start-up going on): transformers_utils/config.py's with_retry
    logs each failed try at ERROR, and try_get_safetensors_metadata catches the last one's raise (returns None). No
    critical finding, no engine_error."""
    d = _diagnose(DATA / "eval32m" / "015.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in {f["id"] for f in d["findings"]}
    msgs = _records("015.log", "Error retrieving safetensors")
    assert len(msgs) == 2 and msgs[0].endswith("retrying 1 of 2")
    assert all(failures.error_line(m, RunState(False, False)) is None for m in msgs)


def test_a_file_list_lookup_whose_retries_ran_out_is_still_read() -> None:
    """with_retry's last try logs '<what>: <error>' and raises; for 'Error retrieving file list' (list_repo_files)
    nothing catches it, so that record stays an error record (the catch-all's raw material); its tries before
    ('…, retrying 1 of 2') are not. The error is 015's own; the wording is with_retry's format ('%s: %s')."""
    safetensors = _records("015.log", "Error retrieving safetensors")
    last, retry = (m.replace("safetensors", "file list") for m in (safetensors[1], safetensors[0]))
    failed = failures.error_line(last, RunState(False, False))
    assert failed is not None and failed.kind == "error_line"
    assert failures.error_line(retry, RunState(False, False)) is None


def test_tritons_vllm_backend_failing_to_start_the_engine_is_a_failed_start() -> None:
    """AP (024: Triton's glog lines around two vLLM INFO lines, then 'E1216 … model.py:248] "[vllm] Failed to start
    engine: NoneType: None\\n"' and pb_stub's 'Failed to initialize Python stub: TypeError:
    build_async_engine_client_from_engine_args() got an unexpected keyword argument …', cut): the backend's
    _init_engine logs that only when the engine thread passed back an exception before the engine existed, so the
    engine never started: a critical start-up failure, the launch failed."""
    d = _diagnose(DATA / "eval32m" / "024.log")
    crit = critical(d)
    assert crit and all(f["id"] in ("engine_startup_failed", "engine_error") for f in crit), d["findings"]
    assert all(f["data"].get("phase") == "startup" for f in crit), crit
    assert "[vllm] Failed to start engine" in crit[0]["evidence"]
    assert d["launches"][-1]["status"] == "failed"


def test_the_backends_line_after_a_requested_stop_is_no_failure() -> None:
    """The same line read after a requested stop tells nothing (the stop's noise, as for Ray's lines)."""
    line = next(
        ln for ln in (DATA / "eval32m" / "024.log").read_text().splitlines() if "Failed to start" in ln
    )
    assert triton.death(line, RunState(False, False)) is not None
    assert triton.death(line, RunState(True, False, requested=True)) is None


def test_engine_step_cancelled_is_the_engine_loops_iteration_timeout() -> None:
    """AN (014: V0 ~0.5.0, 'ERROR:    Exception in ASGI application' then a traceback through async_llm_engine.py's
    engine_step → step_async → execute_model_async → multiproc_gpu_executor's _driver_execute_model_async, ending
    asyncio.exceptions.CancelledError): in 0.5.0 only run_engine_loop's wait_for(engine_step(),
    ENGINE_ITERATION_TIMEOUT_S) cancels engine_step, and then the engine is errored. Failing, while serving."""
    d = _diagnose(DATA / "eval32m" / "014.log")
    crit = critical(d)
    assert crit and crit[0]["id"] == "engine_error" and crit[0]["data"]["phase"] == "serving", d["findings"]
    assert "iteration timeout" in crit[0]["evidence"]
    assert "engine_startup_failed" not in {f["id"] for f in d["findings"]}


def test_a_client_disconnects_cancelled_error_is_still_no_failure() -> None:
    """A CancelledError under no engine_step frame (eval32k 014: starlette's client-disconnect traceback after a 200)
    is a client gone, not the engine: no finding. (eval32m 017 / 018, starlette's and FastChat's copies of one, hold
    no line vLLM wrote and stay refused: tests/rules/test_findings_doc.py.)"""
    assert "CancelledError" in (DATA / "eval32k" / "014.log").read_text()
    assert not _diagnose(DATA / "eval32k" / "014.log")["findings"]
