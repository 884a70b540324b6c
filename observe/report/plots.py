"""observe's timeline plots: which timeline columns each chart shows, their colours, the KV-cache
threshold lines and the finding bands. Drawing is svg.py's job.

The input is an instance's timeline frame (see svg.py for what a frame must offer) and its
findings (anything with id, severity, title, start, end).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from observe.model import severity_rank
from observe.report import style
from observe.report.svg import Band, Plot, Series, TimeAxis, column
from observe.settings import Settings

SEVERITY_COLORS = style.COLOR  # the one severity style (observe.report.style)

#: Colours for a plotted column that has none of its own in _COLORS.
PALETTE = ("#2f6fb3", "#3a9d5d", "#8e44ad", "#c0392b", "#d4a017", "#16a2b8")

#: KV-cache usage (percent) past which the engine is near full, and past which it is full.
_DEFAULTS = Settings()  # the KV lines a plot gets when the caller passes no settings
KV_HIGH_PCT = _DEFAULTS.kv_high_pct
KV_FULL_PCT = _DEFAULTS.kv_full_pct

# (plot key, title, unit, fixed max, [(column, label, dashed), ...])
_PLOTS: tuple[tuple[str, str, str, float | None, tuple[tuple[str, str, bool], ...]], ...] = (
    (
        "throughput",
        "Throughput",
        "tokens/s",
        None,
        (
            ("prompt_tps", "prompt", False),
            ("generation_tps", "generation", False),
            ("m_prompt_tps", "prompt (/metrics)", True),
            ("m_generation_tps", "generation (/metrics)", True),
        ),
    ),
    (
        "requests",
        "Requests: running and waiting",
        "requests",
        None,
        (
            ("running", "running", False),
            ("waiting", "waiting", False),
            ("swapped", "swapped", False),
            ("m_running", "running (/metrics)", True),
            ("m_waiting", "waiting (/metrics)", True),
        ),
    ),
    (
        "kv",
        "KV-cache usage",
        "%",
        100.0,
        (
            ("kv_usage_pct", "KV cache usage", False),
            ("cpu_kv_usage_pct", "CPU swap KV usage", False),
            ("m_kv_usage_pct", "KV cache usage (/metrics)", True),
        ),
    ),
    (
        "preemptions",
        "Preemptions",
        "preemptions",
        None,
        (
            ("cumulative_preemptions", "cumulative (log)", False),
            ("m_preemptions_total", "total (/metrics)", True),
        ),
    ),
    (
        "ttft",
        "Time to first token (from /metrics)",
        "seconds",
        None,
        (("ttft_p50", "p50", False), ("ttft_p95", "p95", False), ("ttft_p99", "p99", False)),
    ),
    (
        "itl",
        "Inter-token latency (from /metrics)",
        "seconds",
        None,
        (("itl_p50", "p50", False), ("itl_p95", "p95", False), ("itl_p99", "p99", False)),
    ),
)

# A /metrics column is drawn only when its log twin is absent (they measure the same thing).
_TWINS = {
    "m_running": "running",
    "m_waiting": "waiting",
    "m_kv_usage_pct": "kv_usage_pct",
    "m_prompt_tps": "prompt_tps",
    "m_generation_tps": "generation_tps",
}

_COLORS = {
    "prompt_tps": "#2f6fb3",
    "generation_tps": "#3a9d5d",
    "m_prompt_tps": "#2f6fb3",
    "m_generation_tps": "#3a9d5d",
    "running": "#2f6fb3",
    "waiting": "#d0312d",
    "swapped": "#8e44ad",
    "m_running": "#2f6fb3",
    "m_waiting": "#d0312d",
    "kv_usage_pct": "#2f6fb3",
    "cpu_kv_usage_pct": "#8e44ad",
    "m_kv_usage_pct": "#16a2b8",
    "cumulative_preemptions": "#8e44ad",
    "m_preemptions_total": "#c0392b",
    "ttft_p50": "#3a9d5d",
    "ttft_p95": "#e8890c",
    "ttft_p99": "#d0312d",
    "itl_p50": "#3a9d5d",
    "itl_p95": "#e8890c",
    "itl_p99": "#d0312d",
}

#: The columns a one-row timeline shows as a table (column, label), in reading order.
ROW_LABELS = (
    ("kv_usage_pct", "KV-cache usage %"),
    ("running", "running"),
    ("waiting", "waiting"),
    ("swapped", "swapped"),
    ("prompt_tps", "prompt tokens/s"),
    ("generation_tps", "generation tokens/s"),
    ("prefix_hit_pct", "prefix-cache hit %"),
    ("cumulative_preemptions", "cumulative preemptions"),
    ("m_kv_usage_pct", "KV-cache usage % (/metrics)"),
    ("ttft_p99", "TTFT p99 (s)"),
    ("itl_p99", "ITL p99 (s)"),
)


def kv_thresholds(kv_high_pct: float, kv_full_pct: float) -> tuple[tuple[float, str, str], ...]:
    """The dashed lines of the KV plot: (percent, colour, label)."""
    return (
        (kv_high_pct, SEVERITY_COLORS["warning"], f"{kv_high_pct:g}%"),
        (kv_full_pct, SEVERITY_COLORS["critical"], f"{kv_full_pct:g}%"),
    )


def build_plots(
    frame: Any,
    axis: TimeAxis,
    times: Sequence[datetime],
    *,
    kv_high_pct: float = KV_HIGH_PCT,
    kv_full_pct: float = KV_FULL_PCT,
) -> list[Plot]:
    """The plots an instance's frame supports, in reading order; absent columns are skipped.

    The KV plot draws dashed lines at ``kv_high_pct`` and ``kv_full_pct`` percent.
    """
    secs = [(t - axis.t0).total_seconds() for t in times]
    plots: list[Plot] = []
    for key, title, unit, fixed, cols in _PLOTS:
        series = []
        for i, (col, label, dashed) in enumerate(cols):
            if col in _TWINS and column(frame, _TWINS[col]) is not None:
                continue
            vals = column(frame, col)
            if vals is None:
                continue
            if col == "cpu_kv_usage_pct" and not any(vals):
                continue  # V0 prints 0.0% swap usage on every line; an all-zero line is noise
            series.append(Series(col, label, _COLORS.get(col, PALETTE[i % len(PALETTE)]), secs, vals, dashed))
        events = None
        note = ""
        thresholds: tuple[tuple[float, str, str], ...] = ()
        if key == "preemptions":
            # V0 prints a warning per 50 preemptions; V1 ≥ 0.11.1 a per-interval count on its stats line
            for col, label in (
                ("preemption_warnings", "preemption warning (log)"),
                ("preemptions", "preemptions in the interval (log)"),
            ):
                vals = column(frame, col)
                if vals is not None and any(vals):
                    events = Series(col, label, SEVERITY_COLORS["critical"], secs, vals)
                    break
            if not series and events is None:
                rate = column(frame, "m_preemption_rate")
                if rate is not None:
                    series.append(Series("m_preemption_rate", "rate (/metrics)", "#c0392b", secs, rate))
                    unit = "per second"
            if not series and events is None:
                continue
            if not series:
                note = "Red ticks mark the rows where the log reports preemptions."
        elif not series:
            continue
        if key == "kv":
            thresholds = kv_thresholds(kv_high_pct, kv_full_pct)
            note = (
                f"Dashed lines: {kv_high_pct:g} % and {kv_full_pct:g} % — past {kv_full_pct:g} % "
                "new requests wait and running ones get preempted."
            )
        if key == "preemptions" and events is None and all(not any(v for v in s.vals if v) for s in series):
            note = "No preemption was recorded."
        integer = key in ("requests", "preemptions")
        plots.append(Plot(key, title, unit, series, fixed, thresholds, events, note, integer))
    return plots


def finding_bands(findings: Iterable[Any], axis: TimeAxis | None) -> list[Band]:
    """Findings that carry a time window, as bands coloured by severity, worst drawn last (on top).

    A finding without an end is an instant (start = end).
    """
    if axis is None:
        return []
    bands = []
    for f in findings:
        start = getattr(f, "start", None)
        if start is None:
            continue
        end = getattr(f, "end", None) or start
        if getattr(start, "tzinfo", None) is not None:
            start = start.replace(tzinfo=None)
        if getattr(end, "tzinfo", None) is not None:
            end = end.replace(tzinfo=None)
        sev = str(f.severity)
        bands.append(Band(str(f.id), sev, str(f.title), start, end, SEVERITY_COLORS.get(sev, "#888")))
    bands.sort(key=lambda b: severity_rank(b.severity))
    return bands
