"""rules' own state: each rule's accumulator (`State`) is declared beside its rule, fed by the
diagnosis only when a rule of the table declares it, fresh for each launch; `Context` is typed (no
`Any` for the summary), so mypy sees a misspelt field of the summary or of a state."""

from __future__ import annotations

import dataclasses
import typing

from observe.diagnosis import InstanceBuilder
from observe.rules import base, batch, kv, spec, swap, table
from observe.rules.context import Context
from observe.rules.summary import Summary
from tests.rules.rulekit import flags, stats


def _subclasses(cls: type) -> set[type]:
    out = set()
    for sub in cls.__subclasses__():
        out |= {sub, *_subclasses(sub)}
    return out


def test_every_state_is_declared_by_a_rule_of_the_table() -> None:
    """A State no rule declares would never be fed: its rule would read zeros forever."""
    declared = set(table.states())
    assert _subclasses(base.State) <= declared, _subclasses(base.State) - declared
    assert {kv.Silent, swap.Swap, kv.Modes, batch.Waiting, spec.Acceptance} <= declared
    for k in declared:
        assert dataclasses.is_dataclass(k), k  # compared field by field (test_scan: scan vs lines)
        assert isinstance(k.takes, type), k


def test_context_and_its_state_are_typed() -> None:
    hints = typing.get_type_hints(Context)
    assert hints["summary"] is Summary
    assert typing.get_type_hints(Context.state)["return"] is not typing.Any
    # no field of the summary is a count only one rule reads: those moved to their rule's State
    moved = {"silent_preemption_events", "waiting_while_full", "spec_acceptance_sum", "first_cpu_kv"}
    assert not moved & {f.name for f in dataclasses.fields(Summary)}


def test_a_state_is_fed_its_events_and_starts_afresh_with_each_launch() -> None:
    b = InstanceBuilder("t")
    b.add(flags(max_num_seqs=8))
    # KV full, two waiting, then Waiting rises: the queue rule's own counts
    for i, (r, w) in enumerate([(8, 2), (8, 3), (8, 5)]):
        b.add(stats(i, running=r, waiting=w, kv=99.0))
    first = b.summary.state(batch.Waiting)
    assert (first.while_full, first.with_room, first.rises) == (3, 0, 2)
    b.add(flags(max_num_seqs=16))  # a flags line after served lines: a new launch
    b.add(stats(10, running=4, waiting=1, kv=20.0))
    d = b.finish()
    got = d.summary.state(batch.Waiting)
    assert got is not first and (got.while_full, got.with_room, got.rises) == (0, 1, 0)
    assert len(d.launches) == 2
