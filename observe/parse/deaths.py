"""The engine's death: the readers of the messages that say the engine core or a worker died, was
killed or failed to start (EngineDeadError, "died unexpectedly", the V0 background loop's end) → an
``engine_crashed`` or ``engine_core_failed`` :class:`~observe.parse.failtypes.Failure`, with where the run
was when it died and why; after a requested shutdown, the noise of stopping. ``failures.RULES`` names them."""

from __future__ import annotations

import re
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState, phase, serving_or


def engine_dead(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """EngineDeadError / "output_handler failed": noise after a requested shutdown; the engine crashed
    when it had served, when it says only a started engine dies so (``_STARTED``: MPClient waits out the
    core's start-up before the output handler runs) or a shutdown began unasked; else it failed to start."""
    if run.requested:
        return Failure(FailureKind.SHUTDOWN_NOISE, {}, False, ("shutdown",))
    started = run.stats_seen or any(s in msg for s in _STARTED)
    if run.shutdown or started:
        return _crash("engine_dead", run._replace(stats_seen=started))
    f = engine_core(m, msg, ctx, run)
    return Failure(f.kind, {**f.details, "engine_dead": True}, f.fatal, f.key)


def request_engine_dead(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """V1 async_llm's "Request X failed (engine dead).": a request was in flight, so the engine had
    started and was serving when it died (the EngineDeadError before it read alone says neither)."""
    f = _crash("request_engine_dead", run._replace(stats_seen=True), cause=_DEAD_CAUSE)
    return Failure(f.kind, f.details, f.fatal, ("crashed", "request"))  # its own key: it dates the death


def engine_core(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """The engine core failed (to start, or in its loop); after a stop asked for (a Ctrl-C's KeyboardInterrupt in
    the core's process, which then exits -2: "Failed core proc(s): {'EngineCore': -2}"), the noise of stopping."""
    if run.requested:
        return Failure(FailureKind.SHUTDOWN_NOISE, {}, False, ("shutdown",))
    return Failure(FailureKind.ENGINE_CORE_FAILED, {"phase": phase(run)}, True, ("enginecore",))


#: AsyncEngineDeadError's text raised by V0's background loop task's done-callback (``_raise_exception_on_finish``,
#: async_llm_engine.py 0.2 → 0.10: "Task finished unexpectedly. This should never happen! Please open an issue on
#: Github" — "GitHub" later — ". See stack trace above for the actual cause."): the loop it ran ended, so the engine
#: had started (``_STARTED``)
LOOP_FINISHED = "Task finished unexpectedly. This should never happen!"
_MONITOR = "shutting down client"  # MPClient's engine-core monitor: it runs only after start-up
_SIGNALS = {1: "SIGHUP", 2: "SIGINT", 6: "SIGABRT", 7: "SIGBUS", 9: "SIGKILL", 11: "SIGSEGV", 15: "SIGTERM"}
_DEAD_CAUSE = "the engine core died (EngineDeadError): it crashed or was killed"
#: what only a started engine's death says: V1 AsyncLLM's output handler; V0's loop done-callback ("Task finished
#: unexpectedly", 0.2 → 0.10) and start_background_loop's "errored already" (set only once the loop ran: 0.4–0.6);
#: V1 EngineDeadError's own message (v1/engine/exceptions.py, 0.8 → 0.32): raised once the client marked the core dead,
#: which the core's busy loop (ENGINE_CORE_DEAD, sent only for a built core) or the core monitor (started after the
#: ready handshake) does; a failed start raises "Engine core initialization failed" instead
_STARTED = (
    "output_handler",
    "Task finished unexpectedly",
    "Background loop has errored already",
    "EngineCore encountered an issue",
)


def _crash(form: str, run: RunState, **d: Any) -> Failure:
    """engine_crashed (fatal) — or, after a requested shutdown, the noise of stopping."""
    if run.requested:
        return Failure(FailureKind.SHUTDOWN_NOISE, {}, False, ("shutdown",))
    d = {k: v for k, v in d.items() if v is not None}
    d.update(form=form, phase=serving_or(run, "startup"))  # where it was when it died
    gone = "the engine core process exited while the server was running (killed or crashed)"
    d.setdefault("cause", gone if form != "engine_dead" else _DEAD_CAUSE)
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed",))


def crashed(form: str, started: bool = False) -> Any:  # started: the message says the engine had started
    why = "the running engine raised an exception (the traceback below it tells which)" if started else None
    return lambda m, msg, ctx, run: _crash(form, run._replace(stats_seen=True) if started else run, cause=why)


#: V1's engine client raising when an engine core process exited before its ready handshake (core_client.py 0.8, then
#: v1/engine/utils.py wait_for_engine_startup: "Engine core initialization failed. See root cause above."): no core
#: was ever ready, so nothing had served
INIT_FAILED = "Engine core initialization failed"


def proc_died(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """Forms: "Engine core proc EngineCore_0 died unexpectedly" (0.8 → 0.11), "Worker proc X died unexpectedly
    (exit code: -9)" (0.32), "Engine core process X died unexpectedly." (0.32's API-server manager). The first,
    ending "shutting down client", is MPClient's engine-core monitor, which starts only once every engine core
    has answered ready (``start_engine_core_monitor`` after the ready handshake, 0.8 → 0.11): the engine had
    started, whatever the excerpt shows before it. A line that goes on to the client's "Engine core initialization
    failed" (a paste flattened to one line) is the failed start the client raised after the worker died."""
    if _MONITOR in msg:
        run = run._replace(stats_seen=True)
    elif (
        INIT_FAILED in msg[m.end() :]
    ):  # a paste flattened to one line: the start failed, as its next line says
        return engine_core(m, msg, ctx, run)
    code = int(m.group("code")) if m.group("code") else None
    sig = _SIGNALS.get(-code) if code is not None and code < 0 else None
    proc = m.group("proc").rstrip(".,")
    what = "a worker process" if "Worker" in msg else "the engine core process"
    cause = f"{what} ({proc}) exited unexpectedly" + (f", killed by {sig}" if sig else "")
    if code is not None and sig is None:
        cause += f" with exit code {code}"
    return _crash("proc_died", run, process=proc, exit_code=code, signal=sig, cause=cause)


#: V1's engine client's SIGUSR1 handler (v1/engine/core_client.py 0.8 → 0.9, ``sigusr1_handler``, installed in
#: MPClient's construction): ``logger.fatal`` of this text, then ``kill_process_tree(os.getpid())``. The engine core
#: sends SIGUSR1 to its parent from run_engine_core's ``except`` (its build raised, or its busy loop did), the
#: executor when a worker died: the client kills its own process tree, so the line is the engine's death
FATAL_SIGNAL = "Got fatal signal from worker processes, shutting down"


def fatal_signal(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """core_client's 'Got fatal signal from worker processes': the engine's death — engine_crashed once it served,
    else its failed start (the engine core's own failure, whatever raised before it); after a stop asked for, noise."""
    if run.stats_seen and not run.requested:
        return _crash(
            "fatal_signal", run, cause="the engine core or a worker hit a fatal error (SIGUSR1 to the client)"
        )
    return engine_core(m, msg, ctx, run)
