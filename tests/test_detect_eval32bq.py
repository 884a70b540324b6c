"""The classes of the blind set eval32bq fixed after its measurement (tests/data/eval32bq/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from observe.parse import headless
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, critical, diagnose


@pytest.mark.parametrize(
    "log",
    [
        # BQ1: V1 0.11's EngineCore record through multiproc_executor.py wait_for_ready, then the raw process traceback
        "eval32bq/005.log",
        # vLLM-Kunlun (~0.15): the same record's frame line 'multiproc_executor.py ... in wait_for_ready'
        "eval32bd/027.log",
        # vllm-omni's StageEngineCoreProc: the source line 'self.workers = WorkerProc.wait_for_ready(unready_workers)'
        "eval32bc/013.log",
    ],
)
def test_the_executor_waiting_for_its_workers_to_answer_ready_is_the_start(log: str) -> None:
    """BQ1: WorkerProc.wait_for_ready runs only in MultiprocExecutor._init_executor, under the engine core's
    construction; its 'WorkerProc initialization failed due to an exception in a background process.' is a worker that
    died before it was ready: the failed start-up, never a crash while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_dump_input_record_cut_to_its_first_word_is_a_step_that_failed_while_serving() -> None:
    """BQ3 (016): '(EngineCore_0 …) ERROR … [dump_input.py:69] Dumping', cut. vLLM's dump_input.py logs only inside
    dump_engine_exception, which only the engine core's failed model execution calls (execute_model_with_error_logging
    under step / step_with_batch_queue, read in 0.11.0's wheel): the engine's error while serving, never start-up."""
    d = diagnose("eval32bq/016.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    f = by_id(d)["engine_error"]
    assert f["data"]["phase"] == "serving" and "(startup)" not in f["title"], f
    assert "prompt_too_long" not in by_id(d), d["findings"]


def test_the_middle_of_an_engine_cores_raw_traceback_is_its_cut_error() -> None:
    """BQ2 (017): the EngineCore_DP0 process's raw traceback with its head and its exception line cut off, the first
    line starting mid-prefix ('ngineCore_DP0 pid=…)   File ".../vllm/vllm_flash_attn/ops/triton/rotary.py" … in
    apply_rotary'), then triton's jit.py frames: the engine core's cut error, phase unknown."""
    d = diagnose("eval32bq/017.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    f = by_id(d)["engine_error"]
    assert f["data"]["phase"] == "unknown", f["data"]
    assert "engine_crashed" not in by_id(d) and "engine_startup_failed" not in by_id(d), d["findings"]


class _Ctx:
    def __init__(self, pid: int | None = 7, process: str | None = "EngineCore_DP0") -> None:
        self.pid, self.rank, self.process = pid, None, process


_RUN = RunState(shutdown=False, stats_seen=False)
_VLLM = 'File "/x/site-packages/vllm/v1/worker/gpu_model_runner.py", line 1, in execute_model'
_TRITON = 'File "/x/site-packages/triton/runtime/jit.py", line 2, in run'
_TORCH = 'File "/x/site-packages/torch/nn/modules/module.py", line 3, in _call_impl'


def test_a_headless_run_tells_at_its_third_frame_without_waiting() -> None:
    """Live hazard: the reading comes on the third frame's own line (nothing waits for a next one), once."""
    h = headless.Headless()
    got = [h.line(x, _Ctx(), _RUN, False) for x in (_VLLM, "    out = f(x)", _TRITON, _TORCH, _TRITON, _VLLM)]
    assert [g is not None for g in got] == [False, False, False, False, True, False], got
    assert got[4] is not None and got[4].details["phase"] == "unknown"


@pytest.mark.parametrize(
    "lines",
    [
        [_VLLM],  # one stray frame line
        [_VLLM, _TRITON],  # two
        [_TORCH, _TORCH, _TORCH, _TRITON],  # no frame of vLLM's own among the three read
        [
            "Traceback (most recent call last):",
            _VLLM,
            _TRITON,
            _TRITON,
        ],  # headed: frames.RawTracebacks' reading
        # a folder merely named vllm (a conda env's) is not vLLM's package (eval32bb 017: starlette's frames)
        [
            'File "/h/envs/vllm/lib/python3.12/site-packages/starlette/routing.py", line 1, in app',
            _TRITON,
            _TRITON,
        ],
    ],
)
def test_a_headless_run_is_read_narrowly(lines: list[str]) -> None:
    h = headless.Headless()
    assert all(h.line(x, _Ctx(), _RUN, False) is None for x in lines)


def test_a_process_whose_raw_line_told_something_is_not_read_again() -> None:
    """A raw line of the process that told something (its own reading): its frames after it are that traceback's."""
    h = headless.Headless()
    assert h.line("self.engine_core = EngineCoreClient.make_async_mp_client(", _Ctx(), _RUN, True) is None
    assert all(h.line(x, _Ctx(), _RUN, False) is None for x in (_VLLM, _TRITON, _VLLM, _VLLM))


def test_frames_with_no_process_prefix_or_after_a_stop_are_not_read() -> None:
    bare = headless.Headless()
    assert all(
        bare.line(x, _Ctx(pid=None, process=None), _RUN, False) is None for x in (_VLLM, _TRITON, _VLLM)
    )
    stop = headless.Headless()
    asked = _RUN._replace(requested=True)
    assert all(stop.line(x, _Ctx(), asked, False) is None for x in (_VLLM, _TRITON, _VLLM))
