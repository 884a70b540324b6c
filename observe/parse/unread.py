"""The fallback for a traceback no rule read: its frames in vLLM's own package are still a failure.

Each blind set of issue 32 found failing logs read as healthy because their traceback had a shape no
rule knew yet (cut mid-way, frames under a wrapper's logger, another program's sentence around it).
Whatever the shape, a frame of vLLM's own package (``File ".../vllm/..."``, ``frames.vllm_frame``) in an
ERROR / CRITICAL record or a raw line (no level: a process or rank prefix, or bare) is a traceback
through vLLM's code. When no rule told anything of the stream's failure lines, the last such frame is
reported as a traceback cut off: an ``error_line`` (``cut``, ``unread``) with the phase the frame tables
give (``PHASE_FRAMES``, ``SERVING_FRAMES``), else "unknown"; the catch-all (``failures.failing``) counts it
only when nothing else in the run is a failure, and says what decides the cause.

No frame at all, one shape still tells: a traceback header under PyTorch's bare rank prefix (``[rank0]: Traceback
(most recent call last):``). From 2.3 ``init_process_group`` installs a ``sys.excepthook`` that prints an
uncaught exception's traceback so (torch/distributed/distributed_c10d.py ``_distributed_excepthook``); only an
exception nothing caught reaches it, so that process is exiting: reported so (an ``error_line``, ``unread``,
its phase unknown: no frame tells it) — only in a log whose other lines are vLLM's (a record under vLLM's logger
prefix, ``said``): the rank prefix is PyTorch's in any torchrun'd program, and a trainer's own script dying there (a
client of the server, open-r1's GRPO in eval32ba 022) is not the engine's. A frame under vllm/ tells by itself (above).

One more: a traceback through multiprocessing's ``BaseProcess._bootstrap`` (``multiprocessing/process.py``, its
``self.run()``) under a vLLM process prefix (``(EngineCore_DP0 pid=N)``, ``(VllmWorker rank=N pid=N)``). _bootstrap
prints a traceback only for an exception the process's target let out (SystemExit prints none; vLLM's own entry
points catch Ctrl-C and a stop and exit quietly), and then exits with code 1: that vLLM process is dying, its cause
cut (an ``error_line``, ``unread``, its phase unknown).

Not a failure by its frames: a traceback cut in V0's client's ``_process_request`` (one request's stream re-raising
what the engine sent for it; ``_one_request``) — the engine's death there is told by what reads it (``frames``' twice
re-raised exception, the dead engine's exception line), not by the frame. Nor one cut in the offline ``LLM``'s
admission (entrypoints/llm.py ``_validate_and_add_requests`` → ``_add_request``, 0.6 → 0.11: generate / chat /
encode validate the prompts and params and hand each request to ``llm_engine.add_request``, whose input processing
raises a ValueError for a request it refuses: too long, a structured-output backend not the engine's), its deepest
vLLM frame there (``_ADMISSION``): that traceback is the caller's call refused before any step ran. A frame below them
(the engine's own) is read as before, and an engine already dead says so in its own lines (the core's "died
unexpectedly" record, EngineDeadError), which rules read.
Nor the API server's chat-template warm-up (``chattemplate.warmup_frame``): its except logs the traceback and the
start-up goes on, so its frames from ``warmup`` down are that logged warm-up; cut there, it is reported as such, a
warning at most (``alone``: handled, as a request handler's record), phase start-up, never a failed start.

Not a failure: a traceback printed once a requested stop had begun (the parser's own ``requested``; one printed
before it, say V0's engine dying and its server then shutting down, is the failure that came first), and a
traceback of Ctrl-C, ``sys.exit``,
a task cancelled or a client gone (``_STOPS``): frames under those tell nothing. Save one: V0's ``engine_step``
(``engine/async_llm_engine.py``) cancelled. Only the engine loop cancels it (``run_engine_loop``: ``await
asyncio.wait_for(self.engine_step(), ENGINE_ITERATION_TIMEOUT_S)``, 0.4 → 0.5; a client gone cancels its own
request's task, which never runs engine_step), and on that timeout the loop logs "Engine iteration timed out" and
sets the engine errored: a CancelledError under an engine_step frame is the engine dead while serving. A request vLLM refused
(a 4xx) logs its own ERROR record, which a rule reads, so the stream was told.

uvicorn's "Exception in ASGI application" is the server's own record of a request whose handler raised (uvicorn's
``run_asgi`` logs it for any exception out of the app; starlette's ServerErrorMiddleware answered 500 first). Its
traceback cut before vLLM's frames (or before its exception line) is still a request that failed in the server,
while serving: reported as such. So is one cut at the API route's decorator (``_ROUTE_WRAPPERS``: with_cancellation's
``wrapper``, whose ``return handler_task.result()`` re-raises the one request's handler error): that frame, under
uvicorn's record, is the same request's path and tells no more (a frame below it, the handler's or the engine's, is
read as before). It is the request failing inside the engine when the engine aborted a request
just above it ("Aborted request …", ``served.ABORTED``, within ``_ABORT_NEAR`` lines: V0's generate aborts the
request its handler's raise closed); else the handler raised in the HTTP layer before the engine had the request
(an unreachable image URL, a bad input) and the server went on: the catch-all makes only the first critical. A
client gone raises CancelledError there, a stop as above; so does a frame of starlette's disconnect listener
(``listen_for_disconnect``: the client's side of a streamed response), whose exception line a paste may cut, or the
source line of StreamingResponse.__call__ that awaits it, whose frames a paste may cut.

Pure: lines in, at most one Failure out at the end of the stream.
"""

from __future__ import annotations

from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse import chattemplate, frames, loopexit, phaseframes
from observe.parse.failtypes import Failure

Held = tuple[Failure, str, Any]  # a failure, its line and that line's ctx
#: exception names whose traceback is a stop or a client's, not the engine's failure (asyncio's and
#: concurrent.futures' CancelledError, starlette's ClientDisconnect, uvicorn's / vLLM's ClientDisconnected)
_STOPS = (*frames.STOPS, "CancelledError", "ClientDisconnect", "GeneratorExit")
_ASGI = "Exception in ASGI application"
_ASGI_FAILED = (
    "uvicorn's 'Exception in ASGI application': a request's handler raised in the server, its traceback cut "
    "before the cause"
)
_STEP_TIMEOUT = (
    "V0's engine loop cancelled engine_step (asyncio.CancelledError under engine_step → execute_model_async): "
    "only its iteration timeout (VLLM_ENGINE_ITERATION_TIMEOUT_S) does, after which the engine is errored — a "
    "step that hung, typically a collective between the workers"
)

#: "Aborted request" this many physical lines above uvicorn's record (its access line between): the same request
_ABORT_NEAR = 5

#: a process's traceback through multiprocessing's _bootstrap (``self.run()`` in ``multiprocessing/process.py``)
_BOOTSTRAP = 'multiprocessing/process.py", line'
_DIED = (
    "a vLLM process's traceback through multiprocessing's _bootstrap (self.run()): its target let an exception "
    "out, so that process exited with code 1 — its cause cut"
)

#: V0's per-request generator (``MQLLMEngineClient._process_request``, engine/multiprocessing/client.py 0.6 → 0.10):
#: it re-raises what the engine sent for that one request. Its frame alone is a request's stream failing; the engine's
#: death under it is told by the frames reader (its ``raise request_output`` met twice in one record) or by its
#: exception line (MQEngineDeadError, "Engine loop is not running"), never by the frame
_V0_CLIENT = "engine/multiprocessing/client.py"


#: the offline LLM's admission of its requests (entrypoints/llm.py): a traceback whose deepest vLLM frame is one of these
_ADMISSION = ("_validate_and_add_requests", "_add_request")
_LLM = "entrypoints/llm.py"


def _admission(m: Any) -> bool:
    """Whether a vLLM frame (``frames.vllm_frame``'s match) is the offline LLM's admission of a request."""
    return m.group("func") in _ADMISSION and m.group("path").endswith(_LLM)


#: the API server's route decorators (``with_cancellation`` and ``load_aware_call``, each an inner ``wrapper``):
#: entrypoints/utils.py 0.6 → 0.19, entrypoints/serve/utils/api_utils.py in the 2026 servers. with_cancellation runs
#: the route handler as a task and ``return handler_task.result()`` re-raises whatever that one request's handler
#: raised, which uvicorn then logs as "Exception in ASGI application" (a 500 to that client)
_ROUTE_WRAPPERS = ("entrypoints/utils.py", "entrypoints/serve/utils/api_utils.py")


def _route_wrapper(m: Any) -> bool:
    """Whether a vLLM frame (``frames.vllm_frame``'s match) is an API route decorator's ``wrapper``."""
    return m.group("func") == "wrapper" and m.group("path").endswith(_ROUTE_WRAPPERS)


def _one_request(m: Any) -> bool:
    """Whether a vLLM frame (``frames.vllm_frame``'s match) is V0's client's per-request generator."""
    return m.group("func") == "_process_request" and m.group("path").endswith(_V0_CLIENT)


_HOOKED = (
    "PyTorch's distributed excepthook printed an uncaught exception's traceback ('[rankN]: Traceback …'), cut "
    "before its frames: that process was exiting"
)


class Unread:
    """One stream's last vLLM frame that no rule read, and whether anything else was told or stopped."""

    def __init__(self) -> None:
        self._last: tuple[str, str, Any] | None = None  # function, line, ctx
        self._before: tuple[str, str, Any] | None = None  # _last as it was at the current traceback's header
        self._warm: tuple[Any, ...] | None = (
            None  # the chat-template warm-up's record site, while under its frame
        )
        self._told = self._stopped = self._in_step = False
        self._timeout: tuple[str, Any] | None = None  # engine_step cancelled: its exception line, ctx
        self._hooked: tuple[str, Any] | None = None  # "[rankN]: Traceback …": the excepthook's header, ctx
        self._died: tuple[str, Any] | None = None  # a vLLM process's _bootstrap frame: line, ctx
        self._asgi: tuple[str, Any] | None = None  # uvicorn's record of a request that raised: line, ctx
        self._asgi_in_engine = False  # the engine aborted a request just before that record
        self.aborted_at: int | None = None  # the physical line of the engine's last "Aborted request"
        self.said = False  # a record under vLLM's logger prefix was read (the excepthook's header needs one)
        # which of those ("last", "hooked", "died", "asgi") came once a requested stop had begun
        self._late: set[str] = set()

    def note(
        self, f: Failure | None, msg: str, ctx: Any, failure_line: bool, cur: int = 0, requested: bool = False
    ) -> None:
        """A line the failure rules saw (failure_line: an ERROR / CRITICAL record or a raw line; cur: its
        physical line; requested: a requested stop had begun when it was printed), and what they made of it (f)."""
        if failure_line and self._in_step and msg.strip().endswith("CancelledError"):
            self._timeout = (msg, ctx)  # the engine loop's iteration timeout, not a stop (read as a wrapper)
        elif f is not None:
            self._told = True
        elif failure_line:
            site = (ctx.pid, ctx.logger_file, ctx.logger_line)
            if self._warm is not None and (site != self._warm or "Traceback (most recent" in msg):
                self._warm = None  # another record or traceback: the warm-up's ended
            if self._warm is not None:
                pass  # a frame under the warm-up's: still that logged warm-up
            elif chattemplate.warmup_frame(msg):
                self._warm = site
                self._last = self._mark("last", requested, ("warmup", msg, ctx))
            elif _ASGI in msg:
                self._asgi = self._mark("asgi", requested, (msg, ctx))
                near = self.aborted_at is not None and 0 < cur - self.aborted_at <= _ABORT_NEAR
                self._asgi_in_engine = self._asgi_in_engine or near
            elif "Traceback (most recent" in msg:
                self._in_step = False
                self._before = self._last
                if ctx.rank is not None and ctx.process is None and ctx.logger_file is None:
                    # PyTorch's excepthook: an uncaught exception (not a process's)
                    self._hooked = self._mark("hooked", requested, (msg, ctx))
            elif _BOOTSTRAP in msg and "in _bootstrap" in msg and ctx.process is not None:
                self._died = self._mark("died", requested, (msg, ctx))  # a vLLM process's target let one out
            elif (
                any(s in msg for s in _STOPS)
                or frames.DISCONNECT_LISTENER in msg
                or loopexit.escaped(msg.strip())
            ):
                self._stopped = True  # a stop's exception line, or its way out of the event loop
            elif (m := frames.vllm_frame(msg)) is not None and _admission(m):
                self._last = self._before  # so far, this traceback is a call refused at admission
            elif self._asgi is not None and m is not None and _route_wrapper(m):
                pass  # under uvicorn's record: the route's decorator re-raising its handler's error tells no more
            elif (m := frames.vllm_frame(msg)) is not None and not _one_request(m):
                self._last = self._mark("last", requested, (m.group("func"), msg, ctx))
                step = m.group("func") == "engine_step" and "async_llm_engine.py" in msg
                self._in_step = self._in_step or step

    @property
    def told(self) -> bool:
        """Whether a rule read a failure from the stream."""
        return self._told

    def _mark(self, which: str, requested: bool, value: Any) -> Any:
        """value, kept as the stream's latest of its kind (which), noting whether a requested stop had begun."""
        (self._late.add if requested else self._late.discard)(which)
        return value

    def release(self, requested: bool, held: list[Held]) -> list[Held]:
        """End of stream: what the raw tracebacks held (``frames.RawTracebacks.release``), else the unread
        traceback's failure, if there is one."""
        if not (held or self._told or requested) and self._timeout is not None:
            step = {"text": _STEP_TIMEOUT, "phase": "serving", "frame": "engine_step", "cause": _STEP_TIMEOUT}
            return [(Failure(FailureKind.ERROR_LINE, step, False, ("unread", "engine_step")), *self._timeout)]
        kept = next(
            (k for k, v in (("last", self._last), ("hooked", self._hooked), ("died", self._died)) if v),
            "asgi",
        )
        if held or self._told or self._stopped or (requested and kept in self._late):
            return held
        if self._last is None:
            hooked = self._hooked if self.said else None
            for seen, text, key in ((hooked, _HOOKED, "excepthook"), (self._died, _DIED, "_bootstrap")):
                if seen is not None:
                    d = {"text": text, "phase": "unknown", "unread": True, "cause": text}
                    return [(Failure(FailureKind.ERROR_LINE, d, False, ("unread", key)), *seen)]
            if self._asgi is None:
                return held
            d = {
                "text": _ASGI_FAILED,
                "phase": "serving",
                "frame": "run_asgi",
                "cut": True,
                "unread": True,
                "asgi": True,
                "in_engine": self._asgi_in_engine,
            }
            return [(Failure(FailureKind.ERROR_LINE, d, False, ("unread", "run_asgi")), *self._asgi)]
        func, msg, ctx = self._last
        phase = phaseframes.PHASE_FRAMES.get(func) or phaseframes.SERVING_FRAMES.get(func) or "unknown"
        d = {"text": msg.strip()[:300], "phase": phase, "frame": func, "cut": True, "unread": True}
        if func == "warmup" and chattemplate.warmup_frame(msg):
            d.update(phase="startup", alone=True)  # the warm-up's except logged it; the start-up went on
        return [(Failure(FailureKind.ERROR_LINE, d, False, ("unread", func)), msg, ctx)]
