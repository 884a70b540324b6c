"""Ray's raylet giving up on worker processes that hang while they start: repeated, the engine's start-up hang.

The raylet starts a worker process for each actor or task it places (the actors hosting vLLM's engines under SkyRL,
verl, OpenRLHF) and waits ``worker_register_timeout_seconds`` (Ray's ``ray_config_def.h``: 60 s; 30 s in older Ray)
for it to register. When the wait ends with the process still starting, its monitor (``worker_pool.cc``
``MonitorStartingWorkerProcess``, read in Ray 2.x) logs at ERROR "Some workers of the worker process(<pid>) have not
registered within the timeout. The process is still alive, probably it's hanging during start." (or "The process is
dead, probably it crashed during start.", not read here), kills the process and fails the pending lease, which Ray
retries with a new process. One such notice can be a slow start (a heavy import on a loaded node): the retry may
register. Read narrowly as a hang: the "still alive … hanging during start" notice for at least ``MIN_PROCESSES``
distinct worker processes, the first and the last at least ``MIN_SPAN_S`` apart by the raylet's own time stamps (two
full default timeouts: the retries hung too, for minutes), before any serving line — the engines' actors never came
up: a failed start-up (never a crash while serving); alone, with no vLLM line, the host's failure. Ray's "[repeated Nx across cluster]" is not counted (it merges
notices of several nodes' raylets, with no process ids). Pure: a raw line in, a Failure or None out (``Hang`` keeps
the notices of one stream).
"""

from __future__ import annotations

import re
from datetime import datetime

from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState
from observe.parse.hosted import start_failed

__all__ = ["FORM", "LITERALS", "MIN_PROCESSES", "MIN_SPAN_S", "Hang"]

_STILL_ALIVE = (
    "have not registered within the timeout. The process is still alive, probably it's hanging during start."
)
#: what a line must hold for ``Hang.note`` to read it (``frames.LITERALS`` → ``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (_STILL_ALIVE,)
#: the form of its failure: any Ray application's workers can hang so, so the notices alone are anybody's
#: (``frames.anybodys``): the log's vLLM lines (the engine actor's process prefix) make it the engine's start-up
FORM = "raylet_register_hang"
#: distinct worker processes the raylet gave up on, and the seconds between the first notice and the last
MIN_PROCESSES = 3
MIN_SPAN_S = 120
#: the notice (a Markdown paste may escape the file name's underscore), its process id
_NOTICE = re.compile(
    r"worker\\?_pool\.cc:\d+: Some workers of the worker process\((?P<pid>\d+)\) " + re.escape(_STILL_ALIVE)
)
#: Ray's log prefix on the raylet's line, ``[YYYY-MM-DD hh:mm:ss,mmm E <pid> <tid>]`` (a paste may escape the bracket)
_RAY_STAMP = re.compile(r"\\?\[(?P<ts>\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)[,.]\d+ [DIWEF] \d+ \d+\\?\]")
_CAUSE = (
    "Ray's raylet gave up on {n} worker processes over {s} s, each still alive but not registered within the "
    "worker-register timeout ('probably it's hanging during start', worker_pool.cc: killed and retried): the actors "
    "hosting the engines hang while they start, before any vLLM code runs"
)


class Hang:
    """The raylet's hanging-start notices of one stream, until they tell a hang (told once)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self._seen: dict[str, datetime] = {}
        self._told = False

    def note(self, text: str, ctx: Ctx, run: RunState) -> Failure | None:
        """The start-up hang, on the notice that completes it; None for any other line (and after serving or a
        requested stop, or once told)."""
        if self._told or _STILL_ALIVE not in text or run.stats_seen or run.requested:
            return None
        m = _NOTICE.search(text)
        if m is None:
            return None
        s = _RAY_STAMP.search(text)
        ts = datetime.fromisoformat(s.group("ts")) if s is not None else ctx.outer_ts
        if ts is None:
            return None  # no time of its own: how long it went on is unknown
        ts = ts.replace(tzinfo=None)
        self._seen.setdefault(m.group("pid"), ts)
        times = self._seen.values()
        span = (max(times) - min(times)).total_seconds()
        if len(self._seen) < MIN_PROCESSES or span < MIN_SPAN_S:
            return None
        self._told = True
        cause = _CAUSE.format(n=len(self._seen), s=int(span))
        f = start_failed(text.strip(), cause, ("ray", "register_hang"))
        return Failure(f.kind, {**f.details, "form": FORM}, f.fatal, f.key)
