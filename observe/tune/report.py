"""`observe tune`'s final report: the JSON document (report.jsonout's `tune_doc`,
observe/schemas/tune-v1.json), the plain text, and one self-contained HTML page with the trajectory
plotted (objective per trial, each run a dot, the lever moved under each trial)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from observe.report import jsonout, svg
from observe.tune.loop import Outcome


def to_dict(o: Outcome) -> dict[str, Any]:
    """The report as one JSON document (built in report.jsonout, beside every other one)."""
    return jsonout.tune_doc(o)


def change_text(row: dict[str, Any]) -> str:
    """A trial's change in words (its coupled changes after `with`); `start` for the baseline."""
    c = row.get("change")
    if not c:
        return "start"

    def one(x: dict[str, Any]) -> str:
        return f"{x['flag']} {x['from'] if x['from'] is not None else '(default)'} → {x['to']}"

    return " with ".join([one(c), *(one(x) for x in c.get("coupled") or ())])


def budget_text(doc: dict[str, Any]) -> str:
    """What the tune spent: trials (configurations measured, what --trials counts) and vLLM launches
    (the A B B A relaunches of an undecided change among them, which --trials does not count)."""
    n, launches = len(doc["trials"]), doc["launches"]
    again = sum(_relaunches((r.get("decision") or {}).get("order") or "") for r in doc["trials"])
    return (
        f"spent: {n} trial{'s' * (n != 1)} (configurations measured) in {launches} vLLM launch"
        + "es" * (launches != 1)
        + (f", {again} of them relaunches to remeasure a change in turn with its start" if again else "")
    )


def _relaunches(order: str) -> int:
    """The relaunches of an interleaved order: each switch of letter (`BBAABB`: 2; the first B runs
    are the trial's own launch)."""
    return sum(1 for a, b in zip(order, order[1:], strict=False) if a != b)


def to_text(doc: dict[str, Any]) -> str:
    unit = doc["objective"]["unit"]
    lines = [f"observe tune: objective {doc['objective']['kind']} ({unit})", ""]
    for r in doc["trials"]:
        obj = r["objective"]
        mean = svg.fmt_num(obj["mean"]) if obj["mean"] is not None else "—"
        spread = f" ±{obj['spread'] / 2:.1%}" if obj["spread"] is not None else ""
        fid = f" [{r['finding']['id']}]" if r.get("finding") else ""
        lines.append(
            f"  trial {r['trial']}: {change_text(r)}{fid}: {mean}{spread} — {r['outcome']}: {r['why']}"
        )
    reason = f" [{doc['stop_reason']}]" if doc.get("stop_reason") else ""
    lines += ["", f"stopped: {doc['stopped']}{reason}", budget_text(doc)]
    best = doc["best"]
    if best is None:
        lines.append("no configuration was measured: nothing to recommend")
    else:
        g = best["gain_over_start"]
        lines.append(
            f"best: trial {best['trial']}, {svg.fmt_num(best['objective'])} {unit}"
            + (f" ({g:+.0%} over the start)" if g is not None else "")
        )
        lines += ["", "winning command:", f"  {best['command']}"]
    for r in doc["rejected_by_vllm"]:
        lines.append(f"not tried (the installed vLLM rejects it): {r['flag']} {r['suggested']}: {r['why']}")
    lines.append(f"history: {doc['history']}")
    return "\n".join(lines) + "\n"


_COLOURS = {
    "baseline": "#555",
    "kept": "#1a7f37",
    "reverted": "#b35900",
    "failed": "#cf222e",
    "interrupted": "#888",
}


def trajectory_svg(doc: dict[str, Any]) -> str:
    """Objective per trial: each run a dot, the trial's mean a bar, the lever moved under it."""
    rows = doc["trials"]
    vals = [v for r in rows for v in r["objective"]["runs"]]
    ymax, ystep = svg.y_scale(max(vals) if vals else 1.0)
    n = max(1, len(rows))
    colw = svg.PLOT_W / n
    h = svg.HEIGHT + 40
    out = [
        f'<svg viewBox="0 0 {svg.WIDTH} {h}" role="img" aria-label="objective per trial">',
        f'<text x="4" y="{svg.MARGIN_TOP + 4}" font-size="11">{svg.escape(doc["objective"]["unit"])}</text>',
    ]
    y = 0.0
    while y <= ymax + 1e-9:
        py = svg.y_of(y, ymax)
        out.append(
            f'<line x1="{svg.MARGIN_LEFT}" x2="{svg.MARGIN_LEFT + svg.PLOT_W}" y1="{py:.1f}" y2="{py:.1f}" '
            f'stroke="#ddd"/><text x="{svg.MARGIN_LEFT - 4}" y="{py + 4:.1f}" font-size="11" '
            f'text-anchor="end">{svg.escape(svg.fmt_tick(y, ystep))}</text>'
        )
        y += ystep
    best = (doc.get("best") or {}).get("trial")
    for i, r in enumerate(rows):
        cx = svg.MARGIN_LEFT + colw * (i + 0.5)
        colour = _COLOURS.get(r["outcome"], "#555")
        m = r["objective"]["mean"]
        if m is not None:
            top = svg.y_of(m, ymax)
            bottom = svg.y_of(0, ymax)
            out.append(
                f'<rect x="{cx - colw * 0.3:.1f}" y="{top:.1f}" width="{colw * 0.6:.1f}" '
                f'height="{bottom - top:.1f}" fill="{colour}" fill-opacity="0.25" stroke="{colour}"'
                + (' stroke-width="3"' if r["trial"] == best else "")
                + "/>"
            )
        for v in r["objective"]["runs"]:
            out.append(f'<circle cx="{cx:.1f}" cy="{svg.y_of(v, ymax):.1f}" r="3" fill="{colour}"/>')
        base_y = svg.MARGIN_TOP + svg.PLOT_H
        out.append(
            f'<text x="{cx:.1f}" y="{base_y + 14:.1f}" font-size="11" text-anchor="middle">'
            f"{r['trial']}: {svg.escape(r['outcome'])}</text>"
            f'<text x="{cx:.1f}" y="{base_y + 28:.1f}" font-size="10" text-anchor="middle">'
            f"{svg.escape(change_text(r))}</text>"
        )
    out.append("</svg>")
    return "".join(out)


def to_html(doc: dict[str, Any]) -> str:
    rows = []
    for r in doc["trials"]:
        obj = r["objective"]
        rows.append(
            "<tr>"
            + "".join(
                f"<td>{svg.escape(x)}</td>"
                for x in (
                    r["trial"],
                    change_text(r),
                    (r.get("finding") or {}).get("id", ""),
                    svg.fmt_num(obj["mean"]),
                    "" if obj["spread"] is None else f"{obj['spread']:.1%}",
                    r["outcome"],
                    r["why"],
                )
            )
            + "</tr>"
        )
    best = doc["best"]
    cmd = f"<pre>{svg.escape(best['command'])}</pre>" if best else "<p>no configuration was measured</p>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'\">"
        "<title>observe tune</title><style>body{font-family:sans-serif;margin:1.5em;max-width:70em}"
        "table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 6px;font-size:13px}"
        "pre{white-space:pre-wrap;background:#f6f8fa;padding:.5em}</style></head><body>"
        f"<h1>observe tune</h1><p>objective: {svg.escape(doc['objective']['kind'])} "
        f"({svg.escape(doc['objective']['unit'])}); stopped: {svg.escape(doc['stopped'])}"
        f"{' [' + svg.escape(doc['stop_reason']) + ']' if doc.get('stop_reason') else ''}</p>"
        f"<h2>trajectory</h2>{trajectory_svg(doc)}"
        "<h2>trials</h2><table><tr><th>trial</th><th>change</th><th>finding</th><th>objective</th>"
        f"<th>spread</th><th>outcome</th><th>why</th></tr>{''.join(rows)}</table>"
        f"<h2>winning command</h2>{cmd}</body></html>\n"
    )


def write_report(out: Path, outcome: Outcome) -> dict[str, Any]:
    """OUT/report.{json,txt,html}; the report document."""
    doc = to_dict(outcome)
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    (out / "report.txt").write_text(to_text(doc), encoding="utf-8")
    (out / "report.html").write_text(to_html(doc), encoding="utf-8")
    return doc
