"""Failures of a vLLM engine that only Ray tells: its own sentences, on raw lines under Ray's process prefix.

An engine hosted in a Ray actor (OpenRLHF's ``LLMRayActor``, verl's ``WorkerDict``, Ray Serve's replicas) fails
inside Ray's machinery; what reaches the log is Ray's report, not a vLLM record (no level, no logger):

- Ray core, when an actor's constructor raised: "Exception raised in creation task: The actor died because of an
  error raised in its creation task, ray::<Class>.__init__() (…)" (``ActorDiedError``, Ray 2.x): the actor is
  dead before it served — the engine it was building never started.
- Ray core, when a remote call raised and nothing took its result: "Unhandled error (suppress with
  'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::<Class>.<method>() (…)" (``worker.py``, Ray 2.x): a method of an actor
  that was built (its construction is the case above): the engine had been built, phase "serving".
- Ray Serve's controller, when a replica's start-up raised: "Exception in Replica(id='…', deployment='…', app='…'),
  the replica will be stopped." (Ray 2.x, ``deployment_state.py`` ``check_ready``: logged only where it returns
  ``ReplicaStartupStatus.FAILED``; "Exception in replica '<tag>', the replica will be stopped." before 2.10).
- Ray core's report of an actor's remote call that raised, printed by its caller: "ray.exceptions.RayTaskError(
  <cause>): ray::<Class>.<method>() (pid=…, ip=…, actor_id=…, repr=<module.Class object at …>)" (Ray 2.x). It is
  vLLM's when the actor hosts vLLM — its class or module names vLLM (verl's ``vLLMHttpServer`` in
  ``vllm_rollout.vllm_async_server``, OpenRLHF's ``LLMRayActor`` in ``vllm_engine``, SkyRL's ``VLLMServerActor``) —
  and the call is the host's failure: in its start-up when the method builds or launches it (``__init__``,
  ``launch_server``, ``init_engine``, ``start``), else at a phase unknown.
- Ray Serve, when a replica's start-up raised, on the task error it re-raises: "ray::ServeReplica:<app>:<deployment>
  .initialize_and_get_metadata() (pid=…, ip=…, actor_id=…, repr=…)" (``replica.py``, Ray 2.x: the replica actor's
  start-up method, which builds the deployment — Ray Serve LLM's ``LLMServer``, the vLLM engine).
- Ray's memory monitor, when it kills a task or actor because the node's host memory runs low: it says where to
  read about it ("Refer to the documentation on how to address the out of memory issue:
  https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html", Ray 2.x ``memory_monitor``), above a
  table of the largest users ("<pid> <GB> ray::LLMRayActor" — vLLM's actors under OpenRLHF and its kin hold the
  weights sleep mode offloaded to host memory). The engine's death, of host RAM, not the GPU: no GPU flag helps.

- Ray core's ``ActorDiedError`` ("The actor died unexpectedly before finishing this task.", Ray 2.x) ending a
  traceback through a frame of a framework's module driving vLLM (verl's ``vllm_rollout/``, OpenRLHF's
  ``vllm_engine.py``): a remote call on an actor already built died with its process — a process of the engine is
  gone after its start-up (``actor_died``; the frame is held by ``frames.RawTracebacks``).

- Ray core's ``RayTaskError(ActorDiedError)`` heading a driver's remote traceback ("ray.exceptions.RayTaskError(
  ActorDiedError): ray::main_task() (…)", verl's ``main_ppo.main_task``) whose frames go on into verl's trainer
  calling its rollout worker group ("self.actor_rollout_wg.generate_sequences(…)" in ``ray_trainer.py``'s ``fit``,
  ``generate_sequences_loop`` in RL-Factory's): the actor running vLLM's rollout died under that call — after the
  start-up (``init_workers`` built it), a process of the engine is gone, as ``actor_died`` (held by
  ``frames.RawTracebacks`` until that call, or a frame of vLLM's own code, follows).

The two Ray core sentences say nothing of what raised: they are anybody's actor's, so they tell a failure only
once a frame of vLLM's own code follows them in the same process (``frames.RawTracebacks``); the Serve
controller's names the replica hosting the engine. Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState, serving_or

_CREATION = "died because of an error raised in its creation task"
_UNHANDLED = "Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1')"
_SERVE_STOP = ", the replica will be stopped."
_SERVE_INIT = ".initialize_and_get_metadata()"
_OOM_KILL = "ray-oom-prevention"
_TASK_ERROR = "RayTaskError("
#: Ray's ActorDiedError (``ray.exceptions``, Ray 2.x: "The actor died unexpectedly before finishing this task."),
#: raised in the caller of a remote method when the actor's process died under it
_ACTOR_DIED = "ActorDiedError: The actor died unexpectedly"
#: a framework's module that drives vLLM's engines and their Ray actors: verl's ``workers/rollout/vllm_rollout/``
#: (``vllm_async_server.py``, ``vllm_rollout_spmd.py``), OpenRLHF's ``trainer/ray/vllm_engine.py``
_HOST_FRAME_RE = re.compile(
    r'File "[^"]*/(?:vllm_rollout/[\w/]+|[\w/]*vllm_(?:engine|async_server)\w*)\.py", line \d+', re.ASCII
)
_HOST_LITERALS = ("/vllm_rollout/", "vllm_engine", "vllm_async_server")
#: Ray's exception line (``ray.exceptions.<Name>: …``): a traceback's end, which closes the frames held under its
#: header (``frames.RawTracebacks``) whether or not a rule reads it, so it is never skipped
_EXCEPTIONS = "ray.exceptions."
#: what a line must hold for ``death``, ``host_frame`` or ``actor_died`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (
    _CREATION,
    _UNHANDLED,
    _SERVE_STOP,
    _SERVE_INIT,
    _OOM_KILL,
    _TASK_ERROR,
    _ACTOR_DIED,
    *_HOST_LITERALS,
    _EXCEPTIONS,
    "actor_rollout_wg.generate_sequences",
)
#: Ray's RayTaskError line: the cause, the actor's class and method, and the module of its repr
_TASK_ERROR_RE = re.compile(
    r"RayTaskError\((?P<cause>[\w.]+)\): ray::(?P<task>(?P<cls>\w+)\.(?P<meth>\w+))\(\)"
    r"(?:.*\brepr=<(?P<module>[\w.]+))?",
    re.ASCII,
)
#: verl's trainer calling the worker group that runs vLLM's rollout (``verl/trainer/ppo/ray_trainer.py`` ``fit``)
_ROLLOUT_CALL_RE = re.compile(r"\bself\.actor_rollout_wg\.generate_sequences\w*\(", re.ASCII)
#: Ray's task error caused by an actor's death
_TASK_DIED = "RayTaskError(ActorDiedError)"
#: the methods that build or launch the host (the first word of their name): its start-up
_START_WORDS = ("init", "launch", "start")
_HOST_OOM = (
    "Ray's memory monitor killed a task: the node's host memory (RAM) ran low, not the GPU's "
    "(vLLM's actors hold host memory for sleep mode's offloaded weights and the CPU swap space)"
)
_TASK_RE = re.compile(r"\bray::(?P<task>[\w.:-]+)\(\)", re.ASCII)

#: literal → (phase, the cause, and whether a frame of vLLM's code must follow before it tells)
_SAYS: dict[str, tuple[str, str, bool]] = {
    _CREATION: (
        "startup",
        "Ray: the actor's constructor raised ({task}), so the actor died before it served: the engine it was "
        "building never started (the exception line is below it, or cut off)",
        True,
    ),
    _UNHANDLED: (
        "serving",
        "Ray: a remote call of a built actor raised ({task}) and nothing took its result: the engine failed "
        "in a call after its construction (the exception line is below it, or cut off)",
        True,
    ),
    _SERVE_STOP: (
        "startup",
        "Ray Serve's controller stopped a replica whose start-up raised (its readiness check failed): the "
        "deployment hosting the engine never started (the replica's own traceback is in its log)",
        False,
    ),
    _SERVE_INIT: (
        "startup",
        "Ray Serve: a replica's start-up ({task}) raised, so the deployment hosting the engine never started "
        "(the exception line is below it, or cut off)",
        False,
    ),
}


def _task_error(text: str) -> Failure | None:
    """Ray's RayTaskError for a call of an actor hosting vLLM (its class, or the module of its repr, names vLLM): a
    failure of the host, in its start-up when the method builds or launches it (``_START_WORDS``)."""
    m = _TASK_ERROR_RE.search(text)
    if m is None or "vllm" not in f"{m.group('cls')} {m.group('module')}".lower():
        return None
    start = m.group("meth").strip("_").split("_")[0] in _START_WORDS
    when = "while it was being built or launched" if start else "in a call (the phase is unknown)"
    cause = (
        f"Ray: a call of the actor hosting vLLM raised {m.group('cause')} ({m.group('task')}): the engine's host "
        f"failed {when} (the exception line is below it, or cut off)"
    )
    d = {
        "text": text[:300],
        "phase": "startup" if start else "unknown",
        "frame": m.group("task"),
        "cut": True,
    }
    d.update(cause=cause, before_serving=start)
    return Failure(FailureKind.ERROR_LINE, d, False, ("ray", _TASK_ERROR, m.group("task")))


def death(text: str, run: RunState) -> tuple[Failure, bool] | None:
    """The failure Ray tells on a raw line, and whether it waits for a frame of vLLM's code (after a
    requested stop: none)."""
    if _TASK_ERROR in text and not run.requested and (f := _task_error(text)) is not None:
        return f, False
    if _TASK_DIED in text and not run.requested:  # anybody's actor: it tells once the rollout's call follows
        return _died(), True
    if _OOM_KILL in text and not run.requested:
        phase = serving_or(run, "unknown")
        oom = {"form": "host_oom_killed", "phase": phase, "cause": _HOST_OOM}
        return Failure(FailureKind.ENGINE_CRASHED, oom, True, ("crashed", "host_oom_killed")), False
    hit = next(
        (lit for lit in _SAYS if lit in text and (lit != _SERVE_INIT or "ray::ServeReplica" in text)), None
    )
    if hit is None or run.requested:
        return None
    phase, cause, needs_vllm = _SAYS[hit]
    m = _TASK_RE.search(text)
    task = m.group("task") if m is not None else "check_ready"  # Serve's controller names no task
    d = {"text": text[:300], "phase": phase, "frame": task, "cut": True, "cause": cause.format(task=task)}
    if phase == "startup":
        d["before_serving"] = True  # Ray says the host died being built (failing._before_serving)
    return Failure(FailureKind.ERROR_LINE, d, False, ("ray", hit)), needs_vllm


def host_frame(text: str) -> bool:
    """Whether text is a traceback frame in a framework's module driving vLLM (``_HOST_FRAME_RE``)."""
    return any(lit in text for lit in _HOST_LITERALS) and _HOST_FRAME_RE.search(text) is not None


_ACTOR_DIED_CAUSE = (
    "Ray: an actor the framework's vLLM host was waiting on died before finishing the call (ActorDiedError: its "
    "worker process died — Ray's exit detail says how: the OOM killer, `ray stop --force`, a crash): a process "
    "of the engine is gone"
)


def rollout_call(held: Failure, text: str) -> bool:
    """Whether text, under Ray's word of an actor's death (``held``), is verl's trainer calling its rollout worker
    group: the actor that died ran vLLM's rollout."""
    return held.key == _DIED_KEY and _ROLLOUT_CALL_RE.search(text) is not None


_DIED_KEY = ("crashed", "actor_died")


def _died() -> Failure:
    d = {"form": "actor_died", "phase": "serving", "cause": _ACTOR_DIED_CAUSE}
    return Failure(FailureKind.ENGINE_CRASHED, d, True, _DIED_KEY)


def actor_died(text: str, run: RunState) -> Failure | None:
    """Ray's ActorDiedError as the exception line of a traceback through a frame of a vLLM host (the caller checks the
    frame: ``host_frame``): a process of the engine died in a call on an actor already built, so after the start-up
    (after a requested stop: none)."""
    if _ACTOR_DIED not in text or run.requested:
        return None
    # a remote method was running on the actor, so it had been built (as ``_UNHANDLED``): after the start-up
    return _died()
