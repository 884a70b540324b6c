"""Levers declare the findings they answer (`Lever.answers`): over every real log and example, each
recommendation or note a lever adds names only findings it declares, so the declaration in the rules
is the whole truth of which lever answers which finding (no list hidden in observe/advise/)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from observe import pipeline
from observe.advise.plan import Plan
from observe.model import Finding
from observe.rules import base, table
from tests.scaninputs import DATA, real_inputs


def _named(p: Plan) -> set[tuple[str, str]]:
    """(what, finding id) for every recommendation (its alternatives and coupled changes) and note."""
    out = set()
    for flag, r in p.recs.items():
        for x in (r, *r.alternatives, *r.coupled):
            out |= {(f"{x.flag}={x.suggested}", i) for i in x.finding_ids}
    out |= {(n.text, i) for n in p.notes for i in n.finding_ids}
    return out


def test_each_lever_names_only_the_findings_it_answers(monkeypatch: pytest.MonkeyPatch) -> None:
    pulled: dict[int, set[str]] = {}
    wrong: list[str] = []
    real = base.Lever.pull

    def pull(self: base.Lever, p: Plan, by_id: Mapping[str, Finding]) -> None:
        before = _named(p)
        real(self, p, by_id)
        added = {i for _, i in _named(p) - before}
        pulled.setdefault(self.rank, set()).update(added)
        wrong.extend(f"rank {self.rank} named {i}" for i in added - set(self.answers))

    monkeypatch.setattr(base.Lever, "pull", pull)
    logs = [
        *real_inputs(),
        *sorted((DATA / "excerpts").glob("*.log")),
        *sorted((DATA / "eval32").glob("*.log")),
    ]
    for path in logs:
        pipeline.diagnose_paths([path])
    assert not wrong, sorted(set(wrong))
    answered = {r for r, ids in pulled.items() if ids}
    assert len(answered) >= 8, pulled  # the real logs exercise most levers: the test can fail
    assert {lv.rank for lv in table.levers()} >= answered
