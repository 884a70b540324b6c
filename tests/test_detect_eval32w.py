"""The misses of issue 32's blind set eval32w (tests/data/eval32w/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import accel, envelope, frames
from observe.parse.failtypes import RunState
from tests.diagnosekit import critical
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data" / "eval32w"


def _one_critical(log: str, fid: str, phase: str, needle: str, absent: set[str]) -> dict:
    """The excerpt's diagnosis, asserting its critical findings are all ``fid`` at ``phase``, the first quoting
    ``needle``, and none of ``absent`` among its findings."""
    d = _diagnose(DATA / log)
    crit = critical(d)
    assert crit and {f["id"] for f in crit} == {fid}, d["findings"]
    assert crit[0]["data"]["phase"] == phase and needle in crit[0]["evidence"], crit[0]
    assert not {f["id"] for f in d["findings"]} & absent, d["findings"]
    return d


def test_neuron_compiler_failure_under_skypilots_task_prefix_is_a_failed_start() -> None:
    """JA (007: vLLM's Neuron backend under SkyPilot, '(task, pid=34615)' on every line, the launcher waiting for the
    API server, then 'ERROR ||NEURON_CC_WRAPPER||: Failed compilation with ['neuronx-cc', …' cut): SkyPilot's
    '(task, pid=N)' is a process prefix, and the Neuron compiler's failure in a prefixed process is the start's
    failure (the model is compiled while the engine is built). Not a CUDA out-of-memory."""
    _one_critical("007.log", "engine_startup_failed", "startup", "NEURON_CC_WRAPPER", {"cuda_oom"})
    m = envelope.PROC_RE.match("(task, pid=34615) root = /opt")
    assert m is not None and m.group("pid") == "34615" and m.group("name") == "task"


def test_a_bare_neuron_or_cann_line_is_anybodys() -> None:
    """The accelerators' own lines tell only under a process prefix: bare, they are any program's."""
    run = RunState(False, False)
    line = (DATA / "007.log").read_text().splitlines()[-1].split(") ", 1)[1]
    assert accel.death(line, run, prefixed=False) is None
    assert accel.death(line, run, prefixed=True) is not None


def test_torch_compile_frames_in_enginecores_headless_records_are_a_failed_start() -> None:
    """JB (011: V1 ~0.8.1, 'ERROR … [core.py:340]' records holding only frames of torch.compile's AOTAutograd and
    Inductor, no header, no exception line): vLLM compiles its model while the engine starts, so the engine core's
    record cut inside torch.compile is a critical start-up failure, never a death while serving."""
    d = _diagnose(DATA / "011.log")
    crit = critical(d)
    assert crit and all(f["data"].get("phase") == "startup" for f in crit), d["findings"]
    assert "engine_crashed" not in {f["id"] for f in d["findings"]}


def test_torch_compile_frames_printed_bare_are_not_vllms() -> None:
    """A torch.compile frame told only in one of vLLM's records (a logger file): printed bare it is any program's."""
    frame = '  File "/opt/conda/lib/python3.10/site-packages/torch/_inductor/compile_fx.py", line 1741, in fw_compiler_base'
    run = RunState(False, False)
    assert frames.cut_frame(frame, run) is None
    f = frames.cut_frame(frame, run, "core.py")
    assert f is not None and f.details["phase"] == "startup"


def test_a_hosts_record_of_background_loop_errored_is_the_engines_death_while_serving() -> None:
    """JC (018: Xinference's 'ERROR    [address=…, pid=77] Background loop has errored already.' on a chat request,
    its traceback through the xoscar actor): AsyncEngineDeadError's own text — V0's start_background_loop raises it
    only once its loop errored, after it ran — so the engine died while serving; not a failed start."""
    _one_critical("018.log", "engine_crashed", "serving", "Background loop", {"engine_startup_failed"})


def test_canns_device_open_errors_in_the_engine_core_are_a_failed_start() -> None:
    """JD (019: vllm-ascend on a 310P3, '(EngineCore pid=118)' lines of CANN's runtime: 'rtGetDeviceCount execution
    failed', 'get device count failed, runtime result = 507899.', 'set default device id failed'): the NPU cannot
    be opened, so no engine starts; no GPU-memory lever is suggested."""
    _one_critical(
        "019.log", "engine_startup_failed", "startup", "rtGetDeviceCount", {"cuda_oom", "gpu_memory_busy"}
    )


def test_rays_actor_died_under_a_vllm_hosts_frame_is_the_engines_death() -> None:
    """JE (021: verl's traceback through ``vllm_rollout/vllm_async_server.py … in sleep`` ending in
    'ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.', worker exit
    SYSTEM_ERROR): a remote call on an actor already built died under the framework's vLLM host, so a process of the
    engine is gone after its start-up; not a CUDA out-of-memory."""
    _one_critical(
        "021.log", "engine_crashed", "serving", "ActorDiedError", {"cuda_oom", "engine_startup_failed"}
    )


def test_an_actor_died_under_no_vllm_hosts_frame_is_anybodys() -> None:
    """The same traceback with its host frame renamed out of a vLLM host's module: Ray's ActorDiedError alone is any
    Ray program's, and nothing of vLLM's is left to read."""
    text = (
        (DATA / "021.log").read_text().replace("vllm_rollout/vllm_async_server.py", "rollout/async_server.py")
    )
    raw = frames.RawTracebacks()
    run = RunState(False, False)
    told = [
        raw.line(ln, (None, None), ln.startswith("ray.exceptions."), run, None) for ln in text.splitlines()
    ]
    assert not [f for f in told if f is not None]
    host = frames.RawTracebacks()
    orig = (DATA / "021.log").read_text().splitlines()
    seen = [host.line(ln, (None, None), ln.startswith("ray.exceptions."), run, None) for ln in orig]
    assert [f.kind for f in seen if f is not None] == ["engine_crashed"]
