"""The misses of issue 32's blind set eval32o (tests/data/eval32o/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import frames, hosted, raytold
from observe.parse.failures import RunState
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def _errors(d: dict) -> list[dict]:
    return [f for f in d["findings"] if f["id"] in ("engine_error", "engine_startup_failed")]


def test_an_mqllmengine_loop_dying_under_its_frames_is_while_serving() -> None:
    """BA (006: V0 ~0.6.2, 'engine.py:157] RuntimeError: Loading lora … failed', 'The above exception was the direct
    cause …', then frames 'in start' → 'self.run_engine_loop()' → 'in run_engine_loop' → 'self.engine_step()'):
    run_engine_loop runs only on an engine already built, so the exception of its record is a death while serving,
    not a failed start-up, though no stats line came before it."""
    errs = _errors(_diagnose(DATA / "eval32o" / "006.log"))
    assert [(f["id"], f["severity"], f["data"]["phase"]) for f in errs] == [
        ("engine_error", "critical", "serving")
    ]
    assert "Loading lora" in errs[0]["data"]["message"]


def test_mqllmengine_starts_repr_record_is_while_serving() -> None:
    """BA (007: V0 ~0.6.3, 'engine.py:157] RuntimeError('Error in model execution: Loading lora … failed')' then the
    traceback of a LoRA adapter's load, no loop frame in the paste): MQLLMEngine.start logs
    ``logger.exception(repr(e))`` only when its loops raised, after run_mp_engine built the engine (0.6.2 line 157,
    0.6.3 160, 0.10.2 176): a death while serving, the root cause the ValueError."""
    errs = _errors(_diagnose(DATA / "eval32o" / "007.log"))
    assert [(f["id"], f["data"]["phase"]) for f in errs] == [("engine_error", "serving")]
    assert errs[0]["data"]["type"] == "ValueError"


def test_run_mp_engines_record_of_a_failed_build_stays_a_start_up_failure() -> None:
    """The other engine.py record (008: 0.6.x run_mp_engine's 'engine.py:366]' with an empty message, then the bare
    traceback into the executor's construction) logs a failed build (``logger.exception(e)``: str, not repr): it
    stays a start-up failure."""
    errs = _errors(_diagnose(DATA / "eval32o" / "008.log"))
    assert errs and all(f["data"]["phase"] != "serving" for f in errs), errs
    assert errs[0]["id"] == "engine_startup_failed"


def test_a_creation_task_traceback_with_relative_vllm_paths_is_read() -> None:
    """BC (018: OpenRLHF's 'Exception raised in creation task: … ray::LLMRayActor.__init__()', frames indented one
    space with paths relative to the folder holding the package, ' File "vllm/entrypoints/llm.py", line 210, in
    __init__', then 'TypeError: EngineArgs.__init__() got an unexpected keyword argument …'): those frames are
    vLLM's own code, so the traceback is read — a critical failure before the engine served, its root cause the
    TypeError."""
    d = _diagnose(DATA / "eval32o" / "018.log")
    errs = _errors(d)
    assert errs and errs[0]["severity"] == "critical", d["findings"]
    assert errs[0]["data"]["type"] == "TypeError" and errs[0]["data"]["phase"] != "serving"
    assert "engine_crashed" not in {f["id"] for f in d["findings"]}


def test_a_relative_path_is_vllms_only_when_the_package_starts_it() -> None:
    """A relative 'vllm/…' path is vLLM's frame (018's lines), but a folder merely ending in vllm or a module named
    after it (018's own 'openrlhf/trainer/ray/vllm_engine.py') is not."""
    lines = (DATA / "eval32o" / "018.log").read_text().splitlines()
    ours = [ln for ln in lines if ln.startswith(' File "vllm/')]
    assert len(ours) == 2 and all(frames.vllm_frame(ln) for ln in ours)
    theirs = [ln for ln in lines if "openrlhf/" in ln and ln.startswith(" File")]
    assert theirs and not any(frames.vllm_frame(ln) for ln in theirs)
    assert frames.vllm_frame(ours[1].replace('"vllm/', '"myvllm/')) is None


def test_rays_task_error_for_a_vllm_hosts_launch_is_a_failed_start() -> None:
    """BB (017: verl's frames init_hybrid → launch_servers, then 'ray.exceptions.RayTaskError(RuntimeError):
    ray::vLLMHttpServer.launch_server() (pid=27062, …, repr=<verl.workers.rollout.vllm_rollout.vllm_async_server.
    vLLMHttpServer object at …>)', cut): Ray's report, printed by the caller, of a call of the actor hosting vLLM that
    raised; launch_server builds and launches the engine, so the engine never started."""
    d = _diagnose(DATA / "eval32o" / "017.log")
    errs = _errors(d)
    assert [(f["id"], f["severity"], f["data"]["phase"]) for f in errs] == [
        ("engine_startup_failed", "critical", "startup")
    ], d["findings"]
    assert "vLLMHttpServer.launch_server" in errs[0]["evidence"]


def test_rays_task_error_is_vllms_only_for_an_actor_hosting_vllm() -> None:
    """The same Ray line for an actor that names no vLLM (its class, the module of its repr) is anybody's; for a
    vLLM host's call that is not its start-up (a generate), the phase is not guessed. Built from 017's line."""
    line = next(ln for ln in (DATA / "eval32o" / "017.log").read_text().splitlines() if "RayTaskError" in ln)
    run = RunState(False, False)
    assert raytold.death(line, run) is not None
    other = line.replace("vLLMHttpServer", "TaskRunner").replace(
        "vllm_rollout.vllm_async_server", "trainer.main"
    )
    assert raytold.death(other, run) is None
    called = raytold.death(line.replace("launch_server", "generate"), run)
    assert called is not None and called[0].details["phase"] == "unknown"


def test_a_traceback_cut_at_a_frameworks_vllm_engine_construction_is_a_failed_start() -> None:
    """BD (022: ms-swift's GRPO, '[rank4]: Traceback …' through swift's rlhf_main → GRPOTrainer.__init__ →
    'self.engine = self.prepare_vllm(model)' → 'engine = GRPOVllmEngine(', cut): the traceback stops inside the
    construction of the framework's vLLM engine, so that engine never started — on rank 4."""
    d = _diagnose(DATA / "eval32o" / "022.log")
    errs = _errors(d)
    assert [(f["id"], f["severity"], f["data"]["phase"]) for f in errs] == [
        ("engine_startup_failed", "critical", "startup")
    ], d["findings"]
    assert errs[0]["data"]["frame"] == "GRPOVllmEngine" and errs[0]["data"]["rank"] == 4


def test_only_a_vllm_engine_wrappers_construction_is_read(tmp_path: Path) -> None:
    """The same cut at another class's construction (022's 'trainer = trainer_cls(' line as the last) names no vLLM
    engine: no failed start is read from it (nor, with no line vLLM's in it, the excepthook's header as the engine's:
    eval32ba BA4). Built from 022's lines."""
    lines = (DATA / "eval32o" / "022.log").read_text().splitlines()
    cut = lines[: next(i for i, ln in enumerate(lines) if "trainer_cls(" in ln) + 1]
    path = tmp_path / "022-cut-at-trainer.log"
    path.write_text("\n".join(cut) + "\n")
    errs = _errors(_diagnose(path))
    assert all(f["id"] != "engine_startup_failed" and f["data"]["phase"] != "startup" for f in errs), errs


def test_verls_rollout_of_a_training_step_raising_is_a_failure_while_serving() -> None:
    """BE (023: verl's FSDP worker on Ascend, its traceback through single_controller's ``func`` → fsdp_workers.py's
    ``generate_sequences`` → ``with self.rollout_sharding_manager:`` → the profiler's wrappers, cut before the
    exception; no line vLLM wrote): generate_sequences is the rollout of a training step, called only once init_model
    built the engine, and entering the sharding manager wakes it: a critical failure while serving, not a start-up."""
    d = _diagnose(DATA / "eval32o" / "023.log")
    errs = _errors(d)
    assert [(f["id"], f["severity"], f["data"]["phase"]) for f in errs] == [
        ("engine_error", "critical", "serving")
    ], d["findings"]
    assert errs[0]["data"]["frame"] == "generate_sequences"
    frame = next(
        x for x in (DATA / "eval32o" / "023.log").read_text().splitlines() if "in generate_sequences" in x
    )
    run = RunState(shutdown=False, stats_seen=False)
    assert hosted.frame(frame.strip(), run) is not None
    # the same function in another file (the trainer's own helper, a user's module) is not verl's rollout worker
    assert hosted.frame(frame.strip().replace("fsdp_workers.py", "my_workers.py"), run) is None
