"""The fallback for a traceback no rule reads (observe.parse.unread, observe.failures.unread): a failing log whose
traceback through vLLM's own code has a shape no rule knows is not reported as healthy, and a healthy log whose
ERROR records hold vLLM frames (a requested stop's traceback) stays healthy. Real excerpts (tests/data/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

from observe import pipeline, report
from observe.model import EngineError
from observe.parse import frames
from observe.parse.parser import parse_text
from tests.evalkit import failing

DATA = Path(__file__).parent / "data"
BUILD_CLIENT = DATA / "excerpts" / "unread-api-server-build-client-cut-vllm-12554.log"
GENERATE = DATA / "excerpts" / "unread-request-generate-cut-vllm-6361.log"
NORMAL = DATA / "vllm-cpu-0.32" / "normal.log"


def _diagnose(path: Path) -> dict:
    return report.to_dict(pipeline.diagnose_paths([path]))


def test_cut_api_server_traceback_is_a_failure_with_what_decides_it() -> None:
    """vllm-project/vllm#12554: the API server's bare traceback cut in build_async_engine_client, no exception line."""
    d = _diagnose(BUILD_CLIENT)
    assert failing(d)
    hits = [f for f in d["findings"] if f["id"] in ("engine_error", "engine_startup_failed")]
    assert hits and hits[0]["severity"] == "critical"
    assert hits[0]["data"]["frame"] == "build_async_engine_client" and hits[0]["data"]["cause_cut_off"]
    assert "exception line" in hits[0]["evidence"]


def test_unread_request_traceback_gives_the_fallback_event_and_finding() -> None:
    """vllm-project/vllm#6361: a request's bare traceback cut in AsyncLLMEngine.generate, a frame no rule knows."""
    events = parse_text(GENERATE.read_text(), str(GENERATE))
    unread = [e for e in events if isinstance(e, EngineError) and e.details.get("unread")]
    assert [e.details["frame"] for e in unread] == ["generate"]
    assert unread[0].details["phase"] == "unknown" and unread[0].details["cut"]
    d = _diagnose(GENERATE)
    (f,) = [f for f in d["findings"] if f["id"] == "engine_error"]
    assert f["severity"] == "critical" and f["data"]["phase"] == "unknown" and f["data"]["cause_cut_off"]
    assert "no rule reads" in f["evidence"] and "/metrics" in f["evidence"]  # what decides cause and phase


def test_requested_stop_traceback_through_vllm_stays_healthy() -> None:
    """The real vllm-cpu 0.32 recording stopped by SIGTERM: its ERROR records hold a traceback through vLLM's
    output_handler / get_output_async, which is the stop's, not a failure."""
    text = NORMAL.read_text()
    assert any(frames.vllm_frame(line) and " ERROR " in line for line in text.splitlines())
    events = parse_text(text, str(NORMAL))
    assert not [e for e in events if isinstance(e, EngineError) and e.details.get("unread")]
    d = _diagnose(NORMAL)
    assert not failing(d)
    assert not [
        f for f in d["findings"] if f["id"] in ("engine_error", "engine_startup_failed", "engine_crashed")
    ]
