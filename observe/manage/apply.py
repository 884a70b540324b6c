"""Recommendations applied to a launch command: the new command, and what changed."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from observe.flags.installed import VllmFlags
from observe.manage.spec import LaunchSpec, normalize_flag
from observe.model import Recommendation


def apply(spec: LaunchSpec, recommendations: Iterable[Recommendation]) -> LaunchSpec:
    """The same command with each recommended flag set to its suggested value (added if absent).

    `suggested` True adds a bare switch, False or None removes the flag. A recommendation's
    `coupled` changes go with it (vLLM refuses it alone). The model, the program and every other
    flag stay as they were, in their order.
    """
    flags = dict(spec.flags)
    for rec in (x for r in recommendations for x in (r, *r.coupled)):
        name = normalize_flag(rec.flag)
        if rec.suggested is False or rec.suggested is None:
            flags.pop(name, None)
        else:
            flags[name] = rec.suggested
    return LaunchSpec(program=spec.program, form=spec.form, model=spec.model, flags=flags)


def checked_recommendations(
    spec: LaunchSpec | None, recs: Sequence[Recommendation], flags: VllmFlags | None
) -> tuple[list[Recommendation], list[tuple[Recommendation, str]]]:
    """Split recommendations into those the installed vLLM accepts and those it rejects (with why).

    Without `flags` (no vLLM to ask) every recommendation is passed through unchecked. Each flag
    is checked on its own, so `spec` (the command it would go into) is not read.
    """
    if flags is None:
        return list(recs), []
    ok: list[Recommendation] = []
    bad: list[tuple[Recommendation, str]] = []
    every = [(x.flag, x.suggested) for r in recs for x in (r, *r.coupled)]
    errs = iter(flags.validate_many(every))
    for r in recs:
        err = next((e for e in [next(errs) for _ in (r, *r.coupled)] if e is not None), None)
        if err is None:
            ok.append(r)
        else:
            bad.append((r, err))
    return ok, bad


def flag_diff(before: LaunchSpec, after: LaunchSpec) -> list[tuple[str, Any, Any]]:
    """(flag, old, new) for every flag that differs; None means absent."""
    keys = list(before.flags) + [k for k in after.flags if k not in before.flags]
    return [
        (k, before.flags.get(k), after.flags.get(k))
        for k in keys
        if before.flags.get(k) != after.flags.get(k)
    ]
