"""A proposal (manage.Proposal) as the text `observe run` and `observe recommend` print: the
findings, the checked flag diff, what vLLM refused, and the new command — one way for both."""

from __future__ import annotations

from typing import Any

from observe.report.text import current_text


def proposal_text(prop: Any, *, title: str | None = None) -> str:
    """With a `title` (`observe run`: "diagnosis of FOLDER") the lines are indented under it."""
    pad = "  " if title else ""
    lines = [f"observe: {title}"] if title else []
    lines += [f"{pad}[{f.severity}] {f.id}: {f.evidence}" for f in prop.findings]
    if not prop.accepted:
        lines.append(f"{pad}no flag changes recommended")
    for r in prop.accepted:
        lines.append(f"{pad}{r.flag}: {current_text(r)} → {r.suggested}  # {r.reason}")
        lines += [f"{pad}  with {c.flag}: {current_text(c)} → {c.suggested}  # {c.reason}" for c in r.coupled]
    lines += [f"{pad}not suggested: {r.flag} {r.suggested} ({why})" for r, why in prop.rejected]
    if prop.command:
        lines += ["new command:", "  " + prop.command]
    return "\n".join(lines) + "\n"
