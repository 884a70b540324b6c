"""`observe compare`'s text: the rows with human labels, the flag changes and the verdict, one
arrow (→) throughout."""

from __future__ import annotations

from typing import Any

from observe.report.labels import metric_label


def _cell(v: Any) -> str:
    return (
        "-"
        if v is None
        else f"{v:,.4g}"
        if isinstance(v, float)
        else f"{v:,}"
        if isinstance(v, int)
        else str(v)
    )


def compare_text(res: dict[str, Any]) -> str:
    """manage.compare_runs' answer as a table for a reader."""
    rows = [(metric_label(r["metric"]), _cell(r["before"]), _cell(r["after"])) for r in res["rows"]]
    width = max([len(label) for label, _, _ in rows] + [20]) + 2
    out = [f"{'':{width}}{'before':>14}{'after':>14}"]
    out += [f"{label:{width}}{b:>14}{a:>14}" for label, b, a in rows]
    out += [f"flag {ch['flag']}: {ch['before']} → {ch['after']}" for ch in res["flag_changes"]]
    verdict = {True: "the change helped", False: "the change did not help", None: "not enough data to judge"}[
        res["helped"]
    ]
    out.append(f"{verdict}: " + "; ".join(res["reasons"]))
    return "\n".join(out) + "\n"
