"""Diagnosis → text | json | markdown | html (html in report_html.py); rich tables for the terminal.

The JSON is the contract in docs/architecture.md (`observe.diagnosis/v1`). With one instance its
keys describe that instance; with several, `instances` holds each one in full and the top-level
`engine`/`stats`/`events` are those of the first, while `findings`/`recommendations` list every
instance's (each item names its `instance`).
"""

from __future__ import annotations

import json
import math
from datetime import datetime
from typing import Any

from observe.detect import SEV_ORDER, worst
from observe.diagnosis import Diagnosis, InstanceDiagnosis
from observe.errors import ObserveError

SCHEMA = "observe.diagnosis/v1"


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t else None


def _clean(v: Any) -> Any:
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [_clean(x) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def engine_dict(inst: InstanceDiagnosis) -> dict:
    c = inst.config
    return {
        "version": c.version,
        "engine": c.engine,
        "model": c.model,
        "device": c.device,
        "flags": dict(c.flags),
        "kv_cache_tokens": c.kv_cache_tokens,
        "num_gpu_blocks": c.num_gpu_blocks,
        "block_size": c.block_size,
        "max_concurrency": c.max_concurrency,
        "max_concurrency_len": c.max_concurrency_len,
        "max_model_len": c.max_model_len,
        "available_kv_gib": c.available_kv_gib,
        "weights_gib": c.weights_gib,
        "gpu_memory_utilization": c.gpu_memory_utilization,
        "max_num_seqs": c.max_num_seqs,
        "max_num_batched_tokens": c.max_num_batched_tokens,
        "kv_cache_dtype": c.kv_cache_dtype,
    }


def finding_dict(f, instance: str | None = None) -> dict:
    d = {
        "id": f.id,
        "severity": f.severity,
        "title": f.title,
        "evidence": f.evidence,
        "start": _iso(f.start),
        "end": _iso(f.end),
        "where": f.where,
        "data": f.data,
    }
    if instance is not None:
        d["instance"] = instance
    return d


def rec_dict(r, instance: str | None = None) -> dict:
    d = {
        "flag": r.flag,
        "current": r.current,
        "suggested": r.suggested,
        "reason": r.reason,
        "finding_ids": list(r.finding_ids),
        "expected_effect": r.expected_effect,
    }
    if instance is not None:
        d["instance"] = instance
    return d


def instance_dict(inst: InstanceDiagnosis) -> dict:
    return {
        "name": inst.name,
        "sources": inst.sources,
        "engine": engine_dict(inst),
        "stats": inst.stats,
        "events": inst.events,
        "findings": [finding_dict(f) for f in inst.findings],
        "recommendations": [rec_dict(r) for r in inst.recommendations],
        "command": inst.command,
        "metrics_snapshots": inst.scrapes,
    }


def to_dict(diag: Diagnosis) -> dict:
    insts = diag.instances
    first = insts[0] if insts else None
    many = len(insts) > 1
    out = {
        "schema": SCHEMA,
        "generated_at": _iso(diag.generated_at),
        "sources": [s for i in insts for s in i.sources],
        "engine": engine_dict(first) if first else None,
        "stats": first.stats if first else None,
        "events": first.events if first else None,
        "findings": [finding_dict(f, i.name if many else None) for i in insts for f in i.findings],
        "recommendations": [rec_dict(r, i.name if many else None) for i in insts for r in i.recommendations],
        "command": first.command if first and not many else None,
        "instances": [instance_dict(i) for i in insts],
        "unreadable": diag.unreadable,
    }
    return _clean(out)


def worst_at_least(diag: Diagnosis, level: str) -> bool:
    w = worst([f for i in diag.instances for f in i.findings])
    return w is not None and SEV_ORDER[w] >= SEV_ORDER[level]


# ---------------------------------------------------------------- text / markdown


def _v(x: Any) -> str:
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:,.2f}".rstrip("0").rstrip(".") if abs(x) < 1e6 else f"{x:,.0f}"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}"
    return str(x)


def _fv(x: Any) -> str:
    """A flag value as typed on the command line (no thousands separators); unknown = default."""
    return "default" if x is None else str(x)


def _engine_lines(inst: InstanceDiagnosis) -> list[tuple[str, str]]:
    c = inst.config
    rows = [("vLLM version", _v(c.version)), ("engine", _v(c.engine)), ("model", _v(c.model))]
    if c.kv_cache_tokens is not None:
        rows.append(
            (
                "KV cache",
                f"{c.kv_cache_tokens:,} tokens"
                + (f" ({c.num_gpu_blocks:,} blocks)" if c.num_gpu_blocks else ""),
            )
        )
    elif c.num_gpu_blocks is not None:
        rows.append(("KV cache", f"{c.num_gpu_blocks:,} blocks"))
    if c.max_concurrency is not None:
        rows.append(
            (
                "max concurrency",
                f"{c.max_concurrency:.2f}x"
                + (f" at {c.max_concurrency_len:,} tokens" if c.max_concurrency_len else ""),
            )
        )
    if c.available_kv_gib is not None:
        rows.append(("KV memory", f"{c.available_kv_gib} GiB"))
    s = inst.stats
    if s.get("samples"):
        rows.append(("stats lines", f"{s['samples']:,} ({_v(s.get('first'))} → {_v(s.get('last'))})"))
        rows.append(("max KV usage", f"{_v(s.get('max_kv_cache_usage_pct'))}%"))
        rows.append(("max running / waiting", f"{_v(s.get('max_running'))} / {_v(s.get('max_waiting'))}"))
        rows.append(("max gen throughput", f"{_v(s.get('max_generation_throughput'))} tokens/s"))
    e = inst.events
    pre = [
        x
        for x in (
            e.get("preemption_warnings") and f"{e['preemption_warnings']} warnings",
            e.get("cumulative_preemptions") and f"cumulative {e['cumulative_preemptions']:,}",
            e.get("metrics_preemptions") is not None and f"{e['metrics_preemptions']:,} in /metrics",
        )
        if x
    ]
    if pre:
        rows.append(("preemptions", ", ".join(pre)))
    if e.get("error_kinds"):
        rows.append(("errors", ", ".join(f"{k} ×{n}" for k, n in e["error_kinds"].items())))
    if c.flags:
        rows.append(("flags", " ".join(f"{k}={v}" for k, v in c.flags.items())))
    return rows


def render_text(diag: Diagnosis) -> str:
    out = []
    for inst in diag.instances:
        out.append(f"== {inst.name}")
        for s in inst.sources:
            out.append(
                f"   source: {s['path']} ({s['lines']:,} lines, {s['parsed_lines']:,} vLLM lines, {s.get('format') or 'no stats lines'})"
            )
        for k, v in _engine_lines(inst):
            out.append(f"   {k:<22} {v}")
        out.append("")
        if inst.findings:
            out.append("   Findings")
            for f in inst.findings:
                out.append(f"   [{f.severity.upper():8}] {f.id}: {f.title}")
                out.append(f"              {f.evidence}")
                if f.where:
                    out.append(f"              at {f.where}")
        else:
            out.append("   No problems found.")
        if inst.recommendations:
            out.append("")
            out.append("   Recommendations")
            for r in inst.recommendations:
                out.append(
                    f"   {r.flag} {_fv(r.current)} → {_fv(r.suggested)}   ({', '.join(r.finding_ids)})"
                )
                out.append(f"              {r.reason}")
                if r.expected_effect:
                    out.append(f"              expected: {r.expected_effect}")
            if inst.command:
                out.append("")
                out.append("   Command:")
                out.append(f"   {inst.command}")
        out.append("")
    for u in diag.unreadable:
        out.append(f"could not read {u['path']}: {u['reason']}")
    return "\n".join(out).rstrip() + "\n"


def _md_cell(x: Any) -> str:
    return _v(x).replace("|", "\\|").replace("\n", " ").replace("<", "&lt;").replace(">", "&gt;")


def render_markdown(diag: Diagnosis) -> str:
    out = ["# observe diagnosis", ""]
    for inst in diag.instances:
        out += [f"## {_md_cell(inst.name)}", "", "| | |", "|---|---|"]
        out += [f"| {_md_cell(k)} | {_md_cell(v)} |" for k, v in _engine_lines(inst)]
        out += ["", "### Findings", ""]
        if inst.findings:
            out += ["| severity | id | evidence |", "|---|---|---|"]
            out += [f"| {f.severity} | `{f.id}` | {_md_cell(f.evidence)} |" for f in inst.findings]
        else:
            out.append("No problems found.")
        if inst.recommendations:
            out += [
                "",
                "### Recommendations",
                "",
                "| flag | current | suggested | why | expected effect |",
                "|---|---|---|---|---|",
            ]
            out += [
                f"| `{r.flag}` | {_md_cell(_fv(r.current))} | {_md_cell(_fv(r.suggested))} | {_md_cell(r.reason)} | {_md_cell(r.expected_effect)} |"
                for r in inst.recommendations
            ]
            if inst.command:
                out += ["", "```sh", inst.command.replace("```", "'''"), "```"]
        out.append("")
    if diag.unreadable:
        out += ["## Not read", ""] + [
            f"- {_md_cell(u['path'])}: {_md_cell(u['reason'])}" for u in diag.unreadable
        ]
    return "\n".join(out).rstrip() + "\n"


def render(diag: Diagnosis, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(to_dict(diag), indent=2, ensure_ascii=False) + "\n"
    if fmt == "text":
        return render_text(diag)
    if fmt == "markdown":
        return render_markdown(diag)
    if fmt == "html":
        from observe import report_html

        return report_html.render_html(diag)
    raise ObserveError(f"unknown format {fmt!r} (text, json, markdown, html)")


_SEV_STYLE = {"critical": "bold red", "warning": "yellow", "info": "cyan"}


def print_rich(diag: Diagnosis, console=None) -> None:
    """Rich tables on the terminal (falls back to plain text when stdout is not a terminal)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = console or Console()
    if not con.is_terminal and console is None:
        con.file.write(render_text(diag))
        return
    for inst in diag.instances:
        t = Table(title=escape(inst.name), show_header=False, title_justify="left")
        t.add_column(style="bold")
        t.add_column()
        for k, v in _engine_lines(inst):
            t.add_row(escape(k), escape(v))
        con.print(t)
        if inst.findings:
            ft = Table(title="Findings", title_justify="left")
            for col in ("severity", "finding", "evidence"):
                ft.add_column(col)
            for f in inst.findings:
                ft.add_row(
                    f"[{_SEV_STYLE[f.severity]}]{f.severity}[/]",
                    escape(f"{f.id}\n{f.title}"),
                    escape(f.evidence),
                )
            con.print(ft)
        else:
            con.print("[green]No problems found.[/]")
        if inst.recommendations:
            rt = Table(title="Recommendations", title_justify="left")
            for col in ("flag", "current → suggested", "why", "expected effect"):
                rt.add_column(col)
            for r in inst.recommendations:
                rt.add_row(
                    escape(r.flag),
                    escape(f"{_fv(r.current)} → {_fv(r.suggested)}"),
                    escape(r.reason),
                    escape(r.expected_effect or "—"),
                )
            con.print(rt)
            if inst.command:
                con.print("[bold]Command:[/]")
                con.print(escape(inst.command), soft_wrap=True)
    for u in diag.unreadable:
        con.print(f"[yellow]could not read {escape(u['path'])}: {escape(u['reason'])}[/]")
