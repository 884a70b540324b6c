"""Rule tables: trigger literal(s) → compiled pattern → reader.

A rule is tried on a message only when every one of its literals occurs in it (a plain substring
test, far cheaper than the pattern); the reader turns a match into what the table produces. Rows
of one ``group`` exclude each other: the first row that fires ends the group. A row fires when
its reader returns something for a match, or, if it ``claims``, as soon as its literals occur (a
known form whose pattern misses is a record cut short, not some other form).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from observe.parse.envelope import Ctx

R = TypeVar("R")


@dataclass(frozen=True, slots=True)
class Rule(Generic[R]):
    name: str
    literals: tuple[str, ...]  # all must occur in the message for the pattern to be tried
    pattern: re.Pattern[str]
    read: Callable[..., R | None]  # (match, message, ctx, *extra) → result, or None: not this rule
    group: str | None = None
    claims: bool = False
    every: bool = False  # read every match (finditer), not only the first
    when: Callable[[Ctx], bool] | None = None  # a condition on the line's envelope


def gate(rules: Sequence[Rule[Any]]) -> re.Pattern[str]:
    """One pattern finding any literal of the rules: a message it misses needs no rule tried."""
    return re.compile("|".join(re.escape(lit) for lit in literals(rules)))


def fire(
    rules: Sequence[Rule[R]], msg: str, ctx: Ctx, *extra: Any, gate: re.Pattern[str] | None = None
) -> list[R]:
    """What the rules read off one message, in table order (gate: the rules' ``gate()``, if at hand)."""
    out: list[R] = []
    if gate is not None and gate.search(msg) is None:
        return out
    done: set[str] = set()
    for r in rules:
        if r.group is not None and r.group in done:
            continue
        for lit in r.literals:
            if lit not in msg:
                break
        else:
            if r.when is not None and not r.when(ctx):
                continue
            fired = r.claims
            if r.every:
                found: list[re.Match[str]] = list(r.pattern.finditer(msg))
            else:
                m = r.pattern.search(msg)
                found = [] if m is None else [m]
            for m in found:
                got = r.read(m, msg, ctx, *extra)
                if got is not None:
                    out.append(got)
                    fired = True
            if fired and r.group is not None:
                done.add(r.group)
    return out


def literals(*tables: Sequence[Rule[Any]]) -> tuple[str, ...]:
    """Every literal of the tables' rows, each once, in table order."""
    seen: dict[str, None] = {}
    for table in tables:
        for r in table:
            for lit in r.literals:
                seen.setdefault(lit, None)
    return tuple(seen)
