"""Diagnosis → a Markdown document (log text is escaped so that it cannot become markup)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from observe.report.text import (
    current_text,
    engine_lines,
    flag_text,
    no_findings_text,
    summary_line,
    unreadable_text,
    value_text,
)

if TYPE_CHECKING:
    from observe.diagnosis import Diagnosis


def _md_cell(x: Any) -> str:
    return value_text(x).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(diag: Diagnosis) -> str:
    """The Markdown report: one section per instance, findings and recommendations as tables."""
    out = ["# observe diagnosis", "", _md_cell(summary_line(diag)), ""]
    for inst in diag.instances:
        out += [f"## {_md_cell(inst.name)}", "", "| | |", "|---|---|"]
        out += [f"| {_md_cell(k)} | {_md_cell(v)} |" for k, v in engine_lines(inst)]
        out += ["", "### Findings", ""]
        if inst.findings:
            out += ["| severity | id | evidence |", "|---|---|---|"]
            out += [f"| {f.severity} | `{f.id}` | {_md_cell(f.evidence)} |" for f in inst.findings]
        else:
            out.append(no_findings_text(inst))
        if inst.recommendations:
            out += [
                "",
                "### Recommendations",
                "",
                "| flag | current | suggested | why | expected effect |",
                "|---|---|---|---|---|",
            ]
            out += [
                f"| `{r.flag}` | {_md_cell(current_text(r))} | {_md_cell(flag_text(r.suggested))} | {_md_cell(r.reason)} | {_md_cell(r.expected_effect)} |"
                for r in inst.recommendations
            ]
            for r in inst.recommendations:
                for c in r.coupled:
                    out += [
                        "",
                        f"`{r.flag} {_md_cell(flag_text(r.suggested))}` goes together with "
                        f"`{c.flag} {_md_cell(flag_text(c.suggested))}`: {_md_cell(c.reason)}",
                    ]
                if r.alternatives:
                    out += ["", f"Instead of `{r.flag} {_md_cell(flag_text(r.suggested))}`, any one of:", ""]
                    out += [
                        f"- `{a.flag} {_md_cell(flag_text(a.suggested))}`: {_md_cell(a.expected_effect)}"
                        for a in r.alternatives
                    ]
            if inst.command:
                out += ["", "```sh", inst.command.replace("```", "'''"), "```"]
        if inst.notes:
            out += ["", "### Notes" if inst.recommendations else "### Recommendations", ""]
            out += [f"- **{_md_cell(', '.join(n.finding_ids))}**: {_md_cell(n.text)}" for n in inst.notes]
        out.append("")
    if diag.unreadable:
        out += ["## Files not used in full", ""] + [
            f"- {_md_cell(unreadable_text(u))}" for u in diag.unreadable
        ]
    return "\n".join(out).rstrip() + "\n"
