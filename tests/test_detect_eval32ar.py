"""The classes of the final blind set eval32ar fixed after its measurement (tests/data/eval32ar/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import startonly
from observe.parse.failtypes import RunState
from observe.parse.parser import parse_text
from tests.diagnosekit import by_id, critical, diagnose, suggestions


def test_v0s_engine_dead_text_under_a_hosts_record_is_the_engines_death_while_serving() -> None:
    """AR4 (017: vLLM 0.3's 'Aborted request …', then Xinference's restful_api ERROR record 'Task finished
    unexpectedly. This should never happen! Please open an issue on Github. See stack trace above for the actual
    cause.'): AsyncEngineDeadError's text, raised only by V0's background loop's done-callback
    (_raise_exception_on_finish) once the loop it ran ended: the engine died while serving, not a failed start."""
    d = diagnose("eval32ar/017.log")
    assert critical(d) and by_id(d)["engine_crashed"]["data"]["phase"] == "serving", d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_v0s_engine_dead_text_after_a_requested_stop_is_the_noise_of_stopping() -> None:
    """AR4's other side: the same text after a stop asked for (Ctrl-C) is the loop cancelled on the way out."""
    text = (
        "INFO 03-17 00:26:09 launcher.py:1] Shutting down FastAPI HTTP server.\n"
        "ERROR 03-17 00:26:10 async_llm_engine.py:1] Task finished unexpectedly. This should never happen! "
        "Please open an issue on GitHub. See stack trace above for the actual cause.\n"
    )
    fatal = [e for e in parse_text(text) if getattr(e, "fatal", False)]
    assert not fatal, fatal


def test_canns_device_open_failures_in_a_workers_error_record_are_a_failed_start() -> None:
    """AR2 (010: seven '(RayWorkerWrapper pid=…) ERROR … worker_base.py:572]' lines, V0's execute_method record with
    its head cut, carrying CANN's 'Set visible device failed, invalid device=1', 'open device 1 failed, runtime result
    = 107001.[FUNC:ReportCallError]…', 'Failed to init RawDriver, device_id=1, …[FUNC:Init]…'): the worker could not
    open its NPU, so it and the engine never started; no memory lever, no crash while serving."""
    d = diagnose("eval32ar/010.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)


_OPEN = "open device 1 failed, runtime result = 107001.[FUNC:ReportCallError][FILE:log_inner.cpp][LINE:161]"


def test_canns_device_open_failure_is_read_in_a_record_or_under_a_prefix_never_bare() -> None:
    """AR2's other side: the same CANN line under a worker's process prefix (raw) tells the same; bare, or in a
    WARNING record, it is anybody's program's, not read."""

    def fatal(text: str) -> list:
        return [e for e in parse_text(text) if getattr(e, "fatal", False) or getattr(e, "kind", None)]

    assert fatal(f"(RayWorkerWrapper pid=1) ERROR 02-26 09:45:37 worker_base.py:572]         {_OPEN}\n")
    assert fatal(f"(VllmWorkerProcess pid=7) {_OPEN}\n")
    assert not fatal(f"{_OPEN}\n")
    assert not fatal(f"WARNING 02-26 09:45:37 worker_base.py:1] {_OPEN}\n")


_DSA = "Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."


def test_v0_model_runner_bases_record_of_a_cuda_error_is_a_failed_model_step() -> None:
    """AR3 (016: '(WorkerDict pid=…) WARNING … model_runner_base.py:143] Compile with `TORCH_USE_CUDA_DSA` to enable
    device-side assertions.', the tail of V0's 'Failed to pickle inputs of failed execution: <CUDA error>' record,
    then verl's driver traceback ending 'RayTaskError(RuntimeError): ray::TaskRunner.run()'): model_runner_base.py
    logs only inside dump_input_when_exception's except around execute_model, so the model step raised (a CUDA
    error) and vLLM re-raised it: failing, with no memory lever."""
    d = diagnose("eval32ar/016.log")
    assert critical(d) and by_id(d)["engine_error"]["data"]["method"] == "execute_model", d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)


def test_pytorchs_cuda_advice_is_read_only_in_model_runner_bases_record() -> None:
    """AR3's other side: the same advice line in a record of another file (a warning a program logs of its own) is
    not read as the model step's failure."""
    assert any(
        getattr(e, "fatal", False)
        for e in parse_text(f"(WorkerDict pid=1) WARNING 04-02 16:49:38 model_runner_base.py:143] {_DSA}\n")
    )
    assert not any(
        getattr(e, "fatal", False) for e in parse_text(f"WARNING 04-02 16:49:38 utils.py:12] {_DSA}\n")
    )


_ARCH = (
    "ValueError: Cannot find model module. 'MiniMaxM1ForCausalLM' is not a registered model in the Transformers "
    "library (only relevant if the model is meant to be in Transformers) and 'AutoModel' is not present in the model "
    "config's 'auto_map' (relevant if the model is custom)."
)


def test_resolve_transformers_archs_refusal_is_the_refused_launch() -> None:
    """AR5 (018: the one bare line 'ValueError: Cannot find model module. 'MiniMaxM1ForCausalLM' is not a registered
    model in the Transformers library …'): vLLM's resolve_transformers_arch raises it while the model's class is
    resolved at start-up (no native class, none in transformers nor the repository's auto_map): the launch refused,
    not a crash, no memory lever."""
    d = diagnose("eval32ar/018.log")
    assert critical(d) and "launch_rejected" in by_id(d), d["findings"]
    assert by_id(d)["launch_rejected"]["data"]["reason"] == "unsupported_architecture", d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)


def test_the_architecture_refusal_after_serving_is_not_a_refused_launch() -> None:
    """AR5's other side: once a stats line showed the engine serving, the same text is not read as the launch's
    refusal (the catch-all's exception line is left to say what it can)."""
    stats = (
        "INFO 06-20 10:00:00 metrics.py:1] Avg prompt throughput: 1.0 tokens/s, Avg generation throughput: 1.0 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.0%, CPU KV cache usage: "
        "0.0%.\n"
    )
    kinds = [getattr(e, "kind", None) for e in parse_text(stats + _ARCH + "\n")]
    assert "invalid_config" not in kinds, kinds
    assert "invalid_config" in [getattr(e, "kind", None) for e in parse_text(_ARCH + "\n")]


def test_vllm_ascends_npu_memory_baseline_line_is_the_workers_device_setup() -> None:
    """AR1 (008: a VllmWorkerProcess's ERROR traceback whose head is cut, its first line the source line
    'self.init_npu_memory = NPUPlatform.mem_get_info()[0]', then vllm_ascend/platform.py mem_get_info → torch_npu's
    current_device → _lazy_init, cut): that statement is vllm-ascend's NPU worker's init_device and nowhere else, so
    the worker failed setting its device up at start: the failed start-up, not a crash, no memory lever."""
    d = diagnose("eval32ar/008.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)


def test_v0s_dummy_run_under_profile_run_is_the_failed_start() -> None:
    """AR6 (026: a bare traceback, its head cut, through V0's vllm/worker/model_runner.py _dummy_run → execute_model →
    model_runner_base.py _wrapper, ending 'TypeError: BackendCompilerFailed.__init__() missing 1 required positional
    argument', then the vllm console script's serve traceback, cut): V0's _dummy_run is the dummy batch profile_run
    runs at start-up, so the raise is the failed start, not a crash while serving."""
    d = diagnose("eval32ar/026.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_start_only_lines_are_read_narrowly() -> None:
    """AR1 / AR6's other side: V1's gpu_model_runner.py _dummy_run (run while serving too, for data parallelism's idle
    ranks), the platform's own mem_get_info line, and anything after a requested stop are not read as the start-up."""
    run, stopped = RunState(False, False), RunState(True, False, True)
    v0 = 'File "/x/site-packages/vllm/worker/model_runner.py", line 1347, in _dummy_run'
    v1 = 'File "/x/site-packages/vllm/v1/worker/gpu_model_runner.py", line 2210, in _dummy_run'
    npu = "self.init_npu_memory = NPUPlatform.mem_get_info()[0]"
    f = startonly.frame(v0, run)
    assert f is not None and f.details["before_serving"] and f.details["phase"] == "profiling"
    assert startonly.frame(v1, run) is None
    assert startonly.frame(npu, run) is not None and startonly.frame(npu, stopped) is None
    assert startonly.frame("return torch.npu.mem_get_info()", run) is None
