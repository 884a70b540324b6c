"""Failures of a vLLM engine that only the program hosting it tells, on its own lines (not vLLM records).

- Ray's core worker, when a C++ exception nothing caught ends the process: its terminate handler logs
  "logging.cc:<n>: Unhandled exception: <mangled type>. what(): <message>" (``src/ray/util/logging.cc``) and the
  process aborts ("Stack trace:" follows). Under vLLM's Ray executor that process is the driver or a worker
  (NCCL's "invalid usage" raised so in vLLM 0.1's Ray workers): the engine or one of its workers is gone.
- Ray's driver, when a worker process died under a task: "A worker died or was killed while executing a task
  by an unexpected system error." with "Worker exit type: SYSTEM_ERROR" (``worker.py``, Ray 2.x; its own list
  of causes: SIGKILL by the OOM killer, ``ray stop --force``, a crash). A vLLM worker died.
- KServe's model server, when loading the model (its vLLM engine, with the huggingfaceserver) raised:
  "kserve ERROR [__main__.py:<module>():<n>] Failed to start model server: <exception>" (huggingfaceserver's
  ``__main__``, KServe 0.11 → 0.15): the server exits before it served.
- A BentoML runner's start-up (OpenLLM's vLLM runner): its traceback runs through the runner's
  ``init_local`` (``bentoml/_internal/runner/runner.py``), which builds the runnable — the engine — when the
  server's lifespan starts; a raise there fails the start.

Each is a start-up failure (KServe, BentoML) or the death of the engine's process (Ray), never a request's
error. Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

_RAY_ABORT = re.compile(r"\blogging\.cc:\d+: Unhandled exception: (?P<type>\S+)\. what\(\): (?P<what>.*)")
_RAY_DIED = "A worker died or was killed while executing a task by an unexpected system error"
_KSERVE = re.compile(r"\bkserve ERROR \[.*\] Failed to start model server: (?P<why>.*)")
_BENTO_INIT = re.compile(r'bentoml/_internal/runner/runner\.py", line \d+, in init_local\b')
#: what a line must hold for ``death`` or ``frame`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (
    "Unhandled exception: ",
    _RAY_DIED,
    "Failed to start model server",
    "in init_local",
)

_ABORT_CAUSE = (
    "Ray's core worker aborted on a C++ exception nothing caught ({what}): the process hosting the engine or "
    "one of its workers is gone"
)
_DIED_CAUSE = (
    "Ray: a worker process died while it ran a task (exit type SYSTEM_ERROR — killed by SIGKILL, by "
    "`ray stop --force`, or crashed; Ray's log for the dead worker names which): one of the engine's workers is gone"
)
_KSERVE_CAUSE = "KServe's model server failed to load the model (its vLLM engine) and exits: {why}"
_BENTO_CAUSE = (
    "a BentoML runner's start-up raised in init_local, which builds the runnable (the vLLM engine under "
    "OpenLLM): the runner never started (its exception line is below, or cut off)"
)


def death(text: str, run: RunState) -> Failure | None:
    """The failure a host of the engine tells on a raw line (after a requested stop: none)."""
    if run.requested:
        return None
    if (m := _RAY_ABORT.search(text)) is not None:
        cause = _ABORT_CAUSE.format(what=m.group("what")[:200])
        return _failure(text, "unknown", cause, ("ray", "unhandled_exception"))
    if _RAY_DIED in text:
        return _failure(text, "unknown", _DIED_CAUSE, ("ray", "worker_died"))
    if (m := _KSERVE.search(text)) is not None:
        f = _failure(
            text, "startup", _KSERVE_CAUSE.format(why=m.group("why")[:200]), ("kserve", "failed_start")
        )
        return Failure(f.kind, {**f.details, "before_serving": True}, f.fatal, f.key)
    return None


def frame(text: str, run: RunState) -> Failure | None:
    """A frame of a host's start-up that tells the start failed (a BentoML runner's ``init_local``)."""
    if run.requested or _BENTO_INIT.search(text) is None:
        return None
    f = _failure(text, "startup", _BENTO_CAUSE, ("bentoml", "init_local"))
    return Failure(
        f.kind, {**f.details, "before_serving": True, "cut": True, "frame": "init_local"}, f.fatal, f.key
    )


def _failure(text: str, phase: str, cause: str, key: tuple[str, str]) -> Failure:
    return Failure(FailureKind.ERROR_LINE, {"text": text[:300], "phase": phase, "cause": cause}, False, key)
