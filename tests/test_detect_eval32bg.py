"""The classes of the blind set eval32bg fixed after its measurement (tests/data/eval32bg/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import DATA, by_id, critical, diagnose


def _lines(log: str) -> list[str]:
    return (DATA / log).read_text().splitlines()


def _healthy(d: dict) -> None:
    assert not critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert all(la.get("status") not in ("failed", "crashed") for la in d.get("launches") or []), d.get(
        "launches"
    )


def _kinds(d: dict) -> list[str]:
    return [e["kind"] for e in d["events"]["errors"]]


def test_an_asgi_traceback_cut_at_the_route_decorator_is_one_requests() -> None:
    """BG1 (010): a 2026 API server's uvicorn record 'Exception in ASGI application', its traceback elided down to the
    route decorator's frame (entrypoints/serve/utils/api_utils.py, with_cancellation's ``wrapper``: ``return
    handler_task.result()`` re-raises the one request's handler error, answered 500). The server went on: a warning at
    most, phase serving. (The only real excerpt of this cut form found in the sets and the stored threads.)"""
    d = diagnose("eval32bg/010.log")
    _healthy(d)
    assert by_id(d)["engine_error"]["data"]["phase"] == "serving", d["findings"]


def test_a_frame_below_the_route_decorator_or_no_asgi_record_is_read_as_before(tmp_path: Path) -> None:
    """The other side of BG1 (010): the same record going on into the engine's own frame (V0's engine_step, as eval32ad
    015's ASGI traceback prints it) stays critical, and the decorator's frame with uvicorn's record taken out is read
    as before (a traceback cut in vLLM's code, critical)."""
    step = next(ln for ln in _lines("eval32ad/015.log") if "in engine_step" in ln)
    log = tmp_path / "deeper.log"
    log.write_text("\n".join([*_lines("eval32bg/010.log"), step]) + "\n")
    assert critical(diagnose(log))
    log = tmp_path / "no-asgi.log"
    log.write_text("\n".join(ln for ln in _lines("eval32bg/010.log") if "ASGI" not in ln) + "\n")
    assert critical(diagnose(log))


def test_a_requests_precomputed_embeddings_refused_by_the_schema_is_one_requests() -> None:
    """BG1 (012): the bare 'ValueError: image_embeds has rank 3 but expected 2' (vllm/utils/tensor_schema.py's words,
    the model's ImageEmbeddingInputs refusing a request's precomputed embeddings; only a request carries *_embeds, the
    start-up's profiling feeds dummy raw media): one request's input refused, not a failed launch. (The only real
    excerpt found: the sets and the stored threads hold no other line of it.)"""
    d = diagnose("eval32bg/012.log")
    _healthy(d)
    assert "launch_rejected" not in by_id(d)
    assert _kinds(d) == ["request_error"], d["events"]["errors"]


def test_the_schemas_refusal_in_an_engine_core_or_of_raw_media_stays_critical(tmp_path: Path) -> None:
    """The other side of BG1 (012): the same words as the last line of an engine core's record (its process prefix and
    core.py logger: the engine's step raised) and a schema refusal of a raw-media field (pixel_values, which the
    start-up's dummy inputs carry too) are read as before, critical."""
    text = _lines("eval32bg/012.log")[0]
    log = tmp_path / "core.log"
    log.write_text(f"(EngineCore_DP0 pid=41) ERROR 05-29 20:32:45 [core.py:710] {text}\n")
    assert critical(diagnose(log))
    log = tmp_path / "pixels.log"
    log.write_text(text.replace("image_embeds", "pixel_values") + "\n")
    assert critical(diagnose(log))


def test_a_grammar_rejecting_one_requests_token_ends_that_request_only() -> None:
    """BG2 (014): a flattened paste of xgrammar's 'Failed to advance FSM for request … Please file an issue.'
    (backend_xgrammar.py accept_tokens), the scheduler's 'Unexpected: grammar rejected tokens […] for request ….
    Terminating request.' (update_from_output: that request FINISHED_ERROR), the API server's 'Request … failed with an
    internal error during generation' and its 500: one request ended, the engine goes on. A warning at most, phase
    serving (not start-up). Second real excerpts: 018's scheduler line and 016's FSM lines (quoted without prefixes,
    vllm#42619's rendering), each read as one request's error."""
    d = diagnose("eval32bg/014.log")
    _healthy(d)
    assert by_id(d)["engine_error"]["data"]["phase"] == "serving", d["findings"]
    assert _kinds(d)[:2] == ["request_error", "request_error"], d["events"]["errors"]
    for log in ("eval32bg/016.log", "eval32bg/018.log"):
        d = diagnose(log)
        _healthy(d)
        assert "request_error" in _kinds(d), (log, d["events"]["errors"])


def test_the_engines_death_beside_a_grammar_rejection_stays_critical(tmp_path: Path) -> None:
    """The other side of BG2: 014's lines with the V1 client's record of a dead engine core before them (eval32s 028's
    first line, 'Engine core proc EngineCore_DP1 died unexpectedly') is the engine's crash, as before."""
    log = tmp_path / "died.log"
    log.write_text("\n".join([*_lines("eval32bg/014.log"), _lines("eval32s/028.log")[0]]) + "\n")
    d = diagnose(log)
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]
