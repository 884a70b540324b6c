"""Diagnosis → plain text, and the same as rich tables on a terminal."""

from __future__ import annotations

import shlex
from typing import TYPE_CHECKING, Any

from observe import launches
from observe.advise.units import parse_bytes
from observe.failures import shutdown
from observe.flags import cmdline
from observe.model import severity_rank
from observe.report import style
from observe.report.labels import preemption_count
from observe.rules import table

if TYPE_CHECKING:
    from rich.console import Console

    from observe.diagnosis import Diagnosis, InstanceDiagnosis


def value_text(x: Any) -> str:
    """A value for a reader: thousands separators, at most two decimals, None → '—'."""
    if x is None:
        return "—"
    if isinstance(x, float):
        return f"{x:,.2f}".rstrip("0").rstrip(".") if abs(x) < 1e6 else f"{x:,.0f}"
    if isinstance(x, int) and not isinstance(x, bool):
        return f"{x:,}"
    return str(x)


def count_text(n: int, word: str, plural: str | None = None) -> str:
    """`1 line`, `2 lines`, `1,024 lines`."""
    return f"{n:,} {word if n == 1 else plural or word + 's'}"


def size_text(gib: float | None) -> str:
    """A size given in GiB as a reader wants it: MiB below 1 GiB, GiB (two decimals at most) above."""
    if gib is None:
        return "—"
    if gib == 0:
        return "0 GiB"  # vLLM printed 0.0: a size below its rounding, not a measured 0 MiB
    if abs(gib) < 1:
        return f"{value_text(round(gib * 1024, 1))} MiB"
    return f"{value_text(gib)} GiB"


def kv_memory_text(c: Any) -> str | None:
    """The KV-cache memory of an engine: the exact figure when --kv-cache-memory-bytes sets it
    (vLLM's own line rounds it to two decimals of GiB: 2 MiB reads "0.0 GiB"), else vLLM's figure."""
    exact = (
        parse_bytes(c.flags.get("--kv-cache-memory-bytes"))
        if c.flags.get("--kv-cache-memory-bytes")
        else None
    )
    if exact:
        return f"{size_text(exact / 2**30)} (--kv-cache-memory-bytes {exact:,})"
    if c.available_kv_gib is not None:
        return size_text(c.available_kv_gib) + (
            " (vLLM's figure, rounded)" if c.available_kv_gib < 0.01 else ""
        )
    return None


def flags_text(flags: dict) -> str:
    """The flags as a user types them: `--served-model-name tiny-llama --enforce-eager`."""
    return shlex.join(cmdline.render_argv(flags, skip=()))


def unexplained_errors(inst: InstanceDiagnosis) -> int:
    """The failures the log counted (errors, exceptions, ERROR records), less the noise of a requested
    stop: a report may say "no problems found" only where this is 0."""
    s = getattr(inst, "summary", None)
    if s is None:
        return 0
    return sum(1 for e in s.errors if not shutdown.is_noise(e))


def no_findings_text(inst: InstanceDiagnosis) -> str:
    """What an instance without findings gets: "No problems found." — never beside a counted failure
    (the catch-all ``engine_error`` makes that case rare; this keeps it impossible)."""
    n = unexplained_errors(inst)
    if n:
        return (
            f"No finding, but the log holds {count_text(n, 'error')} that no detector explains: "
            "read them before trusting this engine."
        )
    return "No problems found."


def summary_line(diag: Diagnosis) -> str:
    """One line for the top of a report: the worst finding and the one change to make for it; a
    crash, hang or failed start of an earlier launch first when it is worse than the latest's."""
    latest = _latest_line(diag)
    earlier = [(i, x) for i in diag.instances if (x := _history(i).worst()) is not None]
    if not earlier:
        return latest
    inst, fail = max(earlier, key=lambda p: severity_rank(p[1].finding.severity))
    worst_now = max((severity_rank(f.severity) for i in diag.instances for f in i.findings), default=-1)
    if severity_rank(fail.finding.severity) <= worst_now:
        return latest  # the latest launch's is as bad: it leads (the earlier ones are listed below)
    where = f" in {inst.name}" if len(diag.instances) > 1 else ""
    f = fail.finding
    return (
        f"Summary: worst finding{where} ({f.severity}): {f.title} [{f.id}] in an earlier launch "
        f"({failed_in_text(fail, inst)}). Latest launch: {latest.removeprefix('Summary: ')}"
    )


def _history(inst: Any) -> launches.History:
    """An instance's earlier launches (none for an instance built without them)."""
    return getattr(inst, "history", None) or launches.History()


def failed_in_text(fail: Any, inst: InstanceDiagnosis) -> str:
    """`launch 3 of 5`, or `4 launches, the latest 7 of 9`: where a history failure was seen."""
    of = len(inst.launches) + _history(inst).dropped
    if fail.launches == 1:
        return f"launch {fail.last} of {of}"
    return f"{fail.launches} launches, the latest {fail.last} of {of}"


def _latest_line(diag: Diagnosis) -> str:
    pairs = [(inst, f) for inst in diag.instances for f in inst.findings]
    n = len(diag.instances)
    if not pairs:
        errs = sum(unexplained_errors(i) for i in diag.instances)
        if errs:
            return f"Summary: no finding, but {count_text(errs, 'error')} counted that no detector explains."
        return f"Summary: no problems found ({count_text(n, 'instance')})."
    # the first of the worst; at one severity a finding that explains a failed start (a "cause") leads
    # the failure it explains (its note says so): the headline names what to change
    role = {fid: d.role for fid, d in table.docs().items()}
    inst, worst = max(pairs, key=lambda p: (severity_rank(p[1].severity), role.get(p[1].id) == "cause"))
    where = f" in {inst.name}" if n > 1 else ""
    line = f"Summary: worst finding{where} ({worst.severity}): {worst.title} [{worst.id}]."
    recs = [r for r in inst.recommendations if worst.id in r.finding_ids] or list(inst.recommendations)
    if recs:
        r = recs[0]
        now = f" (now {current_text(r)})" if r.current is not None else ""
        return line + f" The one change: {shlex.join(cmdline.render(r.flag, r.suggested))}{now}."
    return line + " No flag change answers it: see the notes."


def flag_text(x: Any) -> str:
    """A flag value as typed on the command line (no thousands separators); None = unknown."""
    if x is None:
        return "unknown"
    if isinstance(x, float) and x.is_integer():
        return str(int(x))
    return str(x)


def current_text(r: Any) -> str:
    """The value in force of a recommendation: 'unknown', or vLLM's default marked as such."""
    return flag_text(r.current) + (
        " (vLLM default)" if r.current is not None and r.current_is_default else ""
    )


def alternative_text(a: Any) -> str:
    """One alternative as a line: `--flag value: effect`."""
    return f"{a.flag} {flag_text(a.suggested)}" + (f": {a.expected_effect}" if a.expected_effect else "")


def engine_lines(inst: InstanceDiagnosis) -> list[tuple[str, str]]:
    """(label, value) rows about the engine, its stats and its events, shared by text, markdown, rich."""
    c = inst.config
    rows = [
        ("vLLM version", value_text(c.version)),
        ("engine", value_text(c.engine)),
        ("model", value_text(c.model)),
    ]
    if getattr(c, "memory_env", None):
        rows.append(("memory from environment", ", ".join(f"{k}={v}" for k, v in c.memory_env.items())))
    if getattr(c, "flags_damaged", False):
        rows.append(("launch flags", "line cut or wrapped: flags not read are unknown, not defaults"))
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
    if (kv_mem := kv_memory_text(c)) is not None:
        rows.append(("KV memory", kv_mem))
    s = inst.stats
    if s.get("samples"):
        rows.append(
            (
                "stats lines",
                f"{s['samples']:,} ({value_text(s.get('stats_first'))} → {value_text(s.get('stats_last'))})",
            )
        )
        rows.append(("max KV usage", f"{value_text(s.get('max_kv_cache_usage_pct'))}%"))
        rows.append(
            (
                "max running / waiting",
                f"{value_text(s.get('max_running'))} / {value_text(s.get('max_waiting'))}",
            )
        )
        rows.append(("max gen throughput", f"{value_text(s.get('max_generation_throughput'))} tokens/s"))
    e = inst.events
    pre = preemption_count(e)
    if pre is not None and (pre[0] or pre[1] != "log warnings" or e.get("silent_preemptions")):
        others = [
            f"{e[k]:,} {what}"
            for k, what in (
                ("preemption_warnings", "log warnings"),
                ("cumulative_preemptions", "running total"),
            )
            if e.get(k) and e[k] != pre[0]
        ]
        rows.append(("preemptions", f"{pre[0]:,} (from {pre[1]})" + "".join(f", {o}" for o in others)))
    if e.get("error_kinds"):
        rows.append(("errors", ", ".join(f"{k} ×{n}" for k, n in e["error_kinds"].items())))
    if c.flags:
        rows.append(("flags", flags_text(c.flags)))
    return rows + launch_lines(inst)


SHOWN_LAUNCHES = 10  # earlier launches listed in a report (all of them are in the JSON)


def launch_lines(inst: InstanceDiagnosis) -> list[tuple[str, str]]:
    """(label, value) rows for a log that holds several launches: which one the report describes,
    and each earlier one as history (`launch 1 of 3`: `11-29 19:05:37 rejected: …`)."""
    runs = list(getattr(inst, "launches", None) or [])
    of = len(runs) + getattr(inst, "launches_dropped", 0)
    if of < 2:
        return []
    last = runs[-1]
    when = f", {last.start.strftime('%m-%d %H:%M:%S')}" if last.start else ""
    rows = [("launches", f"{of} in this log; this report is the latest (launch {last.index}{when})")]
    earlier = runs[:-1]
    if len(earlier) > SHOWN_LAUNCHES:
        rows.append(("", f"… {of - 1 - SHOWN_LAUNCHES:,} earlier launches not shown (see the JSON)"))
        earlier = earlier[-SHOWN_LAUNCHES:]
    for x in earlier:
        text = (x.start.strftime("%m-%d %H:%M:%S") + " " if x.start else "") + x.status
        failed = launches.failures(x)
        said = next((f for f in failed if f.title == x.reason), None)  # the finding its reason names
        if x.reason:
            text += f": {x.reason}" + (f" [{said.id}]" if said else "")
        if x.message:
            text += f" (vLLM: {_cut(x.message, 160)})"
        rows.append((f"launch {x.index} of {of}", text))
        for f in failed:  # each failure, and its cause: the evidence (vLLM's words above said one's)
            if f is not said or not x.message:
                rows.append(("", f"{f.severity}: {f.title} [{f.id}]: {_cut(f.evidence, 200)}"))
    return rows


def _cut(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def source_text(s: dict) -> str:
    """A source file line: `path (1 line, 0 vLLM lines, v1)`."""
    cut = s.get("cut_lines")
    return (
        f"{s['path']} ({count_text(s['lines'], 'line')}, {count_text(s['parsed_lines'], 'vLLM line')}, "
        f"{s.get('format') or 'no stats lines'}"
        + (f", {count_text(cut, 'line')} cut at {s.get('max_line_bytes', 0):,} bytes" if cut else "")
        + (f", {count_text(s['damaged_lines'], 'damaged record')}" if s.get("damaged_lines") else "")
        + ")"
    )


def unreadable_text(u: dict) -> str:
    """An entry of `Diagnosis.unreadable` as a line; `could not read` only for a file that could not
    be read (its `kind`, see pipeline: unreadable, truncated, binary, no_vllm_lines)."""
    kind = u.get("kind", "unreadable")
    if kind == "unreadable":
        return f"could not read {u['path']}: {u['reason']}"
    if kind == "truncated":
        return f"read only part of {u['path']}: {u['reason']}"
    if kind in ("no_samples", "lines_skipped", "several_servers", "host_only"):  # read, with a caveat
        return f"{u['path']}: {u['reason']}"
    return f"skipped {u['path']}: {u['reason']}"


def render_text(diag: Diagnosis) -> str:
    """The plain-text report."""
    out = [summary_line(diag), ""]
    for inst in diag.instances:
        out.append(f"== {inst.name}")
        for s in inst.sources:
            out.append(f"   source: {source_text(s)}")
        for k, v in engine_lines(inst):
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
            out.append("   " + no_findings_text(inst))
        if inst.recommendations or inst.notes:
            out.append("")
            out.append("   Recommendations")
            for r in inst.recommendations:
                out.append(
                    f"   {r.flag} {current_text(r)} → {flag_text(r.suggested)}   ({', '.join(r.finding_ids)})"
                )
                out.append(f"              {r.reason}")
                if r.expected_effect:
                    out.append(f"              expected: {r.expected_effect}")
                for c in r.coupled:
                    out.append(
                        f"              together with {c.flag} {current_text(c)} → {flag_text(c.suggested)}: {c.reason}"
                    )
                if r.alternatives:
                    out.append("              or, instead, any one of:")
                    for a in r.alternatives:
                        out.append(f"                - {alternative_text(a)}")
            for n in inst.notes:
                out.append(f"   note ({', '.join(n.finding_ids)}): {n.text}")
            if inst.command:
                out.append("")
                out.append("   Command:")
                out.append(f"   {inst.command}")
        out.append("")
    for u in diag.unreadable:
        out.append(unreadable_text(u))
    return "\n".join(out).rstrip() + "\n"


def print_rich(diag: Diagnosis, console: Console | None = None) -> None:
    """Rich tables on the terminal (falls back to plain text when stdout is not a terminal)."""
    from rich.console import Console
    from rich.markup import escape
    from rich.table import Table

    con = console or Console()
    if not con.is_terminal and console is None:
        con.file.write(render_text(diag))
        return
    con.print(escape(summary_line(diag)), style="bold")
    for inst in diag.instances:
        t = Table(title=escape(inst.name), show_header=False, title_justify="left")
        t.add_column(style="bold")
        t.add_column()
        for k, v in engine_lines(inst):
            t.add_row(escape(k), escape(v))
        con.print(t)
        if inst.findings:
            ft = Table(title="Findings", title_justify="left")
            for col in ("severity", "finding", "evidence"):
                ft.add_column(col)
            for f in inst.findings:
                ft.add_row(
                    f"[{style.TERMINAL[f.severity]}]{f.severity}[/]",
                    escape(f"{f.id}\n{f.title}"),
                    escape(f.evidence),
                )
            con.print(ft)
        else:
            text = no_findings_text(inst)
            con.print(f"[green]{text}[/]" if text == "No problems found." else f"[red]{escape(text)}[/]")
        if inst.recommendations:
            rt = Table(title="Recommendations", title_justify="left")
            for col in ("flag", "current → suggested", "why", "expected effect"):
                rt.add_column(col)
            for r in inst.recommendations:
                alts = "".join(
                    f"\ntogether with: {c.flag} {flag_text(c.suggested)} ({c.reason})" for c in r.coupled
                )
                alts += "".join(f"\nor instead: {alternative_text(a)}" for a in r.alternatives)
                rt.add_row(
                    escape(r.flag),
                    escape(f"{current_text(r)} → {flag_text(r.suggested)}"),
                    escape(r.reason),
                    escape((r.expected_effect or "—") + alts),
                )
            con.print(rt)
        for n in inst.notes:
            con.print(f"[bold]note[/] ({escape(', '.join(n.finding_ids))}): {escape(n.text)}")
            if inst.command:
                con.print("[bold]Command:[/]")
                con.print(escape(inst.command), soft_wrap=True)
    for u in diag.unreadable:
        con.print(f"[yellow]{escape(unreadable_text(u))}[/]")
