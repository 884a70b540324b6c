"""Launches: one log file often holds several starts of vLLM (a container's log, a restart loop, a
rejected launch followed by a fixed one). Each launch has its own flags, findings and command;
the diagnosis advises the latest one and reports the earlier ones as history (`History`): each is
summarised as it ends (its outcome, its failure findings: a rejected or failed start, a crash, a
hang), so a restart loop of thousands of launches keeps no more than a hundred, and every one of
them still counts for the summary and `--fail-on`. Pure: no I/O.

Where a launch begins (`Boundary`): a launch-opening line — vLLM's version banner (the API
server's "vLLM API server version X" or the logo's "version X") or its launch flags (the
`non-default args` dict, an `args: Namespace(...)`, a pasted `vllm serve …` line) — once the
current launch has ended its start (it served: a stats line, a request; or it hit a fatal error),
or a second banner / a second flags line (a launch killed while starting). Other start-up facts
(memory, KV cache, phases) do not end a launch: synthetic or recovered facts come in any order.
A pasted `vllm serve …` line above vLLM's own flags line is one launch. The engine's own
"Initializing an LLM engine (vX) with config: …" also carries a version but opens nothing: its
logger file or process says so, or the `config` (or `engine`) fact of the same line does, so
such a version fact waits for the next event before it is decided (`Boundary.HOLD`). An opening
line stamped earlier than the launch's latest line is a paste out of order, not a restart. The
process id is no guide: in a container every restart is `pid=1`.

It is the one rule for both readers: offline (`diagnosis.InstanceBuilder`) and live (the sidecar's
`livelaunch.LaunchTracker`: `opens(ev, live=True)`). The live reader differs in two ways, both for
a reason: (1) it answers at each event and cannot wait for the next one, so a version fact that
would be held is decided at once: a new launch when the current one has ended its start, else not
(a second banner while starting cannot be told from an engine-init line whose logger file is
unknown; a launch killed while starting and started again still opens at its second flags line);
(2) it reads lines as vLLM writes them, so nothing is pasted out of order: an opening line stamped
earlier than the launch's latest is the clock going back (vLLM stamps local time with no zone: a
container restarted in another zone, a clock step), and it opens a launch as any other would.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from observe.failures import crashes
from observe.findingids import FindingId
from observe.model import EngineConfig, EngineError, Finding, Recommendation, StartupFact, severity_rank

if TYPE_CHECKING:  # the layer above: a launch is recorded from the summary of its lines
    from observe.rules.summary import Summary
from observe.quote import quote

# facts that a launch prints before (or while) it reads its flags: they open or describe a launch
_OPENING = ("version", "flags")
# what vLLM refused at start-up: argument or config validation, or a value the model/memory cannot take
REJECT_KINDS = frozenset(crashes.REJECT_KINDS)
REJECT_FINDINGS = frozenset(
    (
        FindingId.LAUNCH_REJECTED,
        FindingId.MAX_MODEL_LEN_EXCEEDS_MODEL,
        FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,
        FindingId.NO_KV_CACHE_MEMORY,
    )
)
CRASH_FINDINGS = frozenset(
    (FindingId.ENGINE_CRASHED, FindingId.ENGINE_ERROR, FindingId.ENGINE_STARTUP_FAILED, FindingId.CUDA_OOM)
)
# what a launch failed of: a rejected or failed start, a crash, a hang (kept for every ended launch)
FAILURE_FINDINGS = REJECT_FINDINGS | CRASH_FINDINGS | {FindingId.ENGINE_STUCK}

# where vLLM's engine (not its API server) logs "Initializing an LLM engine (vX)": such a version
# line is the engine starting inside a launch, never a new launch
_ENGINE_FILES = frozenset(("llm_engine.py", "async_llm_engine.py", "core.py", "engine.py", "core_client.py"))
_ENGINE_PROCESSES = ("EngineCore", "VllmWorker", "RayWorker", "Worker")

MAX_LAUNCHES = 100  # earlier launches kept per instance (a crash loop keeps its last ones)


class Boundary:
    """Decides, event by event, whether an event opens a new launch (see the module docstring)."""

    HOLD = "hold"

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.banner = False  # a version banner was seen in this launch
        self.flags: str | None = None  # "log" (vLLM printed them) | "pasted" (a command line)
        self.ended = False  # it served (stats, requests) or hit a fatal error: it was a launch
        self.last_ts: datetime | None = None  # the latest time stamp seen in this launch

    def opens(self, ev: Any, *, live: bool = False) -> bool | str:
        """True: `ev` opens a new launch; HOLD: a version fact, decided by the next event; False.
        live: the sidecar's reading as the lines are written (never HOLD; see the module docstring)."""
        if not isinstance(ev, StartupFact) or ev.name not in _OPENING:
            return False
        if not live and ev.env.ts is not None and self.last_ts is not None and ev.env.ts < self.last_ts:
            return False  # earlier than what this launch printed: a paste out of order, not a restart
        if ev.name == "version":
            if not (self.ended or self.banner) or engine_line(ev):
                return False
            return self.ended if live else self.HOLD
        if self.ended:
            return True
        # a second flags line; but a pasted `vllm serve …` line above vLLM's own is one launch
        return self.flags == "log" or (self.flags == "pasted" and ev.env.level is None)

    def note(self, ev: Any, *, banner: bool = True) -> None:
        """Record what `ev` tells about the current launch (banner=False: an engine-init version)."""
        ts = getattr(getattr(ev, "env", None), "ts", None)
        if ts is not None and (self.last_ts is None or ts > self.last_ts):
            self.last_ts = ts
        if isinstance(ev, StartupFact):
            if ev.name == "version":
                self.banner = self.banner or (banner and not engine_line(ev))
            elif ev.name == "flags":
                self.flags = "log" if ev.env.level is not None else (self.flags or "pasted")
        elif not isinstance(ev, EngineError) or ev.fatal:
            self.ended = True


def engine_line(ev: StartupFact) -> bool:
    """Whether a version fact was logged by the engine (its logger file or process says so)."""
    env = ev.env
    return env.logger_file in _ENGINE_FILES or (env.process or "").startswith(_ENGINE_PROCESSES)


def engine_init(held: StartupFact, ev: Any) -> bool:
    """Whether the version fact `held` came from the engine-init line: `ev` is that line's config
    (or engine) fact."""
    return (
        isinstance(ev, StartupFact)
        and ev.name in ("config", "engine")
        and ev.env.source == held.env.source
        and ev.env.lineno == held.env.lineno
    )


@dataclass
class Launch:
    """One launch of vLLM as a log shows it."""

    index: int  # 1-based, in log order
    start: datetime | None = None
    end: datetime | None = None
    where: str | None = None  # "file:line" of its first line
    version: str | None = None
    model: str | None = None
    flags: dict[str, Any] = field(default_factory=dict)
    status: str = "started"  # rejected | failed | crashed | served | started (see `outcome`)
    reason: str | None = None  # the worst finding's title, for a launch that did not serve
    message: str | None = None  # vLLM's own words for it (the failing line), quoted
    stats_samples: int = 0
    findings: list[Finding] = field(default_factory=list)
    recommendations: list[Recommendation] = field(default_factory=list)
    command: str | None = None
    current: bool = False  # the latest launch: the one the diagnosis describes and advises

    def headline(self, of: int) -> str:
        """`launch 1 of 3 (04:12): rejected: --max-model-len exceeds the model's context`."""
        when = f" ({self.start.strftime('%m-%d %H:%M:%S')})" if self.start else ""
        tail = f": {self.reason}" if self.reason else ""
        now = ", diagnosed below" if self.current else ""
        return f"launch {self.index} of {of}{when}{now}: {self.status}{tail}"


def outcome(
    served: bool, errors: list[EngineError], findings: list[Finding]
) -> tuple[str, str | None, str | None]:
    """(status, reason, vLLM's message) of a launch: `rejected` (vLLM refused a value at start-up),
    `failed` (another fatal error before serving), `crashed` (a fatal error or a crash finding after
    serving began), `served` (stats or requests, no crash; the reason is then its worst critical
    finding, if any), `started` (neither: cut short, or still starting)."""
    fatal = [e for e in errors if e.fatal]
    crit = [f for f in findings if f.severity == "critical"]
    failing = [f for f in crit if f.id in REJECT_FINDINGS | CRASH_FINDINGS]
    err = next((e for e in fatal if e.kind in REJECT_KINDS), None) or (fatal[0] if fatal else None)
    message = quote(_reason_text(err), 300) if err is not None else None
    kind = err.kind.replace("_", " ") if err is not None else None
    if served:
        if fatal or failing:
            return "crashed", failing[0].title if failing else kind, message
        return "served", crit[0].title if crit else None, None
    if not fatal and not crit:
        return "started", None, None
    worst = (failing or crit)[0].title if (failing or crit) else kind
    rejected = any(e.kind in REJECT_KINDS for e in errors) or any(f.id in REJECT_FINDINGS for f in crit)
    return ("rejected" if rejected else "failed"), worst, message


def _reason_text(e: EngineError) -> str:
    text = next(
        (
            v.strip()
            for v in (e.details.get(k) for k in ("reason", "text"))
            if isinstance(v, str) and v.strip()
        ),
        e.message.strip(),
    )
    text = text[len("Value error, ") :] if text.startswith("Value error, ") else text
    return text.split(" [type=", 1)[0]  # pydantic's own trailer: the input, not the reason


class Diagnosed(Protocol):
    """What a launch's record reads of its diagnosis (diagnosis.InstanceDiagnosis, a layer above)."""

    findings: list[Finding]
    recommendations: list[Recommendation]
    command: str | None
    scrapes: int


def record(
    index: int,
    first: tuple[datetime | None, str | None],
    s: Summary,
    c: EngineConfig,
    d: Diagnosed,
    *,
    current: bool,
) -> Launch:
    """The Launch of a finished part of a log: `s` its Summary, `c` its EngineConfig,
    `d` its InstanceDiagnosis; `first` the (time, "file:line") of its first line."""
    served = bool(s.samples or s.access_lines or d.scrapes)  # stats lines, requests, or /metrics answered
    status, reason, message = outcome(served, list(s.errors), list(d.findings))
    return Launch(
        index=index,
        start=first[0] or s.first_ts,
        end=s.last_ts,
        where=first[1],
        version=c.version,
        model=c.model,
        flags=dict(c.flags),
        status=status,
        reason=reason,
        message=message,
        stats_samples=s.samples,
        findings=list(d.findings),
        recommendations=list(d.recommendations),
        command=d.command,
        current=current,
    )


def failures(launch: Launch) -> list[Finding]:
    """The findings a launch failed of (a rejected or failed start, a crash, a hang), worst first."""
    return [f for f in launch.findings if f.id in FAILURE_FINDINGS]


@dataclass
class Failure:
    """One kind of failure over the earlier launches: its latest finding and where it was seen."""

    finding: Finding  # the latest launch's finding of this id (its title, severity, evidence)
    launches: int = 0  # how many earlier launches had it
    first: int = 0  # the first and the latest launch (1-based) that had it
    last: int = 0


@dataclass
class History:
    """The earlier launches of a log, summarised as each ends: the last MAX_LAUNCHES of them kept
    whole (`kept`), every one counted by status and by failure (bounded by the number of statuses
    and finding ids, however many launches the log holds)."""

    kept: list[Launch] = field(default_factory=list)
    dropped: int = 0  # earlier launches beyond MAX_LAUNCHES, counted, not kept
    by_status: dict[str, int] = field(default_factory=dict)
    failed: dict[str, Failure] = field(default_factory=dict)  # finding id → its Failure

    def add(self, launch: Launch) -> None:
        self.kept.append(launch)
        if len(self.kept) > MAX_LAUNCHES:
            del self.kept[0]
            self.dropped += 1
        self.by_status[launch.status] = self.by_status.get(launch.status, 0) + 1
        for f in failures(launch):
            seen = self.failed.setdefault(f.id, Failure(f, first=launch.index))
            seen.finding, seen.last = f, launch.index
            seen.launches += 1

    def worst(self) -> Failure | None:
        """The worst failure of any earlier launch (a crash or hang before a rejected start, then the
        latest among equals), or None."""
        return max(
            self.failed.values(),
            key=lambda x: (severity_rank(x.finding.severity), x.finding.id not in REJECT_FINDINGS, x.last),
            default=None,
        )
