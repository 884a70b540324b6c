"""Core: the sidecar's launch state — the launch a live vLLM log is in, whether it served, crashed
or failed to start (with vLLM's reason and the fix).

The sidecar feeds every event (and every good /metrics read) to one ``LaunchTracker``; when
``see`` answers True a new launch began, and the sidecar empties its window so that findings of
the previous launch (a crash, an OOM) are not "current" any more. Where a launch begins is
``launches.Boundary``'s rule, the one ``diagnose`` reads a log with, asked as a live reader
(``live=True``: it answers at each event, and lines come in the order vLLM wrote them). A
launch's crash is counted once however many lines report it; a start-up failure stays named until
a launch serves (a stats line, or /metrics answering). Pure: wall-clock times are parameters.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from observe import launches
from observe.failures import crashes, shutdown
from observe.failures.kinds import WRAPPERS, CrashCause
from observe.findingids import FindingId
from observe.flags import cmdline
from observe.model import EngineError, Finding, LogEvent, Recommendation, StartupFact, StatsSample

__all__ = [
    "Failure",
    "LaunchTracker",
    "NOT_ANALYZED",
    "NOT_ANSWERED",
    "NO_FIX",
    "fix_text",
    "info",
    "with_cause",
]

#: the fix of a failed start whose analysis named neither a flag nor a sentence (its findings hold
#: no warning: the failure's lines left the window): never an empty "Fix: " on the page
NO_FIX = (
    "observe's analysis of the window named no flag and no cause for it: run `observe diagnose` on "
    "the whole log"
)
#: the fix of a failed start whose analysis raised (observe_analysis_errors_total counts it): it
#: pages all the same, saying so
NOT_ANALYZED = (
    "observe's analysis failed (observe_analysis_errors_total), so it names no flag: run "
    "`observe diagnose` on the log"
)
#: the fix of a failed start whose analysis has not ended within SidecarSettings.page_backstop_s (a
#: hung analysis): the refused start pages all the same, saying so, rather than never
NOT_ANSWERED = (
    "observe's analysis has not answered for this failure, so it names no flag yet: run `observe "
    "diagnose` on the log"
)

# crash causes that, in a launch still starting, are its failure to start rather than a crash (an
# exception, or an exit with no signal: vLLM 0.32's worker "died unexpectedly (exit code: 0)" after
# raising). A signal (killed, oom_killer) stays a crash, whenever it comes.
_START_UP_EXITS = (CrashCause.EXCEPTION, CrashCause.ENGINE_DEAD)


@dataclass(slots=True)
class Failure:
    """The latest launch's start-up failure: label values for observe_engine_startup_failure_info."""

    kind: str
    reason: str
    launch: int
    wall: float  # when the sidecar read it (epoch seconds)
    fix: str = ""  # never empty once analyzed (fix_text, NOT_ANALYZED)
    analyzed: bool = False  # an analysis that saw it has ended: it is exported from then on
    paged: bool = False  # it was exported: its reason (the alert's identity) no longer changes
    stated: bool = False  # the reason is the cause and the fix, from the numbers vLLM stated

    @property
    def generic(self) -> bool:
        """It only says the start failed (a worker raised, the engine core failed): a specific kind of
        the same launch names the cause better and replaces it."""
        return self.kind in WRAPPERS

    def labels(self) -> tuple[str, str, str]:
        return self.kind, self.reason, self.fix


@dataclass
class LaunchTracker:
    launch: int = 0  # how many launch boundaries were seen
    served: bool = False  # this launch served (a stats line, or /metrics answered)
    crashed: bool = False  # this launch's crash was counted
    crashes: dict[str, int] = field(default_factory=lambda: dict.fromkeys(crashes.CAUSES, 0))
    failure: Failure | None = None
    flags: dict[str, Any] = field(default_factory=dict)  # this launch's flags (vLLM's non-default args)
    env: dict[str, str] = field(default_factory=dict)  # memory variables its pasted command set
    cause: str | None = None  # this launch's start-up cause with its fix, when vLLM stated the numbers
    # an earlier launch of this log served: the parser's "phase" of later errors says "serving"
    # from then on (its run state spans the file), so only `served` tells this launch's phase
    served_before: bool = False
    _bound: launches.Boundary = field(default_factory=launches.Boundary)  # where a launch begins

    def see(self, ev: LogEvent, wall: float, *, live: bool = True) -> bool:
        """Fold one event in; True when it begins a new launch (the caller drops the old window).
        Not live (the log's past, read at start): a crash marks the launch but is not counted."""
        new = bool(self._bound.opens(ev, live=True))
        if new:
            self.launch += 1
            self.served_before = self.served_before or self.served
            self.served = self.crashed = False
            self.flags, self.env, self.cause = {}, {}, None
            self._bound.reset()
        self._bound.note(ev)
        if isinstance(ev, StartupFact):
            if ev.name == "flags" and isinstance(ev.value, dict):
                self.flags = ev.value
            elif ev.name == "memory_env" and isinstance(ev.value, dict):
                self.env = ev.value
            return new
        if isinstance(ev, StatsSample):
            self.served = True
            self.failure = None
        elif isinstance(ev, EngineError) and not shutdown.is_noise(ev):
            if not self.served and self.cause is None:
                self.cause = crashes.headline(
                    " ".join(str(v) for v in (ev.message, *ev.details.values())), self.flags, self.env
                )
            cause = crashes.crash_cause(ev)
            if (
                cause in _START_UP_EXITS
                and not self.served
                and (self.served_before or ev.details.get("phase", "startup") == "startup")
            ):
                cause = None  # a launch that raised while starting failed to start: that page says why
            if cause is not None and not self.crashed:
                self.crashed = True  # an engine dies once per launch, however many lines say so
                if live:
                    self.crashes[cause] += 1
            kind = crashes.startup_kind(ev)
            if kind is not None and ev.fatal and not self.served:
                cur = self.failure
                generic = kind in WRAPPERS
                if cur is None or cur.launch != self.launch or (cur.generic and not generic):
                    reason = self.cause or crashes.reason_line(ev)
                    self.failure = Failure(kind, reason, self.launch, wall, stated=self.cause is not None)
        return False

    def answered(self, wall: float, took: float) -> None:
        """vLLM's /metrics answered (a read begun at wall - took): a launch serves."""
        self.served = True
        if self.failure is not None and self.failure.wall < wall - took:
            self.failure = None

    def exported_failure(self, wall: float, backstop_s: float) -> tuple[str, str, str] | None:
        """The failure's labels once an analysis has answered for it: the series the page fires on
        appears with its cause and its fix in one update, however late the analysis runs (a starved
        host), so that the first page already says what to change. Only an analysis that has not
        answered in ``backstop_s`` (hung) lets it out without one, saying so (NOT_ANSWERED). A pure read:
        the caller that exports the labels calls ``mark_paged``."""
        f = self.failure
        if f is None:
            return None
        if f.analyzed:
            return f.labels()
        if wall - f.wall >= backstop_s:
            return f.kind, f.reason, NOT_ANSWERED
        return None

    def mark_paged(self) -> None:
        """The failure's labels were exported (the page fires on them): its reason, the alert's identity,
        no longer changes (``analysis_ended`` leaves it as paged)."""
        if self.failure is not None:
            self.failure.paged = True

    def analysis_ended(self, launch: int, snap: float, findings: list[Finding] | None, fix: str = "") -> None:
        """An analysis of the window read at ``snap`` (wall time) in launch ``launch`` ended: its
        findings (None: it raised) name the failure's cause the first time (the reason is the
        alert's identity: it stays as paged) and ``fix`` its fix. A failure it did not see (read
        later, or of another launch) waits for the next one."""
        f = self.failure
        if f is None or f.launch != launch or f.wall > snap:
            return
        if findings is None:  # the analysis raised: page all the same, saying so; a fix found stays
            if not f.analyzed:
                f.fix, f.analyzed = NOT_ANALYZED, True
            return
        if not f.analyzed and not f.paged:
            f.reason = with_cause(f, findings)
        f.fix, f.analyzed = fix or NO_FIX, True


def fix_text(recommendations: list[Recommendation], notes: list[str]) -> str:
    """The fix for a failed start, one line: the plan's first flag change, else its first note
    (the sentence saying why no flag helps), else NO_FIX: never empty."""
    for r in recommendations:
        if r.suggested is True:
            return crashes.one_line(r.flag)
        return crashes.one_line(f"{r.flag} {r.suggested}")
    for n in notes:
        if n.strip():
            return crashes.one_line(n)
    return NO_FIX


def with_cause(failure: Failure, findings: list[Finding]) -> str:
    """A failed start that says only that it failed (a worker raised, "EngineCore failed to start."),
    named by its cause once an analysis has read the traceback: the reason ("a worker raised in
    load_model()") and the root cause the diagnosis's engine_startup_failed finding names
    (``data['root_cause']``, observe.failures.failing.root_cause). The reason alone when the log
    holds none (a traceback cut off), it already states the cause, or the failure is specific."""
    if not failure.generic or failure.stated:
        return failure.reason
    for f in findings:
        rc = f.data.get("root_cause") if f.id == FindingId.ENGINE_STARTUP_FAILED else None
        if rc and rc.get("text"):
            what = f"{rc['type']}: {rc['text']}" if rc.get("type") else str(rc["text"])
            return crashes.one_line(f"{failure.reason.rstrip('.')}: {what}")
    return failure.reason


def info(facts: dict[str, StartupFact], served: dict[str, Any] | None) -> dict[str, Any] | None:
    """version, engine and model of the launch, from its startup facts (and /v1/models' answer)."""
    val = {k: v.value for k, v in facts.items()}
    flags: dict[str, Any] = val["flags"] if isinstance(val.get("flags"), dict) else {}
    cfg: dict[str, Any] = val["config"] if isinstance(val.get("config"), dict) else {}
    model = cmdline.model_name(flags, cfg.get("model"), served=True)
    if model is None and served:
        model = served.get("model")
    version, engine = val.get("version"), val.get("engine")
    if version is None and engine is None and model is None:
        return None
    return {"version": version, "engine": engine, "model": model}
