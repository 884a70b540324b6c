"""Diagnosis → text | json | markdown | html, and rich tables for the terminal.

text.py (plain text and rich), markdown.py, html.py (one self-contained page; its plots are
chosen in plots.py and drawn by svg.py) and jsonout.py (the `observe.diagnosis/v1` document, and
every other command's `--format json` document); proposal.py prints a manage.Proposal.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from observe.errors import ObserveError
from observe.model import SEVERITIES, severity_rank
from observe.report.compare import compare_text
from observe.report.html import render_html
from observe.report.jsonout import (
    SCHEMA,
    capacity_json,
    compare_json,
    recommend_json,
    settings_json,
    to_dict,
    upgrade_json,
)
from observe.report.markdown import render_markdown
from observe.report.plots import KV_FULL_PCT, KV_HIGH_PCT
from observe.report.proposal import proposal_text
from observe.report.text import print_rich, render_text

if TYPE_CHECKING:
    from observe.diagnosis import Diagnosis
    from observe.settings import Settings

__all__ = [
    "SCHEMA",
    "capacity_json",
    "compare_json",
    "compare_text",
    "print_rich",
    "proposal_text",
    "recommend_json",
    "render",
    "render_html",
    "render_markdown",
    "render_text",
    "settings_json",
    "settings_text",
    "to_dict",
    "upgrade_json",
    "upgrade_text",
    "worst_at_least",
]

FORMATS = ("text", "json", "markdown", "html")


def upgrade_text(u: Any) -> str:
    """`observe upgrade`'s text: the plan as observe.advise.upgrade words it."""
    from observe.advise.upgrade import text

    return text(u)


def render(diag: Diagnosis, fmt: str, *, settings: Settings | None = None) -> str:
    """The report in `fmt`; the html plots mark KV-cache usage at the settings' high and full levels."""
    kv_high_pct = settings.kv_high_pct if settings else KV_HIGH_PCT
    kv_full_pct = settings.kv_full_pct if settings else KV_FULL_PCT
    if fmt == "json":
        return json.dumps(to_dict(diag), indent=2, ensure_ascii=False) + "\n"
    if fmt == "text":
        return render_text(diag)
    if fmt == "markdown":
        return render_markdown(diag)
    if fmt == "html":
        return render_html(diag, kv_high_pct=kv_high_pct, kv_full_pct=kv_full_pct)
    raise ObserveError(f"unknown format {fmt!r} ({', '.join(FORMATS)})")


def settings_text(s: Settings, fmt: str) -> str:
    """`observe config show`: the commented YAML that --config reads, or the JSON list."""
    from observe.settingsfile import to_yaml

    if fmt == "json":
        return settings_json(s) + "\n"
    if fmt == "yaml":
        return to_yaml(s)
    raise ObserveError(f"--format must be yaml or json, not {fmt!r}")


def worst_at_least(diag: Diagnosis, level: str) -> bool:
    """Whether some finding of `diag` is `level` or worse: the latest launch's, or what an earlier
    launch failed of (a crash, a hang, a failed start: `launches.History`)."""
    if level not in SEVERITIES:
        raise ObserveError(f"unknown severity {level!r} ({', '.join(SEVERITIES)})")
    ranks = [severity_rank(f.severity) for i in diag.instances for f in i.findings]
    for i in diag.instances:
        history = getattr(i, "history", None)  # an instance built without its earlier launches has none
        ranks += [severity_rank(x.finding.severity) for x in history.failed.values()] if history else []
    return bool(ranks) and max(ranks) >= severity_rank(level)
