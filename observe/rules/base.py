"""The record a finding is declared with. Pure.

A ``Rule`` is one detection (``detect(ctx) -> [Finding]``) with everything that belongs to it: the
findings it can emit, each with its ``Doc`` (severity, evidence, advice, versions: the row of
docs/findings.md; ``note``: the sentence the plan says when no flag answers it), the ``Settings``
fields it reads, what it needs of the window, and its ``Lever``s — the advisor's moves for its
findings, run in ``rank`` order over the whole table (a lever receives the plan, which holds the
engine config, ``Settings`` and the typed ``Facts``, and the findings by id). A rule that needs
more of the log than the shared ``Summary`` counts owns its ``State``: an accumulator the diagnosis
feeds every event of its type as the log streams (a fresh one per launch), read back as
``ctx.state(Kind)``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import TYPE_CHECKING, Any

from observe.failures.kinds import alert_of, runbook
from observe.findingids import FindingId
from observe.rules.state import State as State  # a rule declares its own State (rules.state)

if TYPE_CHECKING:
    from observe.advise.plan import Plan
    from observe.model import Finding
    from observe.rules.context import Context


class Section(StrEnum):
    """docs/findings.md's sections, in order (a Doc names its own)."""

    NOT_STARTED = "The engine did not start"
    FAILED = "The engine failed or died"
    REJECTED = "Requests rejected"
    KV_PRESSURE = "KV-cache pressure under load"
    BATCH = "Batch size and scheduling"
    INFO = "Information only"


SECTIONS = tuple(Section)


@dataclass(frozen=True)
class Doc:
    id: FindingId
    severity: str  # as the docs show it: "critical", "warning/critical", …
    section: Section
    evidence: str
    advice: str
    versions: str = "all"
    note: str | None = None  # said when the finding is a warning or critical and no lever answers it
    role: str = ""  # "cause": explains an engine that did not start; "failure": the failure itself
    label: str | None = None  # the first column when it is not the id alone
    settings: tuple[str, ...] | None = None  # the Settings fields behind this finding; None: its rule's
    # the alert that pages on it (observe.monitoring.alerts; a heading of docs/runbooks.md); for a finding the
    # failure kinds feed, their alert (failurekinds.alert_of) unless one is named here
    alert: str | None = None

    def __post_init__(self) -> None:
        if self.alert is None:
            object.__setattr__(self, "alert", alert_of(self.id))

    @property
    def runbook(self) -> str | None:
        """Its alert's runbook section (docs/runbooks.md#…), or None without an alert."""
        return None if self.alert is None else runbook(self.alert)


@dataclass(frozen=True)
class Lever:
    """One move of the advisor. ``rank`` orders the moves of the whole table (the engine must start
    first, then KV capacity, batch size, prefill, queue bounds, context length). ``answers``: the
    findings it answers, in the order its recommendations name them; ``act(plan, by_id, answers)``
    reads them from there (never from a list of its own), and every rule documenting one of them
    lists the lever (one lever may answer the findings of several rules: the plan runs it once)."""

    rank: int
    act: Callable[[Plan, Mapping[str, Finding], tuple[FindingId, ...]], None]
    answers: tuple[FindingId, ...]

    def pull(self, p: Plan, by_id: Mapping[str, Finding]) -> None:
        self.act(p, by_id, self.answers)


@dataclass(frozen=True)
class Rule:
    family: str
    detect: Callable[[Context], list[Finding]]
    docs: tuple[Doc, ...] = ()
    settings: tuple[str, ...] = ()  # the Settings fields detect (or its levers) read
    needs: tuple[str, ...] = ()  # what of the window it reads: "stats", "metrics", "errors", "startup", …
    levers: tuple[Lever, ...] = ()
    also: tuple[FindingId, ...] = ()  # ids it emits whose Doc another rule declares
    quiet_alone: bool = False  # its findings are dropped when no warning or critical finding is beside them
    states: tuple[
        type[State[Any]], ...
    ] = ()  # the accumulators detect reads (ctx.state), fed by the diagnosis

    @property
    def name(self) -> str:
        """The rule's name: its detection's."""
        return self.detect.__name__

    @property
    def ids(self) -> tuple[FindingId, ...]:
        return tuple(d.id for d in self.docs) + self.also


def on(
    fid: FindingId, rank: int, act: Callable[[Plan, Finding], None], also: tuple[FindingId, ...] = ()
) -> Lever:
    """A lever for one finding: ``act(plan, finding)`` when ``fid`` was found; ``also``: the findings
    its recommendations answer beside it (the OOM's levers answer a utilization set too high)."""

    def run(p: Plan, by_id: Mapping[str, Finding], answers: tuple[FindingId, ...]) -> None:
        if fid in by_id:
            act(p, by_id[fid])

    return Lever(rank, run, (fid, *also))
