"""The classes of the blind set eval32ap fixed after its measurement (tests/data/eval32ap/RESULTS.md), on their real
excerpts. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from observe.failures.kinds import FailureKind
from observe.parse import failures, loopexit
from observe.parse.envelope import Ctx
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, critical, diagnose, suggestions


@pytest.mark.parametrize(
    ("log", "tokens", "length"),
    [
        # AP4: verl's driver line in a Markdown backtick span (redacted whole: the quoted text holds no number)
        ("eval32ap/026.log", 8192, 9216),
        # AP4: pydantic's 'ValidationError: 1 validation error for SchedulerConfig' header quoted as the text
        ("eval32ap/027.log", 8192, 131072),
        # the 'Value error,' line alone (the quoted text holds the numbers): the same levers as before
        ("eval32ap/028.log", 4096, 32768),
    ],
)
def test_the_batched_tokens_check_suggests_its_levers_from_the_parsed_numbers(
    log: str, tokens: int, length: int
) -> None:
    """SchedulerConfig's "max_num_batched_tokens (B) is smaller than max_model_len (L)": the numbers the parser read
    reach the advisor whatever the finding quotes, so it offers each value that passes the check."""
    d = diagnose(log)
    f = by_id(d).get("launch_rejected")
    assert critical(d) and f is not None, d["findings"]
    assert (f["data"]["max_num_batched_tokens"], f["data"]["max_model_len"]) == (tokens, length)
    s = suggestions(d)
    assert s.get("--max-num-batched-tokens") == [length], s
    assert s.get("--enable-chunked-prefill") == [True], s
    assert s.get("--max-model-len") == [tokens], s


def test_a_requests_processor_error_while_serving_is_not_the_engines() -> None:
    """AP1 (eval32ap 004): V0 0.8.5's serving_chat "Error in chat completion stream generator." (the server was
    serving) and its traceback, each line behind a bare "[serving_chat.py:885] " (level and time lost), ending in
    the client's re-raise of the multi-modal processor's "Failed to apply Qwen2_5_VLProcessor on data=..." for that request's
    image: one request's input error while serving, the engine untouched."""
    d = diagnose("eval32ap/004.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]


def test_the_processor_error_is_a_requests_only_once_the_server_served() -> None:
    """The processor's refusal is a request's only once the server served (before, the start-up's own dummy inputs
    raise it: left to the other rows)."""
    line = "RuntimeError: Failed to apply Qwen2_5_VLProcessor on data={} with kwargs={}"
    served = failures.failure(line, Ctx("x", 1), RunState(shutdown=False, stats_seen=True))
    assert served is not None and served.kind == FailureKind.REQUEST_ERROR
    starting = failures.failure(line, Ctx("x", 1), RunState(shutdown=False, stats_seen=False))
    assert starting is None or starting.kind != FailureKind.REQUEST_ERROR


def test_a_traceback_that_left_the_event_loops_run_forever_is_a_stop() -> None:
    """AP2 (eval32ap 011): the vllm console script's traceback cut in uvloop's Loop.run_forever (under
    run_until_complete), after torch's exit warning: only KeyboardInterrupt and SystemExit leave the loop (uvloop's
    Handle._run re-raises just those, the rest goes to the loop's exception handler), here SIGTERM's
    KeyboardInterrupt("terminated") that vLLM's API server raises while it starts. No failure is reported."""
    d = diagnose("eval32ap/011.log")
    assert not critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_start_ups_exception_through_the_main_task_stays_a_failure() -> None:
    """eval32ap 023: the same console script's stack, cut in uvloop's run_until_complete → the coroutine's wrapper
    (``return future.result()``: the task's own exception, vLLM's failed start) is not a stop."""
    d = diagnose("eval32ap/023.log")
    assert critical(d), d["findings"]


def test_only_the_loops_run_forever_frame_is_read_as_a_stop() -> None:
    assert loopexit.escaped('File "uvloop/loop.pyx", line 1379, in uvloop.loop.Loop.run_forever')
    assert loopexit.escaped('File "/usr/lib/python3.12/asyncio/base_events.py", line 641, in run_forever')
    assert not loopexit.escaped('File "uvloop/loop.pyx", line 1518, in uvloop.loop.Loop.run_until_complete')
    assert not loopexit.escaped('File "/srv/app/worker.py", line 12, in run_forever')
