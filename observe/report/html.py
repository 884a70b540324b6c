"""Diagnosis → one self-contained HTML page (the plots come from plots.py, drawn by svg.py).

Everything that may come from a log (paths, model names, flags, evidence, titles, the command)
goes through ``escape``; the page carries no event handler and no <script>, and a
Content-Security-Policy meta forbids them anyway.

Public entry: :func:`render_html`. The input is duck-typed on ``observe.diagnosis.Diagnosis``
(instances, generated_at, unreadable) so that this module imports neither pandas nor the
pipeline.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from observe.model import SEVERITIES, severity_rank
from observe.report import style
from observe.report.labels import metric_label, preemption_count
from observe.report.plots import (
    KV_FULL_PCT,
    KV_HIGH_PCT,
    ROW_LABELS,
    build_plots,
    finding_bands,
)
from observe.report.svg import (
    Band,
    Plot,
    column,
    fmt_duration,
    fmt_num,
    fmt_time,
    frame_times,
    svg_plot,
    time_axis,
)
from observe.report.svg import escape as _e
from observe.report.text import (
    count_text,
    flags_text,
    kv_memory_text,
    launch_lines,
    no_findings_text,
    size_text,
    summary_line,
    unexplained_errors,
    unreadable_text,
)

CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _single_row(frame: Any, t: datetime) -> str:
    """A timeline of one row is a table, not a plot: the values of that row."""
    rows = []
    for col, label in ROW_LABELS:
        vals = column(frame, col)
        if vals is not None and vals[0] is not None:
            rows.append((label, vals[0]))
    table = _kv_table(rows, "facts single-row") if rows else ""
    return f'<p class="muted">One reading only, at {_e(fmt_time(t))}; nothing to plot over time.</p>{table}'


def _legend(plot: Plot) -> str:
    items = []
    for s in plot.series:
        style = "border-top-style:dashed" if s.dashed else ""
        items.append(
            f'<span class="key"><span class="swatch" style="border-color:{s.color};{style}"></span>{_e(s.label)}</span>'
        )
    if plot.events is not None:
        items.append(f'<span class="key"><span class="tickmark"></span>{_e(plot.events.label)}</span>')
    for value, color, label in plot.thresholds:
        items.append(
            f'<span class="key"><span class="swatch" style="border-color:{color};border-top-style:dashed"></span>'
            f"{_e(label)} line</span>"
        )
    return f'<div class="legend">{"".join(items)}</div>'


def _band_legend(bands: Sequence[Band]) -> str:
    if not bands:
        return '<p class="muted">No finding has a time window to shade.</p>'
    seen: dict[str, Band] = {}
    for b in sorted(bands, key=lambda b: (-severity_rank(b.severity), b.start)):
        seen.setdefault(b.finding_id, b)
    items = [
        f'<span class="key"><span class="bandswatch" style="background:{b.color}">'
        f'</span><b>{_e(b.severity)}</b> {_e(b.title)} <span class="muted">'
        f"{_e(b.start.strftime('%H:%M:%S'))}–{_e(b.end.strftime('%H:%M:%S'))}</span></span>"
        for b in seen.values()
    ]
    return f'<div class="legend bands">Shaded: {"".join(items)}</div>'


def _kv_table(rows: Iterable[tuple[str, Any]], cls: str = "facts") -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(fmt_num(v))}</td></tr>" for k, v in rows)
    return f'<table class="{cls}">{body}</table>'


def _engine_section(config: Any) -> str:
    if config is None:
        return '<p class="muted">Nothing is known about how the engine was launched.</p>'
    g = lambda n: getattr(config, n, None)
    conc = g("max_concurrency")
    conc_txt = None
    if conc is not None:
        conc_txt = f"{fmt_num(conc)}×"
        if g("max_concurrency_len"):
            conc_txt += f" for {fmt_num(g('max_concurrency_len'))}-token requests"
    kv = g("kv_cache_tokens")
    rows = [
        ("vLLM version", g("version")),
        ("engine", g("engine")),
        ("model", g("model")),
        ("device", g("device")),
        ("KV-cache capacity (tokens)", kv),
        ("KV-cache blocks", g("num_gpu_blocks")),
        ("block size", g("block_size")),
        ("maximum concurrency", conc_txt),
        ("max model len", g("max_model_len")),
        ("KV memory available", kv_memory_text(config)),
        ("weights", None if g("weights_gib") is None else size_text(g("weights_gib"))),
        ("gpu-memory-utilization", g("gpu_memory_utilization")),
        ("max-num-seqs", g("max_num_seqs")),
        ("max-num-batched-tokens", g("max_num_batched_tokens")),
        (
            "tensor / pipeline parallel",
            None
            if g("tensor_parallel_size") is None and g("pipeline_parallel_size") is None
            else f"{g('tensor_parallel_size') or 1} / {g('pipeline_parallel_size') or 1}",
        ),
        ("kv-cache-dtype", g("kv_cache_dtype")),
        ("prefix caching", g("enable_prefix_caching")),
    ]
    rows = [(k, v) for k, v in rows if v is not None]
    facts = _kv_table(rows) if rows else '<p class="muted">No engine facts were found in the logs.</p>'
    flags = g("flags") or {}
    if flags:
        flag_rows = "".join(
            f"<tr><td><code>{_e(flags_text({k: v}))}</code></td></tr>" for k, v in flags.items()
        )
        flags_html = f'<h4>Launch flags</h4><table class="facts flags">{flag_rows}</table>'
    else:
        flags_html = ""
    return f'<div class="cols"><div>{facts}</div><div>{flags_html}</div></div>'


def _findings_section(findings: Sequence[Any], none_text: str = "No problems found.") -> str:
    if not findings:
        cls = "ok" if none_text == "No problems found." else "sev-critical"
        return f'<p class="{cls}">{_e(none_text)}</p>'
    ordered = sorted(findings, key=lambda f: -severity_rank(getattr(f, "severity", "")))
    items = []
    for f in ordered:
        sev = str(getattr(f, "severity", "info"))
        when = ""
        if getattr(f, "start", None) is not None:
            end = getattr(f, "end", None)
            when = fmt_time(f.start) + (f" → {fmt_time(end)}" if end is not None and end != f.start else "")
        where = getattr(f, "where", None)
        meta = " · ".join(x for x in (when, where or "") if x)
        items.append(
            f'<li class="finding sev-{_e(sev)}" data-finding="{_e(f.id)}">'
            f'<span class="badge sev-{_e(sev)}">{_e(sev)}</span> '
            f'<b>{_e(f.title)}</b> <code class="muted">{_e(f.id)}</code>'
            f'<div class="evidence">{_e(f.evidence)}</div>'
            + (f'<div class="muted small">{_e(meta)}</div>' if meta else "")
            + "</li>"
        )
    return f'<ul class="findings">{"".join(items)}</ul>'


def _flag_value(v: Any) -> str:
    """A flag value as it is typed on the command line (no thousands separators)."""
    if isinstance(v, float) and v.is_integer():
        return str(int(v))
    return str(v)


def _recommendations_section(recs: Sequence[Any], command: str | None, notes: Sequence[Any] = ()) -> str:
    note_html = (
        '<ul class="notes">'
        + "".join(
            f'<li><span class="muted">{_e(", ".join(n.finding_ids))}</span>: {_e(n.text)}</li>' for n in notes
        )
        + "</ul>"
        if notes
        else ""
    )
    if not recs and not command:
        return note_html or '<p class="muted">No flag change is recommended.</p>'
    rows = []
    for r in recs:
        cur = "unknown" if r.current is None else _flag_value(r.current)
        if r.current is not None and getattr(r, "current_is_default", False):
            cur += " (vLLM default)"
        sug = "(switch on)" if r.suggested is True else _flag_value(r.suggested)
        alts = "".join(
            f'<div class="small">together with <code>{_e(c.flag)} {_e(_flag_value(c.suggested))}</code>'
            f" — {_e(c.reason)}</div>"
            for c in getattr(r, "coupled", ())
        )
        alts += "".join(
            f'<div class="small">or instead: <code>{_e(a.flag)} {_e(_flag_value(a.suggested))}</code>'
            + (f" — {_e(a.expected_effect)}" if a.expected_effect else "")
            + "</div>"
            for a in getattr(r, "alternatives", ())
        )
        rows.append(
            f'<tr><td class="nw"><code>{_e(r.flag)}</code></td><td class="nw">{_e(cur)}</td>'
            f'<td class="nw"><b>{_e(sug)}</b></td><td>{_e(r.reason)}</td>'
            f"<td>{_e(r.expected_effect or '—')}{alts}</td></tr>"
        )
    table = (
        (
            '<table class="recs"><tr><th>flag</th><th>now</th><th>set to</th><th>why</th><th>expected effect</th></tr>'
            + "".join(rows)
            + "</table>"
        )
        if rows
        else ""
    )
    cmd = f'<h4>Command to paste</h4><pre class="command">{_e(command)}</pre>' if command else ""
    return table + cmd + note_html


def _cell(v: Any) -> str:
    """A stats/events value as short text: lists as their length, dicts as `k: v` pairs."""
    if isinstance(v, dict):
        return ", ".join(f"{k}: {fmt_num(x)}" for k, x in v.items()) or "—"
    if isinstance(v, (list, tuple, set)):
        return count_text(len(v), "item") if v else "none"
    return fmt_num(v)


#: what the stats and events objects' fields mean, for a reader (a field not named here is shown
#: with its underscores as spaces)
LABELS = {
    "samples": "stats lines",
    "max_kv_cache_usage_pct": "peak KV-cache usage (%)",
    "max_running": "peak running requests",
    "max_waiting": "peak waiting requests",
    "max_swapped": "peak swapped requests",
    "max_prompt_throughput": "peak prompt throughput (tokens/s)",
    "max_generation_throughput": "peak generation throughput (tokens/s)",
    "mean_generation_throughput": "mean generation throughput (tokens/s)",
    "kv_high_pct": "KV usage counted as high (%)",
    "kv_full_pct": "KV usage counted as full (%)",
    "samples_kv_high": "stats lines with KV usage high",
    "samples_kv_full": "stats lines with KV usage full",
    "mean_prefix_cache_hit_pct": "mean prefix-cache hit rate (%)",
    "first": "first log line",
    "last": "last log line",
    "stats_first": "first stats line",
    "stats_last": "last stats line",
    "preemption_warnings": "preemption warnings",
    "cumulative_preemptions": "preemptions (vLLM's running total)",
    "interval_preemptions": "preemptions (summed per stats line)",
    "metrics_preemptions": "preemptions (from /metrics)",
    "oom_errors": "out-of-memory errors",
    "error_kinds": "errors by kind",
    "spec_decode_lines": "speculative-decoding lines",
    "access_log_lines": "HTTP access lines",
    "silent_preemptions": "requests preempted without a warning",
    "hints": "hints vLLM printed",
    "oom_phases": "out-of-memory errors by phase",
    "metrics": "from /metrics",
}


def _value_html(v: Any) -> str:
    """A stats/events value: a dict (the /metrics window summary, errors by kind) as a small table
    of labelled rows, anything else as short text."""
    if isinstance(v, dict) and v:
        rows = "".join(
            f"<tr><th>{_e(metric_label(str(k)))}</th><td>{_e(fmt_num(x))}</td></tr>"
            for k, x in v.items()
            if x is not None and not isinstance(x, (dict, list))
        )
        return f'<table class="facts small nested">{rows}</table>' if rows else "—"
    return _e(_cell(v))


def _dict_table(title: str, d: dict | None) -> str:
    if not d:
        return ""
    body = "".join(
        f"<tr><th>{_e(LABELS.get(str(k), str(k).replace('_', ' ')))}</th><td>{_value_html(v)}</td></tr>"
        for k, v in d.items()
        if k != "errors"
    )
    return f'<div><h4>{_e(title)}</h4><table class="facts small">{body}</table></div>'


def _errors_section(events: dict | None) -> str:
    """Engine errors the logs reported (kind, where, the message as text)."""
    errors = (events or {}).get("errors") or []
    if not isinstance(errors, list) or not errors:
        return ""
    items = []
    for err in errors[:50]:
        if not isinstance(err, dict):
            items.append(f"<li>{_e(err)}</li>")
            continue
        fatal = ' <span class="badge sev-critical">fatal</span>' if err.get("fatal") else ""
        items.append(
            f'<li><b>{_e(err.get("kind"))}</b>{fatal} <span class="muted">{_e(err.get("where") or "")} '
            f'{_e(err.get("time") or "")}</span><div class="evidence">{_e(err.get("message"))}</div></li>'
        )
    more = f'<p class="muted">… and {len(errors) - 50} more.</p>' if len(errors) > 50 else ""
    return f'<h3>Errors in the logs</h3><ul class="errors">{"".join(items)}</ul>{more}'


_KEY_NUMBERS = (
    ("stats", "max_kv_cache_usage_pct", "peak KV usage", "%"),
    ("stats", "max_running", "peak running", ""),
    ("stats", "max_waiting", "peak waiting", ""),
    ("stats", "max_generation_throughput", "peak generation", " tok/s"),
    ("events", "oom_errors", "OOM errors", ""),
)


def _key_numbers(inst: Any) -> str:
    """The handful of numbers a reader looks for first, from the stats/events objects."""
    parts = []
    for attr, key, label, unit in _KEY_NUMBERS:
        v = (getattr(inst, attr, None) or {}).get(key)
        if v is None or isinstance(v, (list, dict)):
            continue
        parts.append(f'<span class="kn"><b>{_e(fmt_num(v))}{_e(unit)}</b> {_e(label)}</span>')
    pre = preemption_count(getattr(inst, "events", None))
    if pre is not None:  # the measured count and its source, never the log's 0 warnings beside a V1 count
        parts.insert(
            min(4, len(parts)),
            f'<span class="kn" data-key="preemptions"><b>{_e(fmt_num(pre[0]))}</b> preemptions '
            f'<span class="muted">(from {_e(pre[1])})</span></span>',
        )
    return f'<p class="keynums">{"".join(parts)}</p>' if parts else ""


def _sources_section(sources: Sequence[dict]) -> str:
    if not sources:
        return ""
    rows = "".join(
        f"<tr><td><code>{_e(s.get('path'))}</code></td><td>{_e(fmt_num(s.get('lines')))}"
        + (
            f" ({_e(count_text(s['cut_lines'], 'line'))} cut at {_e(fmt_num(s.get('max_line_bytes')))} bytes)"
            if s.get("cut_lines")
            else ""
        )
        + "</td>"
        f"<td>{_e(fmt_num(s.get('parsed_lines')))}</td><td>{_e(s.get('format'))}</td></tr>"
        for s in sources
    )
    return (
        '<h3>Sources</h3><table class="sources"><tr><th>file</th><th>lines</th><th>parsed</th><th>format</th></tr>'
        + rows
        + "</table>"
    )


def _severity_counts(findings: Sequence[Any]) -> dict[str, int]:
    counts = {s: 0 for s in reversed(SEVERITIES)}
    for f in findings:
        counts[getattr(f, "severity", "info")] = counts.get(getattr(f, "severity", "info"), 0) + 1
    return counts


def render_instance(
    inst: Any, idx: int, *, kv_high_pct: float = KV_HIGH_PCT, kv_full_pct: float = KV_FULL_PCT
) -> str:
    """One <section> for one vLLM instance (KV plot lines at ``kv_high_pct`` and ``kv_full_pct``)."""
    frame = getattr(inst, "frame", None)
    findings = list(getattr(inst, "findings", None) or [])
    times = frame_times(frame)
    axis = time_axis(times)
    parts = [f'<section class="instance" id="instance-{idx}"><h2>{_e(inst.name)}</h2>']
    counts = _severity_counts(findings)
    summary = " ".join(f'<span class="badge sev-{s}">{n} {s}</span>' for s, n in counts.items() if n) or (
        '<span class="badge ok">healthy</span>'
        if not unexplained_errors(inst)
        else '<span class="badge sev-critical">errors unexplained</span>'
    )
    span = ""
    if axis is not None and len(times) > 1:
        span = f" · {fmt_time(axis.t0)} → {fmt_time(axis.t1)} ({fmt_duration(axis.span)})"
    parts.append(
        f'<p class="summary">{summary} <span class="muted">{len(times):,} timeline rows{_e(span)}</span></p>'
    )
    runs = launch_lines(inst)
    if runs:  # a log with several launches: this section is the latest; the earlier ones as history
        parts.append("<h3>Launches</h3>" + _kv_table(runs, "facts launches"))
    parts.append(_key_numbers(inst))
    parts.append("<h3>Findings</h3>" + _findings_section(findings, no_findings_text(inst)))
    parts.append(_errors_section(getattr(inst, "events", None)))
    parts.append("<h3>Timeline</h3>")
    if axis is None:
        parts.append(
            '<p class="muted">No timed stats line or scrape was found, so there is no timeline to plot.</p>'
        )
    elif len(times) == 1:
        parts.append(_single_row(frame, times[0]))
    else:
        bands = finding_bands(findings, axis)
        plots = build_plots(frame, axis, times, kv_high_pct=kv_high_pct, kv_full_pct=kv_full_pct)
        parts.append(_band_legend(bands))
        if not plots:
            parts.append('<p class="muted">The timeline has no column this report knows how to plot.</p>')
        for p in plots:
            parts.append(
                f'<figure class="plot-{_e(p.key)}"><figcaption><b>{_e(p.title)}</b> '
                f'<span class="muted">({_e(p.unit)})</span>'
                f"{_legend(p)}</figcaption>{svg_plot(p, axis, bands)}"
                + (f'<p class="note">{_e(p.note)}</p>' if p.note else "")
                + "</figure>"
            )
    parts.append(
        "<h3>Recommendations</h3>"
        + _recommendations_section(
            list(getattr(inst, "recommendations", None) or []),
            getattr(inst, "command", None),
            list(getattr(inst, "notes", None) or []),
        )
    )
    parts.append("<h3>Engine</h3>" + _engine_section(getattr(inst, "config", None)))
    stats_html = _dict_table("Stats", getattr(inst, "stats", None))
    stats_html += _dict_table("Events", getattr(inst, "events", None))
    if stats_html:
        parts.append(f'<div class="cols">{stats_html}</div>')
    parts.append(_sources_section(list(getattr(inst, "sources", None) or [])))
    parts.append("</section>")
    return "".join(parts)


_STYLE = """
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,sans-serif;color:#1d2330;background:#f4f5f7;margin:0}
main{max-width:1100px;margin:0 auto;padding:16px 20px 40px}
header h1{font-size:22px;margin:8px 0 2px}
h2{font-size:19px;margin:0 0 4px;word-break:break-all}
h3{font-size:15px;margin:18px 0 6px;border-bottom:1px solid #e1e4e8;padding-bottom:3px}
h4{font-size:13px;margin:8px 0 4px}
section.instance{background:#fff;border:1px solid #dfe2e6;border-radius:8px;padding:14px 18px;margin:16px 0}
.muted{color:#6a7280}.small{font-size:12px}.ok{color:#2d7d46}
.badge{display:inline-block;border-radius:10px;padding:0 8px;font-size:12px;font-weight:600;color:#fff;
background:#6a7280}
{badges}
.badge.ok{background:#2d7d46}
ul.findings{list-style:none;padding:0;margin:0}
li.finding{border-left:4px solid #6a7280;padding:4px 10px;margin:6px 0;background:#fafbfc}
{borders}
.evidence{white-space:pre-wrap;word-break:break-word}
figure{margin:10px 0 4px}figcaption{font-size:13px}
svg.chart{width:100%;height:auto;display:block}
svg text{font:11px system-ui,sans-serif;fill:#4a5160}svg text.unit{fill:#6a7280}
svg text.threshold-label{font-weight:600}
.legend{display:inline;margin-left:10px;font-size:12px}.legend.bands{display:block;margin:0 0 4px}
.key{margin-right:14px;white-space:nowrap}
.swatch{display:inline-block;width:18px;border-top:3px solid;vertical-align:middle;margin-right:4px}
.bandswatch{display:inline-block;width:14px;height:12px;opacity:.35;vertical-align:middle;margin:0 4px 0 8px}
.tickmark{display:inline-block;width:3px;height:11px;background:#d0312d;vertical-align:middle;margin-right:4px}
.note{font-size:12px;color:#6a7280;margin:2px 0 0 62px}
table{border-collapse:collapse;font-size:13px}th,td{text-align:left;padding:2px 10px 2px 0;vertical-align:top}
table.facts th{font-weight:500;color:#4a5160;white-space:nowrap}
table.recs,table.sources{width:100%}table.recs th{white-space:nowrap}
table.recs th,table.sources th{border-bottom:1px solid #dfe2e6}
table.recs td,table.sources td{border-bottom:1px solid #f0f1f3;word-break:break-word}
code{font:12px ui-monospace,SFMono-Regular,Menlo,monospace;word-break:break-all}
pre.command{background:#1d2330;color:#e8eaed;padding:10px 12px;border-radius:6px;white-space:pre-wrap;
word-break:break-all;font:12.5px ui-monospace,SFMono-Regular,Menlo,monospace}
.cols{display:flex;gap:32px;flex-wrap:wrap}
table.contents td{padding:1px 10px 1px 0}table.contents a{word-break:break-all}td.nw{white-space:nowrap}
.keynums{margin:4px 0}.kn{display:inline-block;margin-right:18px;font-size:13px}.kn b{font-size:16px}
ul.errors{padding-left:18px}
""".replace("{badges}", style.css(".badge", "background")).replace(
    "{borders}", style.css("li", "border-color")
)


def _contents(instances: Sequence[Any]) -> str:
    """One row per instance: a link to its section, its finding counts and its worst finding."""
    rows = []
    for i, inst in enumerate(instances):
        findings = list(getattr(inst, "findings", None) or [])
        badges = (
            " ".join(
                f'<span class="badge sev-{s}">{n}</span>' for s, n in _severity_counts(findings).items() if n
            )
            or '<span class="badge ok">ok</span>'
        )
        worst = max(findings, key=lambda f: severity_rank(getattr(f, "severity", "")), default=None)
        rows.append(
            f'<tr><td class="nw">{badges}</td><td><a href="#instance-{i}">{_e(inst.name)}</a></td>'
            f"<td>{_e(worst.title) if worst is not None else ''}</td></tr>"
        )
    return f'<nav><table class="contents">{"".join(rows)}</table></nav>'


def render_html(diag: Any, *, kv_high_pct: float = KV_HIGH_PCT, kv_full_pct: float = KV_FULL_PCT) -> str:
    """The whole report as one self-contained HTML document (no script, no external resource).

    ``kv_high_pct`` and ``kv_full_pct`` are the KV-cache usage percentages the KV plots mark.
    """
    instances = list(getattr(diag, "instances", None) or [])
    generated = getattr(diag, "generated_at", None)
    unreadable = list(getattr(diag, "unreadable", None) or [])
    total = _severity_counts([f for i in instances for f in (getattr(i, "findings", None) or [])])
    head = (
        '<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        "<title>observe — vLLM diagnosis</title>"
        f"<style>{_STYLE}</style></head><body><main>"
    )
    summary = " ".join(f'<span class="badge sev-{s}">{n} {s}</span>' for s, n in total.items() if n) or (
        '<span class="badge ok">no finding</span>'
    )
    header = [
        "<header><h1>vLLM diagnosis</h1>",
        f'<p class="summary">{_e(summary_line(diag))}</p>' if instances else "",
        f'<p>{summary} <span class="muted">{count_text(len(instances), "instance")}'
        + (f" · generated {_e(fmt_time(generated))}" if generated else "")
        + "</span></p>",
    ]
    if len(instances) > 1:
        header.append(_contents(instances))
    if unreadable:
        items = "".join(f"<li>{_e(unreadable_text(u))}</li>" for u in unreadable)
        header.append(f'<h3>Files not used in full</h3><ul class="unreadable">{items}</ul>')
    header.append("</header>")
    body = "".join(
        render_instance(inst, i, kv_high_pct=kv_high_pct, kv_full_pct=kv_full_pct)
        for i, inst in enumerate(instances)
    )
    if not instances:
        body = '<p class="muted">No vLLM instance was found in the input.</p>'
    foot = '<footer class="muted small">Generated by observe. Times are as printed in the logs.</footer>'
    return head + "".join(header) + body + foot + "</main></body></html>\n"
