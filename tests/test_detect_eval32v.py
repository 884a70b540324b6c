"""The misses of issue 32's late blind set eval32v (tests/data/eval32v/RESULTS.md), each on its real excerpt. Sources
in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import critical
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data" / "eval32v"


def test_a_tool_parsers_own_error_record_is_one_requests() -> None:
    """ID (012: V1 0.9.2, '[hermes_tool_parser.py:370] Traceback (most recent call last):' and its first frame in
    extract_tool_calls_streaming, cut): the record's site is the tool parser's except (0.9.2 and 0.32:
    logger.exception("Error trying to handle streaming tool call."), then the delta is skipped): one streamed
    response's, the engine serves on. No critical finding, no engine_error from its vLLM frame."""
    d = _diagnose(DATA / "012.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in {f["id"] for f in d["findings"]}
    assert "hermes_tool_parser.py:370]" in (DATA / "012.log").read_text()


def test_an_error_record_elsewhere_with_the_same_kind_of_frame_is_still_read() -> None:
    """The gate is the record's site, not the frame: 017's records are the API server's (serving.py:825) over
    vLLM's own frames, the engine dead: still critical."""
    d = _diagnose(DATA / "017.log")
    assert {f["id"] for f in critical(d)} == {"engine_crashed"}, d["findings"]


def test_rays_terminate_handler_stack_in_a_vllm_ray_worker_is_its_abort() -> None:
    """IB (007: V0 0.4.2 under Ray, '(RayWorkerWrapper pid=54163) …/_raylet.so(+0x101cf38) [0x7fa623b3cf38]
    ray::TerminateHandler()' and the frames to boost's thread_pool, cut above its 'Unhandled exception' line):
    Ray's logging.cc TerminateHandler logs the exception, then ray::StackTrace() — this stack — then std::abort():
    that vLLM Ray worker is gone. A critical engine error; no memory lever."""
    d = _diagnose(DATA / "007.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_error"], d["findings"]
    assert "ray::TerminateHandler()" in crit[0]["evidence"] and crit[0]["data"]["phase"] == "unknown"
    assert "--gpu-memory-utilization" not in str(d.get("recommendations"))


def test_a_terminate_handler_frame_without_a_process_prefix_is_anybodys() -> None:
    """Bare (no process prefix), the same frame could be any Ray program's: not read."""
    line = next(ln for ln in (DATA / "007.log").read_text().splitlines() if "ray::TerminateHandler()" in ln)
    bare = line.split(") ", 1)[1]
    run = RunState(False, False)
    assert hosted.death(bare, run, prefixed=False) is None
    f = hosted.death(bare, run, prefixed=True)
    assert f is not None and f.details["phase"] == "unknown"
