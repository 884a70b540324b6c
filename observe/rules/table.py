"""``RULES``: the one ordered table of findings. Pure.

Detection runs the rules in this order (a finding's place among equals of its severity is its
rule's place here); the plan runs every rule's levers in their ``rank`` (the engine must start,
then KV capacity, batch size, prefill, queue bounds, context length), then gives each warning or
critical finding no lever answered its rule's note. Adding a finding: its rule in its family's
module, its row here (see CONTRIBUTING.md).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from observe.advise import notes, steady
from observe.advise.plan import Advice, Plan
from observe.failures import stuck
from observe.model import EngineConfig, Finding, severity_rank
from observe.rules import batch, failures, hints, kv, kvcheck, latency, length, refused, spec, stall, swap
from observe.rules.base import Doc, Lever, Rule, State
from observe.rules.context import Context
from observe.rules.facts import Facts
from observe.settings import Settings

RULES: tuple[Rule, ...] = (
    failures.ENGINE_ERRORS,
    refused.LAUNCH_REJECTED,
    failures.ENGINE_CRASHED,
    failures.ENGINE_ERROR,
    kvcheck.KV_CHECK_CUT,
    kv.SILENT_PREEMPTIONS,
    swap.SWAP_SPACE,
    spec.LOW_ACCEPTANCE,
    hints.VLLM_HINTS,
    kv.CAPACITY_FACTS,
    kv.KV_CACHE_SATURATED,
    kv.PREEMPTIONS,
    batch.QUEUE,
    batch.TOO_MANY_SEQS,
    batch.THROUGHPUT_COLLAPSE,
    length.MAX_MODEL_LEN_UNUSED,
    kv.LOW_PREFIX_HIT,
    stall.ENGINE_STALLED,
    stall.ENGINE_STUCK,
    latency.LATENCY,
)


# the rules run on a launch before the latest as it ends: those that can find it failed (a critical
# finding: the launch's outcome and the history's failures); the tuning rules are the latest launch's
HISTORY = tuple(r for r in RULES if any("critical" in d.severity for d in r.docs))


def docs() -> dict[str, Doc]:
    """Every finding's documentation, by id (each id is declared by one rule)."""
    return {d.id: d for r in RULES for d in r.docs}


def states() -> tuple[type[State[Any]], ...]:
    """Every accumulator a rule declares (``Rule.states``), once each, in table order: what the
    diagnosis feeds each launch's events to."""
    return tuple(dict.fromkeys(k for r in RULES for k in r.states))


def levers() -> list[Lever]:
    """Every rule's levers, each once (a lever several rules list runs once), in the order the plan
    runs them (rank; the table's order among equals)."""
    return sorted(dict.fromkeys(lv for r in RULES for lv in r.levers), key=lambda lv: lv.rank)


def run(c: Context, rules: Sequence[Rule] = RULES) -> list[Finding]:
    """Every rule's findings (of `rules`: all by default), one incident reported once, worst first."""
    out: list[Finding] = []
    for rule in rules:
        out.extend(rule.detect(c))
    out = stuck.reconcile(out)
    if not any(severity_rank(f.severity) >= severity_rank("warning") for f in out):
        quiet = {i for r in RULES if r.quiet_alone for i in r.ids}
        out = [f for f in out if f.id not in quiet]
    out.sort(key=lambda f: -severity_rank(f.severity))
    return out


def worst(findings: Sequence[Finding]) -> str | None:
    return max((f.severity for f in findings), key=severity_rank, default=None)


def plan(
    cfg: EngineConfig,
    findings: Sequence[Finding],
    *,
    facts: Facts | Mapping[str, Any] | None = None,
    settings: Settings | None = None,
) -> Advice:
    """The plan for these findings (observe.advise.plan)."""
    by_id = {f.id: f for f in findings}
    p = Plan(cfg, Facts.of(facts), settings=settings or Settings())
    for lever in levers():
        lever.pull(p, by_id)
    for flag, r in list(p.recs.items()):
        against = steady.contradicts(r, findings)  # e.g. a cap lowered beside "bound by --max-num-seqs"
        if against is not None:
            del p.recs[flag]
            p.note(
                r.finding_ids,
                f"{flag} {r.suggested} is not advised: it pulls against {against}, found beside it",
            )
    p.couple()
    notes.close(p, findings, docs())  # never silent
    return Advice(recommendations=list(p.recs.values()), notes=p.notes)
