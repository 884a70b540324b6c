"""The misses of issue 32's fourteenth blind set (tests/data/eval32n/RESULTS.md), each on its real excerpt: failures
that only the program around vLLM tells (Ray, Triton's vLLM backend, Ray Serve, BentoML, KServe). Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import hosted, triton
from observe.parse.failtypes import RunState
from tests.diagnosekit import critical, suggestions
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data" / "eval32n"
_RUN = RunState(False, False)


def _line(name: str, needle: str) -> str:
    return next(ln for ln in (DATA / name).read_text().splitlines() if needle in ln)


def test_a_ray_core_workers_cpp_abort_is_the_engines_failure() -> None:
    """AQ (001: vLLM ~0.1 under Ray, Ray's own glog-style lines ending '[… E 42067 42067] logging.cc:97: Unhandled
    exception: St13runtime_error. what(): NCCL Error 5: invalid usage' and 'Stack trace:'): Ray's terminate handler
    logs that, then the process aborts — the engine's process or one of its workers is gone. Critical, no memory
    lever (NCCL's invalid usage is no OOM)."""
    d = _diagnose(DATA / "001.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_error"], d["findings"]
    assert "NCCL Error 5: invalid usage" in crit[0]["evidence"]
    assert "cuda_oom" not in {f["id"] for f in d["findings"]}
    assert "--gpu-memory-utilization" not in suggestions(d)
    # Ray's own INFO / WARNING lines above it tell nothing
    assert hosted.death(_line("001.log", "core_worker.cc:2673"), _RUN) is None


def test_rays_worker_death_warning_is_the_engines_failure() -> None:
    """AR (010: '[2023-10-30 14:14:35] 2023-10-30 06:14:35,574<TAB>WARNING worker.py:2037 -- A worker died or was
    killed while executing a task by an unexpected system error. … Worker exit type: SYSTEM_ERROR …'): a vLLM Ray
    worker died. Critical; Ray's list of possible causes (the OOM killer among them) is no GPU-memory evidence."""
    d = _diagnose(DATA / "010.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_error"], d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d)
    f = hosted.death(_line("010.log", "SYSTEM_ERROR"), RunState(True, False, True))
    assert f is None  # after a requested stop: a worker ended as asked


def test_tritons_stream_error_is_the_engines_only_when_the_engine_raised() -> None:
    """AS (016: 'E1027 … model.py:502] "[vllm] Error generating stream: \\u001B[36mray::RayWorkerWrapper.execute_method()
    … RaySystemError: System error: No module named 'utils'"'): the backend's generate logs a request's exception
    and answers it with an error; an exception of the engine's Ray workers is every request's: a failure while
    serving. The same line with a request's own error (a bad parameter) is that request's, not read."""
    d = _diagnose(DATA / "016.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_error"], d["findings"]
    assert crit[0]["data"]["phase"] == "serving"
    line = _line("016.log", "Error generating stream")
    assert triton.death(line, _RUN) is not None
    request_own = (
        line.split("Error generating stream:")[0]
        + 'Error generating stream: ValueError: max_tokens must be at least 1"'
    )
    assert triton.death(request_own, _RUN) is None


def test_a_ray_serve_replicas_start_up_task_error_is_a_failed_start() -> None:
    """AT (023: 'ray::ServeReplica:llms:LLMDeployment:qwen2_5-7b-instruct.initialize_and_get_metadata() (pid=40568, …)'
    and replica.py's initialize frame, cut): the replica actor's start-up method, which builds the deployment (Ray
    Serve LLM's vLLM engine), raised — a failed start, the task named with its dashes."""
    d = _diagnose(DATA / "023.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_startup_failed"], d["findings"]
    assert (
        crit[0]["data"]["frame"]
        == "ServeReplica:llms:LLMDeployment:qwen2_5-7b-instruct.initialize_and_get_metadata"
    )
    assert crit[0]["data"]["phase"] == "startup"


def test_a_bentoml_runners_start_up_traceback_is_a_failed_start() -> None:
    """AU (026: '2023-09-09T12:24:15+0800 [ERROR] [runner:llm-baichuan-runner:1] Traceback …' through starlette's
    lifespan → bentoml's on_startup → init_local → _set_handle, cut): init_local builds the runner's runnable (the
    vLLM engine under OpenLLM); a raise there fails the start."""
    d = _diagnose(DATA / "026.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_startup_failed"], d["findings"]
    assert d["launches"][-1]["status"] == "failed"


def test_kserves_failed_model_server_start_is_a_failed_start() -> None:
    """AV (027: huggingface_hub's FutureWarning, then '2024-07-01 07:28:04.488 1 kserve ERROR
    [__main__.py:<module>():254] Failed to start model server: integer division or modulo by zero'): KServe's
    huggingfaceserver could not load the model (its vLLM engine) and exits before it served."""
    d = _diagnose(DATA / "027.log")
    crit = critical(d)
    assert [f["id"] for f in crit] == ["engine_startup_failed"], d["findings"]
    assert "integer division or modulo by zero" in crit[0]["evidence"]
    assert "cuda_oom" not in {f["id"] for f in d["findings"]}
