"""A request answered 500 and, at once, uvicorn's unasked ``Shutting down``: vLLM's API server going down after its
engine died.

vLLM's launcher (vllm/entrypoints/launcher.py ``_add_shutdown_handlers``, "Adds handlers for fatal errors that should
crash the server"; the releases it spans were not each read) answers a request that met a dead engine
(EngineDeadError, AsyncEngineDeadError, an errored engine's RuntimeError) with a bare 500 and sets uvicorn's
``should_exit`` when the engine has errored (later inside ``terminate_if_errored``; unless
VLLM_KEEP_ALIVE_ON_ENGINE_DEATH): uvicorn's next line is its ``Shutting down``, with no signal, Ctrl-C or stop
request before it. Only that pair, the 500 the message just before:
a lone ``Shutting down``, or one after a stop asked for (``shutdownmsg.requested_shutdown``), stays a stop.

The same answer followed at once by a worker's ``Parent process exited, terminating worker`` (V1's multiproc
executor, ``orphaned_after_5xx``): the worker's death monitor (``WorkerProc.worker_main``'s ``monitor_parent_death``;
``monitor_death_pipe``'s "… terminating worker queues" in later releases) blocks on the pipe whose other end its
parent, the engine core's executor, holds, and logs this when that pipe reads EOF: the engine core's process is gone
or closed it. An orderly stop closes it too (the executor's shutdown), but a stop begins with its own words first
(uvicorn's "Shutting down", "[shutdown] …", a signal): with none before it, a request answered 500 and, at once, the
workers told their engine core is gone is the engine dying while serving. The line alone, or after anything else,
is not read (every clean shutdown of a multiproc engine prints it).

Pure: the parser says whether its last message was a 5xx access line and whether a stop was asked for.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

#: uvicorn's own stop message (uvicorn/server.py ``logger.info("Shutting down")``), its "INFO:" prefix kept or not
_UVICORN_STOP = re.compile(r"\s*(?:INFO:\s+)?Shutting down\s*")
_CAUSE = (
    "a request was answered 500 and uvicorn shut down at once, unasked: vLLM's API server exits so "
    "(launcher.py terminate_if_errored) when its engine has died"
)


def server_exits_after_dead_engine(msg: str, after_5xx: bool, requested: bool) -> Failure | None:
    """The engine's death told by the server's exit (critical, serving), or None."""
    if requested or not after_5xx or _UVICORN_STOP.fullmatch(msg) is None:
        return None
    d = {"form": "terminate_if_errored", "phase": "serving", "cause": _CAUSE}
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed",))


#: multiproc_executor.py's worker, its parent's death pipe closed (both forms: "… terminating worker" and "…
#: terminating worker queues")
ORPHANED_LITERAL = "Parent process exited, terminating worker"
_ORPHANED_CAUSE = (
    "a request was answered 500 and at once the engine's workers logged that their parent process (the engine "
    "core) had exited, with no stop asked for: the engine died while serving"
)


def orphaned_after_5xx(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """A worker's 'Parent process exited' as the message right after a 5xx answer, no stop asked for: the engine
    core died serving (critical, serving); otherwise None (a clean shutdown prints it as well)."""
    if run.requested or not run.after_5xx:
        return None
    d = {"form": "parent_exited", "phase": "serving", "cause": _ORPHANED_CAUSE}
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed",))
