"""The misses of issue 32's seventeenth blind set (tests/data/eval32q/RESULTS.md), each on its real excerpt. Sources
in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.failures.kinds import FailureKind
from observe.parse import failures, frames
from observe.parse.envelope import Ctx
from observe.parse.failures import RunState
from tests.diagnosekit import critical, record_message
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def test_a_tool_parsers_caught_error_is_that_requests_not_the_engines() -> None:
    """DA (012: V1 0.11.0, a 200 OK then '[hermes_tool_parser.py:157] Error in extracting tool call from response.'
    and its traceback, cut): the tool parsers' extract_tool_calls catch the exception, log it and answer the text
    without tool calls (hermes_tool_parser.py, 0.9.2 and 0.32): no critical finding, no engine_error."""
    d = _diagnose(DATA / "eval32q" / "012.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in {f["id"] for f in d["findings"]}


def test_the_streaming_parsers_caught_error_is_read_the_same() -> None:
    """The streaming twin in the same parsers ('Error trying to handle streaming tool call.', which skips that
    delta) is one request's too; an error record that only mentions a tool call is not."""
    msg = record_message("eval32q/012.log", "Error in extracting tool call")
    streaming = msg.replace("in extracting tool call from response", "trying to handle streaming tool call")
    ctx = Ctx("012.log", 2, level="ERROR", logger_file="hermes_tool_parser.py", logger_line=157)
    for m in (msg, streaming):
        f = failures.failure(m, ctx, RunState(False, False))
        assert f is not None and f.kind == FailureKind.REQUEST_ERROR, (m, f)
    other = failures.failure("Error building the tool call schema", ctx, RunState(False, False))
    assert other is None or other.kind != FailureKind.REQUEST_ERROR


def test_a_platform_plugins_frames_are_the_engines() -> None:
    """DB (020: vLLM Ascend 0.7.3, V1, 'ERROR … core.py:291]' records cut in Qwen2.5-VL's vision tower, their only
    named source file vllm_ascend/models/qwen2_5_vl.py): core.py:291 is run_engine_core's 'EngineCore hit an
    exception' handler, so the engine core died. A hardware plugin's package (vllm_ascend) runs inside vLLM's engine
    core in place of vLLM's own model code, so its frames are the engine's: a critical failure, its phase unknown."""
    d = _diagnose(DATA / "eval32q" / "020.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_error"], d["findings"]
    assert crit[0]["data"].get("phase") == "unknown"
    frame = record_message("eval32q/020.log", "vllm_ascend/models")
    m = frames.vllm_frame(frame)
    assert m is not None and m.group("func") == "forward"
    # a folder that is not vLLM's nor one of its plugins' still names no vLLM frame
    assert frames.vllm_frame(frame.replace("vllm_ascend", "my_ascend")) is None


def test_a_failed_steps_dump_is_a_serving_engines_failure() -> None:
    """Not a miss of the labels, which ask no phase: 002 (a worker's traceback, then dump_input's 'Dumping scheduler
    stats: SchedulerStats(num_running_reqs=809, …' cut) and 025 (a lone 'Dumping input data for V1 LLM engine …'
    record, hard-wrapped) were read as failing at start-up. The engine core dumps a step's input only when that step's
    model execution raised (dump_engine_exception, 0.9.2 → 0.32), i.e. while serving."""
    for name in ("002.log", "025.log"):
        crit = critical(_diagnose(DATA / "eval32q" / name))
        assert crit and all(f["data"].get("phase") == "serving" for f in crit), (name, crit)
    f = failures.error_line(record_message("eval32q/002.log", "Dumping"), RunState(False, False))
    assert f is not None and f.details["phase"] == "serving"
