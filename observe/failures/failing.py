"""Detectors for an engine that died, and the catch-all: no failing log reads as healthy.

* ``engine_crashed`` — the engine core (or a worker) exited unasked: killed, crashed, or gone with the
  OOM killer; vLLM says so ("[shutdown] MPClient: engine core exited unexpectedly", "Engine core proc
  … died unexpectedly", an ``EngineDeadError`` no requested shutdown explains). Critical.
* ``engine_error`` (catch-all) — a traceback or an ERROR / CRITICAL record that no specific rule
  explains: the log shows a failure, so the report must not say "no problems found". Critical when
  the engine did not serve after it (it exited, or never started) or requests failed (HTTP 5xx);
  else a warning.

Pure: (Context) → list[Finding], like every rule's detection in ``observe.rules``; the parser's
``EngineError`` events (kinds ``engine_crashed``, ``exception``, ``error_line``) are the input.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from observe.failures import buildfix, shutdown, unread
from observe.failures import crashes as crashes_mod
from observe.failures import kinds as failurekinds
from observe.failures.kinds import FailureKind
from observe.findingids import FindingId
from observe.model import Finding
from observe.parse.deaths import INIT_FAILED
from observe.parse.phaseframes import PHASE_FRAMES, SERVING_FRAMES
from observe.quote import quote

if TYPE_CHECKING:
    from observe.rules.context import Context

#: failure kinds whose own finding explains the tracebacks and ERROR records around them
EXPLAINED_BY = failurekinds.EXPLAINED_BY
#: an exception or ERROR record this many physical lines from a failure of those kinds belongs to it
#: (its traceback, its wrappers, the parent's re-raise)
NEAR_LINES = 400
_RAW = failurekinds.RAW
#: exception types that only wrap the real one (the root cause is printed above them)
_WRAPPERS = ("EngineDeadError", "EngineGenerateError", "CancelledError", "KeyboardInterrupt", "SystemExit")
#: what a log with no line of vLLM's own cannot tell (`Summary.host_only`), said with its failure
HOST_ONLY = (
    "no line of this log is vLLM's own: the error is the host program's as it printed it, so whether the engine "
    "had started or served is unknown — the vLLM process's own log (its ERROR records and stats lines) decides "
    "the phase and the cause"
)
#: in a log with no vLLM line, an exception that is one request's or one connection's, not a process's
#: failure: a client library's or the HTTP server's, or a timeout / a connection's end whoever raised it
#: (eval32k 025: aiohttp's image fetch timing out; uvicorn's "Exception in ASGI application" is one too)
_REQUEST_SIDE = re.compile(
    r"^(?:aiohttp|httpx|requests|urllib3|openai|starlette|uvicorn|h11|anyio|websockets)\."
    r"|(?:Timeout|Connection|Disconnect|BrokenPipe)\w*$"
)
#: the parser's / start-up phases → the phase a finding names
_PHASES = {
    "loading_weights": "loading",
    "profiling": "profiling",
    "kv_cache_init": "profiling",
    "cuda_graph_capture": "profiling",
    "warmup": "profiling",
    "sampler_warmup": "profiling",
    "serving": "serving",
    "shutdown": "shutdown",
    "startup": "startup",
    "unknown": "unknown",  # a cut traceback's frame that runs both at start-up and while serving
}


def phase_name(phase: Any) -> str:
    """A parser or start-up phase as a finding names it: startup | loading | profiling | serving |
    shutdown | unknown."""
    return _PHASES.get(str(phase), "startup") if phase else "startup"


def _where(e: Any) -> str:
    return f"{e.env.source}:{e.env.lineno}"


def engine_crashed(c: Context) -> list[Finding]:
    """The engine died unasked. Data: cause (one short sentence), signal ("SIGKILL", when the exit code
    tells), process, exit_code, form (which vLLM message said it), phase, root_cause (the first
    exception before it, when the log shows one: what it crashed of), rank."""
    s = c.summary
    crashes = [e for e in s.errors if e.kind == FailureKind.ENGINE_CRASHED]
    if not crashes:
        return []
    # "Request X failed (engine dead)" dates the death (a request was in flight: serving); another
    # crash message, when there, says more of it
    served = any(x.details.get("phase") == "serving" for x in crashes)
    deaths = [x for x in crashes if x.details.get("form") != "request_engine_dead"] or crashes
    e = next((x for x in deaths if x.details.get("signal")), deaths[0])
    d = dict(e.details, phase="serving") if served else e.details
    first = crashes[0].env
    raw = [x for x in s.errors if x.kind in _RAW and not x.details.get("cut")]  # a cut frame is no cause
    if d.get("form") in crashes_mod.FATAL_FORMS:  # the traceback follows the line that says it
        near = [x for x in raw if x.env.source == first.source and 0 < x.env.lineno - first.lineno]
        root = innermost([x for x in near if x.env.lineno - first.lineno <= NEAR_LINES])
    else:
        root = innermost([x for x in raw if x.env.lineno < first.lineno])
    cause = str(d.get("cause") or "the engine exited unexpectedly")
    if root and not d.get("signal"):
        where = (
            "the exception under it"
            if d.get("form") in crashes_mod.FATAL_FORMS
            else "the last exception before it"
        )
        cause = f"{cause}; {where}: {root['type'] or 'error'}: {quote(root['message'], 200)}"
    data: dict[str, Any] = {
        "cause": cause,
        "signal": d.get("signal"),
        "process": d.get("process"),
        "exit_code": d.get("exit_code"),
        "form": d.get("form"),
        "phase": phase_name(d.get("phase")),
        "rank": d.get("rank"),
        "root_cause": root,
        "count": s.error_kinds.get(FailureKind.ENGINE_CRASHED, 1) - (len(crashes) - len(deaths)),
    }
    # a worker that died while the engine was still being built (its frames put it in loading or profiling), when no
    # other record already says the start failed ("EngineCore failed to start", a worker's start-up exception)
    told = any(x.kind in (FailureKind.ENGINE_CORE_FAILED, FailureKind.WORKER_EXCEPTION) for x in s.errors)
    start = (
        not served and not told and data["phase"] in ("loading", "profiling") and d.get("form") == "proc_died"
    )
    if not served and d.get("form") == "proc_died" and _core_unbuilt(e, s.errors):
        if _start_told(e, s.errors):
            return []  # the engine core's own failure to start is the finding (engine_errors): one, not a crash
        start = True  # its construction's traceback, cut before the core's own words
    return [
        Finding(
            id=FindingId.ENGINE_STARTUP_FAILED if start else FindingId.ENGINE_CRASHED,
            severity="critical",
            title=f"Engine failed to start ({data['phase']}): a worker died"
            if start
            else "The engine died unexpectedly" + (f" ({data['signal']})" if data["signal"] else ""),
            evidence=f"{quote(e.message, 300)} — {cause}",
            start=e.env.ts,
            end=e.env.ts,
            where=_where(e),
            data=data,
        )
    ]


#: the engine core's own words for a failed start: run_engine_core's ``except`` while ``engine_core`` is still None
#: (v1/engine/core.py 0.8 → 0.32: 'logger.exception("EngineCore failed to start.")', else "EngineCore encountered a
#: fatal error.") and the front end's raise when a core process exited before its ready handshake (``INIT_FAILED``)
_START_FAILED = ("EngineCore failed to start", INIT_FAILED)
#: run_engine_core's source line building the core ("engine_core = EngineCoreProc(*args, …)", DPEngineCoreProc's
#: under data parallelism, 0.8 → 0.32; parse.frames reads it as a cut frame of that name): a traceback through it
#: raised while the core was constructed, before its ready handshake and its busy loop
_BUILD_FRAMES = ("EngineCoreProc", "DPEngineCoreProc")


def _start_told(e: Any, errors: Sequence[Any]) -> bool:
    """Whether a record of e's log, not of a dead engine, is the engine core's own failure to start
    (``_START_FAILED``): engine_errors names it engine_startup_failed."""
    return any(
        x.kind == FailureKind.ENGINE_CORE_FAILED
        and x.env.source == e.env.source
        and not x.details.get("engine_dead")
        and any(w in x.message for w in _START_FAILED)
        for x in errors
    )


def _core_unbuilt(e: Any, errors: Sequence[Any]) -> bool:
    """Whether e's log shows the engine core failing while it was constructed, before it served: its own failure
    to start (``_START_FAILED``) or a traceback through its construction (``_BUILD_FRAMES``). The executor's worker
    monitor ("Worker proc X died unexpectedly, shutting down executor", v1/executor/multiproc_executor.py 0.8 →
    0.32) starts in ``_init_executor`` once the workers answered ready, inside ``EngineCore.__init__``, so it
    also reports a worker that dies while the KV cache is sized or the graphs are captured; its shutdown fails the
    construction under way: a death before the engine ever served, the failed start's, not a crash."""
    return _start_told(e, errors) or any(
        x.kind == FailureKind.ERROR_LINE
        and x.env.source == e.env.source
        and x.details.get("frame") in _BUILD_FRAMES
        and x.details.get("phase") != "serving"
        for x in errors
    )


def root_cause(errors: Sequence[Any]) -> dict[str, Any] | None:
    """The first exception of a crash: the first error of a specific kind or exception line in the
    run (what the worker's traceback ends in), not the "WorkerProc hit an exception" wrapper.
    Keys: type, text, kind, where (and fix, for a line whose reader knows what fixes it). None when the excerpt
    holds no such line. A bare ERROR line is never the cause, unless its reader named the fix (parse.ptxas's refused
    architecture, parse.hosted's full /dev/shm): that reading is the cause the wrapper after it reports. A cause
    whose words name the install (failures.buildfix: no kernel for this GPU, a driver older than the build) carries
    that fix."""
    for e in errors:
        if e.kind == FailureKind.ERROR_LINE and e.details.get("fix"):
            return {
                "type": None,
                "text": e.details.get("text") or quote(e.message, 500),
                "kind": e.kind,
                "where": f"{e.env.source}:{e.env.lineno}",
                "fix": e.details["fix"],
            }
        if e.kind in failurekinds.NOT_CAUSES:  # a wrapper, a symptom or noise: not the cause
            continue
        if e.kind == FailureKind.EXCEPTION:
            cause = {
                "type": e.details.get("type"),
                "text": e.details.get("text"),
                "kind": FailureKind.EXCEPTION,
                "where": f"{e.env.source}:{e.env.lineno}",
            }
        else:
            cause = {
                "type": None,
                "text": quote(e.message, 500),
                "kind": e.kind,
                "where": f"{e.env.source}:{e.env.lineno}",
            }
        fix = _install_fix(e)
        return cause | ({"fix": fix} if fix else {})
    return None


def _install_fix(e: Any) -> str | None:
    """What fixes a failure whose text or message names the install (failures.buildfix), else None."""
    return buildfix.fix_for(f"{e.details.get('text') or ''}\n{e.message}")


def innermost(errors: Sequence[Any]) -> dict[str, Any] | None:
    """The root cause of a chain: the first exception line (Python prints the original exception
    first, each wrapper below it), not a wrapper; else the first ERROR record. Keys: type, message,
    phase, rank, where, fix (what fixes it, where known). None when there is neither."""
    first_line = None
    for e in errors:
        if e.kind == FailureKind.EXCEPTION:
            typ = str(e.details.get("type") or "")
            if typ.rsplit(".", 1)[-1] in _WRAPPERS:
                continue
            text = e.details.get("text") or ""
            return {
                "type": typ or None,
                "message": text,
                "phase": phase_name(e.details.get("phase")),
                "rank": e.details.get("rank"),
                "where": _where(e),
                "fix": _install_fix(e),  # words that name the install (no kernel image, an old driver)
            }
        if e.kind == FailureKind.ERROR_LINE and first_line is None:
            first_line = e
    if first_line is None:
        return None
    return {
        "type": None,
        "message": first_line.details.get("text") or quote(first_line.message, 300),
        "phase": phase_name(first_line.details.get("phase")),
        "rank": first_line.details.get("rank"),
        "where": _where(first_line),
        "decides": first_line.details.get("decides"),  # what the record leaves open (parse.lmcachelog)
        # what its reader knows fixes it (NCCL's /dev/shm), or the words that name the install
        "fix": first_line.details.get("fix") or _install_fix(first_line),
    }


def _site(e: Any) -> tuple[Any, ...]:
    """One log record's call site: the lines of a traceback logged with logger.exception share it."""
    return (e.env.source, e.env.pid, e.env.logger_file, e.env.logger_line)


def unexplained(errors: Sequence[Any]) -> list[Any]:
    """The exception lines and ERROR records no specific failure explains: not near (NEAR_LINES) a
    failure of an ``EXPLAINED_BY`` kind in the same source, not in the record of a request answered with an error
    (``request_error``: its traceback is that one request's), not raised while stopping as asked."""
    known = [(e.env.source, e.env.lineno) for e in errors if e.kind in EXPLAINED_BY]
    answered = {_site(e) for e in errors if e.kind == FailureKind.REQUEST_ERROR}
    out = []
    for e in errors:
        if e.kind not in _RAW or shutdown.is_noise(e) or not unread.counts(e, errors):
            continue
        if e.env.logger_file is not None and _site(e) in answered:  # that request's own traceback
            continue
        if any(src == e.env.source and abs(ln - e.env.lineno) <= NEAR_LINES for src, ln in known):
            continue
        out.append(e)
    return out


#: V0's MQLLMEngine.start (engine/multiprocessing/engine.py 0.6 → 0.10: line 157 in 0.6.2, 160 in 0.6.3 and 0.8.5,
#: 176 in 0.10.2) is the only vLLM code logging ``logger.exception(repr(e))`` under engine.py, and only when its loops
#: raised: run_mp_engine built the engine before calling it (a failed build is logged there, ``logger.exception(e)``:
#: str, not repr) and its start-up loop answers the client's RPCs with the exception instead of raising
_MQ_START = "engine.py"


def served_record(root: Any, errors: Sequence[Any]) -> bool:
    """Whether root (an exception line or ERROR record) is in a record of an engine already built: its frames
    (read under the header, ``parse.frames.read_under_header``) are an engine loop's (V0's run_engine_loop →
    engine_step, V1's busy loop), or the record is V0 MQLLMEngine.start's, opened by the exception's repr."""
    site = _site(root)
    return any(
        _site(e) == site
        and (
            (e.details.get("cut") and e.details.get("frame") in SERVING_FRAMES)
            or (e.details.get("repr") and e.env.logger_file == _MQ_START)
        )
        for e in errors
    )


def _before_serving(raw: Sequence[Any], phase: str) -> bool:
    """Whether the errors positively show the engine was still being built: the start-up's own lines put
    it in loading or profiling, or a frame of theirs is a function vLLM runs only at start-up
    (parse.phaseframes.PHASE_FRAMES: executor and worker init, load_model, the KV sizing), or another program says
    the engine's host died being built (``before_serving``: parse.raytold). The parser's bare "startup" (no
    stats line yet) is not enough: an excerpt of a serving engine has none either."""
    if phase in ("loading", "profiling"):
        return True
    return phase == "startup" and any(
        (e.details.get("frame") in PHASE_FRAMES or e.details.get("before_serving"))
        and e.details.get("phase") != "serving"
        for e in raw
    )


def _error_title(where: str, host_only: bool) -> str:
    if host_only:
        return f"A failure its host program printed (no line is vLLM's; {where})"
    return f"The engine reported an error ({where})"


def engine_error(c: Context) -> list[Finding]:
    """The catch-all. Data: type, message (the innermost exception of the chain, or the ERROR record),
    phase (startup | loading | profiling | serving | shutdown | unknown), rank, count (exception lines and
    ERROR records unexplained), root_cause (the same as a dict, for the advice), failed (why it is
    critical: "exited" | "requests_failed" | None), fix (only when the root is another program's line whose reader
    knows what fixes it: NCCL's full /dev/shm)."""
    s = c.summary
    if any(e.kind == FailureKind.WORKER_EXCEPTION for e in s.errors):
        return []  # engine_errors() reports it as engine_error, with its root cause
    raw = every = unexplained(s.errors)
    whole = [e for e in raw if not e.details.get("cut")]
    raw = whole or raw  # a cut traceback's frames tell only when nothing else does
    if not raw:
        return []
    root = innermost(raw)
    if root is None:
        return []  # only wrappers (a client's CancelledError, a stop): their cause, if any, is told elsewhere
    # the innermost telling frame of a cut traceback; a frame shared by start-up and serving only when no
    # other frame names the phase
    if s.host_only and (_REQUEST_SIDE.search(root["type"] or "") or any(e.details.get("asgi") for e in raw)):
        return []  # one request's or one connection's error in another program's lines: no process failed
    named = [e for e in raw if e.details.get("phase") != "unknown"]
    cut = None if whole else (named or raw)[-1].details
    if cut is not None:
        root.update(phase=phase_name(cut["phase"]), message=f"a traceback cut off in {cut['frame']}()")
    elif root["phase"] == "startup" and any(served_record(e, s.errors) for e in whole):
        root["phase"] = "serving"  # the exception of an engine loop's record: the engine had been built
    if root["phase"] == "startup" and not s.samples and phase_name(s.phase) in ("loading", "profiling"):
        # a worker's failed method (parse.workerbase) in a launch that never served, its start-up lines after it (Ray
        # prints its "[repeated Nx across cluster]" summaries of the workers' earlier lines late): that step
        if root["where"] in {_where(e) for e in raw if e.details.get("worker_method")}:
            root["phase"] = phase_name(s.phase)
    if s.host_only and root["phase"] == "startup":
        root["phase"] = "unknown"  # "startup" only meant "no stats line yet": a host's lines never show one
    last = raw[-1]
    served_after = s.stats_last_ts is not None and last.env.ts is not None and s.stats_last_ts > last.env.ts
    # only the records of the OpenAI server's request handlers (``parse.served.REQUEST_LOGGERS``: each of their
    # logger.error / logger.exception calls, serving_chat.py's "Error in chat completion stream generator.", "Error
    # in parser creation.", "Error with model …" 0.6 → 0.32, is in the except or check of one request, answered with
    # an error response): the server was serving, and the engine's own death would be told by the engine's lines (an
    # exception or frames under the record, the core's traceback), none here; an excerpt ending there is no exit
    handled = all(e.details.get("alone") for e in every)
    # the API server started after the last of them ("Starting vLLM API server", the engine built): not its exit
    up = (
        s.ready_where is not None
        and s.ready_where[0] == last.env.source
        and s.ready_where[1] > last.env.lineno
    )
    failed = None
    if any(e.fatal for e in s.errors) or not (served_after or handled or up):
        failed = "exited"
    elif s.access_errors:
        failed = "requests_failed"
    if cut is not None and cut.get("asgi") and not cut.get("in_engine"):
        failed = None  # one request's handler raised before the engine had it: the server went on
    what = f"{root['type']}: {root['message']}" if root["type"] else root["message"]
    ranks = f" on rank {root['rank']}" if root.get("rank") is not None else ""
    after = {
        "exited": "; the engine did not serve after it",
        "requests_failed": f"; {s.access_errors} request(s) failed with HTTP 5xx",
        None: "; the API server started after it" if up and not served_after else "; the engine kept serving",
    }[failed]
    if cut is not None:
        after = unread.cut_note(cut) + after
    if s.host_only:
        after += f"; {HOST_ONLY}"
    if root.get("decides"):
        after += f"; {root['decides']}"
    # a fatal error before the engine served is its failed start (V1 says so: "EngineCore failed to start")
    start = failed == "exited" and _before_serving(every, root["phase"])
    # a cut traceback's cause is unknown, unless its lines carry words that name the install (failures.buildfix)
    fix = root.get("fix") if cut is None else next(filter(None, map(_install_fix, raw)), None)
    where = "phase unknown" if root["phase"] == "unknown" else root["phase"]
    return [
        Finding(
            id=FindingId.ENGINE_STARTUP_FAILED if start else FindingId.ENGINE_ERROR,
            severity="critical" if failed else "warning",
            title=f"Engine failed to start ({where})" if start else _error_title(where, s.host_only),
            evidence=f"{quote(what, 400)}{ranks} — {len(raw)} "
            + ("frame(s) of a cut traceback" if cut else "exception line(s) or ERROR record(s)")
            + f" no specific rule explains{after}",
            start=raw[0].env.ts,
            end=last.env.ts,
            where=root["where"],
            data={
                "type": root["type"],
                "message": root["message"],
                "phase": root["phase"],
                "rank": root.get("rank"),
                "count": len(raw),
                "root_cause": {"type": root["type"], "text": root["message"], "kind": FailureKind.EXCEPTION},
                "failed": failed,
                "frame": cut["frame"] if cut else None,
                "cause_cut_off": cut is not None,
                # what the reader of another program's line knows fixes it (parse.hosted: NCCL's full /dev/shm)
                **({"fix": fix} if fix else {}),
            },
        )
    ]
