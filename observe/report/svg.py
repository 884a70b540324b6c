"""A small inline-SVG toolkit for time plots: axes, time axis, scales, series, bands, escaping.

Why hand-written SVG: the report must open from a file, offline, under a Content-Security-Policy
that forbids scripts, and must stay small for a day of logs. So there is no JavaScript, no CDN,
no font, no image file: every chart is an <svg> drawn here, each series downsampled to at most two
points (min and max) per pixel column so that peaks survive and size does not grow with the
length of the input. Text that reaches the SVG goes through :func:`escape` (html.escape).

Nothing here knows which columns a report plots or what a finding is: a :class:`Plot` lists its
series, threshold lines and event ticks, a :class:`Band` is a shaded time window with a colour.
A frame is anything with ``.index`` (datetimes), ``.columns`` and ``frame[col]``.
"""

from __future__ import annotations

import html
import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

# Geometry of every plot, in SVG user units (the <svg> scales to the page width).
WIDTH = 960
HEIGHT = 190
MARGIN_LEFT = 62
MARGIN_RIGHT = 30
MARGIN_TOP = 10
MARGIN_BOTTOM = 26
PLOT_W = WIDTH - MARGIN_LEFT - MARGIN_RIGHT
PLOT_H = HEIGHT - MARGIN_TOP - MARGIN_BOTTOM

#: At or below this many drawn points per series, each point also gets a marker (sparse logs).
MARKER_LIMIT = 80


def escape(value: Any) -> str:
    """Escape anything for HTML text or a quoted attribute."""
    return html.escape("" if value is None else str(value), quote=True)


# ───────────────────────────── number and time formatting ─────────────────────────────


def fmt_num(v: Any) -> str:
    """Human number: thousands separators, at most 3 significant decimals, None → '—'."""
    if v is None:
        return "—"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return f"{v:,}"
    if isinstance(v, float):
        if math.isnan(v):
            return "—"
        if v.is_integer() and abs(v) < 1e15:
            return f"{int(v):,}"
        if abs(v) >= 100:
            return f"{v:,.1f}"
        if abs(v) >= 1:
            return f"{v:,.2f}"
        return f"{v:.3g}"
    return str(v)


def fmt_tick(v: float, step: float) -> str:
    """Axis label: 12k, 1.5M, 0.25 — as short as the tick step allows."""
    a = abs(v)
    if a >= 1e6 and step >= 1e5:
        return f"{v / 1e6:g}M"
    if a >= 1e3 and step >= 100:
        return f"{v / 1e3:g}k"
    if step >= 1:
        return f"{v:.0f}"
    digits = max(0, -int(math.floor(math.log10(step))) + 1)
    return f"{v:.{digits}f}".rstrip("0").rstrip(".") or "0"


def fmt_time(t: datetime | None) -> str:
    return "—" if t is None else t.strftime("%Y-%m-%d %H:%M:%S")


def fmt_duration(seconds: float) -> str:
    seconds = int(round(seconds))
    h, rem = divmod(seconds, 3600)
    m, s = divmod(rem, 60)
    if h:
        return f"{h} h {m:02d} min"
    if m:
        return f"{m} min {s:02d} s"
    return f"{s} s"


# ───────────────────────────── scales ─────────────────────────────


def nice_step(span: float, target_ticks: int = 4) -> float:
    """A 1/2/2.5/5 × 10^k step giving about ``target_ticks`` intervals over ``span``."""
    if span <= 0 or not math.isfinite(span):
        return 1.0
    raw = span / target_ticks
    mag = 10 ** math.floor(math.log10(raw))
    for m in (1, 2, 2.5, 5, 10):
        if raw <= m * mag:
            return m * mag
    return 10 * mag


_TIME_STEPS = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)


@dataclass
class TimeAxis:
    """Maps datetimes to x in SVG units; shared by every plot of one instance so bands align."""

    t0: datetime
    t1: datetime

    @property
    def span(self) -> float:
        return max((self.t1 - self.t0).total_seconds(), 1e-9)

    def x(self, t: datetime) -> float:
        return MARGIN_LEFT + (t - self.t0).total_seconds() / self.span * PLOT_W

    def x_of_seconds(self, s: float) -> float:
        return MARGIN_LEFT + s / self.span * PLOT_W

    def ticks(self) -> list[tuple[float, str]]:
        step = next((s for s in _TIME_STEPS if self.span / s <= 8), 86400 * math.ceil(self.span / 86400 / 8))
        start = self.t0.replace(microsecond=0)
        midnight = start.replace(hour=0, minute=0, second=0)
        offset = (start - midnight).total_seconds()
        first = midnight + timedelta(seconds=math.ceil(offset / step) * step)
        out: list[tuple[float, str]] = []
        t, prev_day = first, None
        while t <= self.t1:
            fmt = "%H:%M:%S" if step < 60 else "%H:%M"
            if self.t1.date() != self.t0.date() and t.date() != prev_day:
                fmt = "%m-%d " + fmt
            out.append((self.x(t), t.strftime(fmt)))
            prev_day = t.date()
            t += timedelta(seconds=step)
        return out


def y_scale(vmax: float, fixed_max: float | None = None, integer: bool = False) -> tuple[float, float]:
    """(axis max, tick step) for data whose maximum is ``vmax`` (axis starts at 0).

    ``integer`` axes (request and preemption counts) never get fractional ticks.
    """
    if fixed_max is not None:
        return fixed_max, nice_step(fixed_max, 5)
    if not math.isfinite(vmax) or vmax <= 0:
        return (1.0, 1.0) if integer else (1.0, 0.25)
    step = nice_step(vmax, 4)
    if integer:
        step = max(1.0, math.ceil(step))
    return step * math.ceil(vmax / step - 1e-9) or step, step


def y_of(v: float, ymax: float) -> float:
    """Data value → y in SVG units for an axis from 0 to ``ymax``."""
    return MARGIN_TOP + PLOT_H - (v / ymax) * PLOT_H


# ───────────────────────────── series extraction and downsampling ─────────────────────────────


@dataclass
class Series:
    """One line on a plot: a frame column's finite values at their seconds from t0."""

    key: str
    label: str
    color: str
    secs: list[float] = field(default_factory=list)
    vals: list[float | None] = field(default_factory=list)  # None = missing (breaks the line)
    dashed: bool = False

    def finite(self) -> list[float]:
        return [v for v in self.vals if v is not None]


def _to_float(v: Any) -> float | None:
    try:
        f = float(v)
    except (TypeError, ValueError):
        return None
    return f if math.isfinite(f) else None


def frame_times(frame: Any) -> list[datetime]:
    """The frame's index as naive datetimes; [] when the rows carry no time (nothing to plot)."""
    if frame is None or not len(frame.index):
        return []
    idx = frame.index
    if hasattr(idx, "to_pydatetime"):
        idx = idx.to_pydatetime()
    out = []
    for t in idx:
        if not isinstance(t, datetime):
            return []
        out.append(t.replace(tzinfo=None) if t.tzinfo is not None else t)
    return out


def column(frame: Any, key: str) -> list[float | None] | None:
    """Column values as floats (None for NaN/missing), or None when absent or all-missing."""
    if frame is None or key not in list(frame.columns):
        return None
    col = frame[key]
    raw = col.tolist() if hasattr(col, "tolist") else list(col)
    vals = [_to_float(v) for v in raw]
    return vals if any(v is not None for v in vals) else None


def gap_threshold(secs: Sequence[float]) -> float:
    """Seconds between two readings beyond which the line breaks: 5× their median spacing.

    Rows of a joined frame come from two sources (stats lines, scrapes), so a missing value in
    one row means "not measured here", not "gap"; only a long silence (a restart, a hole in the
    logs) breaks the line.
    """
    if len(secs) < 3:
        return math.inf
    steps = sorted(b - a for a, b in zip(secs, secs[1:]))
    return max(5.0 * steps[len(steps) // 2], 1.0)


def downsample(
    secs: Sequence[float], vals: Sequence[float | None], axis: TimeAxis
) -> list[list[tuple[float, float]]]:
    """A series' readings as runs of (x, value), keeping each pixel column's min and max in time order.

    Min/max per column keeps every peak (the maximum KV usage is always drawn exactly) while a
    day of 10 s samples shrinks to at most two points per pixel.
    """
    pts = sorted(((s, v) for s, v in zip(secs, vals) if v is not None), key=lambda p: p[0])
    limit = gap_threshold([s for s, _ in pts])
    runs: list[list[tuple[float, float]]] = []
    run: list[tuple[float, float]] = []
    bucket: int | None = None
    lo: tuple[int, float, float] | None = None  # (order, x, value) of the column's min
    hi: tuple[int, float, float] | None = None  # ... and max
    prev_s: float | None = None

    def flush() -> None:
        nonlocal lo, hi
        if lo is not None and hi is not None:
            run.extend((x, v) for _, x, v in sorted({lo, hi}))
        lo = hi = None

    for order, (s, v) in enumerate(pts):
        if prev_s is not None and s - prev_s > limit:
            flush()
            runs.append(run)
            run, bucket = [], None
        prev_s = s
        x = axis.x_of_seconds(s)
        col = int(x - MARGIN_LEFT)
        if col != bucket:
            flush()
            bucket = col
        pt = (order, x, v)
        if lo is None or v < lo[2]:
            lo = pt
        if hi is None or v > hi[2]:
            hi = pt
    flush()
    if run:
        runs.append(run)
    return runs


# ───────────────────────────── SVG drawing ─────────────────────────────


@dataclass
class Band:
    """A shaded time window on the x axis: a finding's, named by its id, severity and title."""

    finding_id: str
    severity: str  # also the band's CSS class: sev-<severity>
    title: str
    start: datetime
    end: datetime
    color: str = "#888"


def _svg_bands(bands: Iterable[Band], axis: TimeAxis) -> list[str]:
    out = []
    for b in bands:
        s, e = max(b.start, axis.t0), min(b.end, axis.t1)
        if e < s:
            continue
        x0, x1 = axis.x(s), axis.x(e)
        w = max(x1 - x0, 3.0)  # an instant finding still shows as a thin band
        if x1 - x0 < 3.0:
            x0 = max(MARGIN_LEFT, min(x0 - 1.5, MARGIN_LEFT + PLOT_W - w))
        out.append(
            f'<rect class="band sev-{escape(b.severity)}" data-finding="{escape(b.finding_id)}" '
            f'x="{x0:.1f}" y="{MARGIN_TOP}" width="{w:.1f}" height="{PLOT_H}" fill="{b.color}" '
            f'fill-opacity="0.16"><title>{escape(b.severity)}: {escape(b.title)} '
            f"({escape(fmt_time(b.start))} → {escape(fmt_time(b.end))})</title></rect>"
        )
    return out


def _svg_axes(axis: TimeAxis, ymax: float, ystep: float, unit: str) -> list[str]:
    out = [
        f'<rect class="plot" x="{MARGIN_LEFT}" y="{MARGIN_TOP}" width="{PLOT_W}" height="{PLOT_H}" '
        'fill="#fff" stroke="#c8ccd2"/>'
    ]
    n = int(round(ymax / ystep))
    for i in range(n + 1):
        v = i * ystep
        y = y_of(v, ymax)
        out.append(
            f'<line class="grid" x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + PLOT_W}" y1="{y:.1f}" y2="{y:.1f}" '
            'stroke="#eceef1"/>'
        )
        out.append(
            f'<text x="{MARGIN_LEFT - 6}" y="{y + 4:.1f}" text-anchor="end" class="tick">'
            f"{escape(fmt_tick(v, ystep))}</text>"
        )
    for x, label in axis.ticks():
        base = MARGIN_TOP + PLOT_H
        out.append(f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{base}" y2="{base + 4}" stroke="#888"/>')
        out.append(
            f'<text x="{x:.1f}" y="{HEIGHT - 8}" text-anchor="middle" class="tick">{escape(label)}</text>'
        )
    if unit:
        out.append(
            f'<text x="14" y="{MARGIN_TOP + PLOT_H / 2:.1f}" class="unit" text-anchor="middle" '
            f'transform="rotate(-90 14 {MARGIN_TOP + PLOT_H / 2:.1f})">{escape(unit)}</text>'
        )
    return out


def _svg_series(series: Series, axis: TimeAxis, ymax: float) -> list[str]:
    runs = downsample(series.secs, series.vals, axis)
    out = []
    dash = ' stroke-dasharray="5 3"' if series.dashed else ""
    total = sum(len(r) for r in runs)
    # a dense series is an envelope of min/max strokes: thinner and translucent so that
    # overlapping series (running under waiting) stay visible
    width = "1.6" if total <= 4 * MARKER_LIMIT else '1" stroke-opacity="0.8'
    for run in runs:
        pts = " ".join(f"{x:.1f},{y_of(v, ymax):.1f}" for x, v in run)
        if len(run) > 1:
            out.append(
                f'<polyline class="series" data-series="{escape(series.key)}" fill="none" stroke="{series.color}" '
                f'stroke-width="{width}" stroke-linejoin="round"{dash} points="{pts}"/>'
            )
        if total <= MARKER_LIMIT or len(run) == 1:
            for x, v in run:
                out.append(
                    f'<circle class="point" data-series="{escape(series.key)}" cx="{x:.1f}" cy="{y_of(v, ymax):.1f}" '
                    f'r="2.6" fill="{series.color}"><title>{escape(series.label)}: {escape(fmt_num(v))}</title></circle>'
                )
    return out


def _svg_events(events: Series, axis: TimeAxis) -> list[str]:
    """Event counts (preemption warnings) as ticks along the bottom of the plot, one per pixel column."""
    key, label, color = events.key, events.label, events.color
    cols: dict[int, tuple[float, float]] = {}
    for s, v in zip(events.secs, events.vals):
        if v is None or v <= 0:
            continue
        x = axis.x_of_seconds(s)
        c = int(x - MARGIN_LEFT)
        px, pv = cols.get(c, (x, 0.0))
        cols[c] = (px, pv + v)
    base = MARGIN_TOP + PLOT_H
    return [
        f'<rect class="event" data-series="{escape(key)}" x="{x - 1.5:.1f}" y="{base - 14}" width="3" height="14" '
        f'fill="{color}"><title>{escape(fmt_num(n))} × {escape(label)}</title></rect>'
        for x, n in cols.values()
    ]


@dataclass
class Plot:
    """What one chart shows; rendered by :func:`svg_plot`."""

    key: str
    title: str
    unit: str
    series: list[Series]
    fixed_max: float | None = None
    thresholds: Sequence[tuple[float, str, str]] = ()
    events: Series | None = None
    note: str = ""
    integer: bool = False


def svg_plot(plot: Plot, axis: TimeAxis, bands: Sequence[Band]) -> str:
    """One <svg> chart: axes, finding bands, threshold lines, series, event ticks."""
    vmax = max((v for s in plot.series for v in s.finite()), default=0.0)
    ymax, ystep = y_scale(vmax, plot.fixed_max, plot.integer)
    if plot.fixed_max is not None and vmax > ymax:  # e.g. a KV reading above 100 %
        ymax, ystep = y_scale(vmax)
    parts = [
        f'<svg class="chart" data-plot="{escape(plot.key)}" data-ymax="{ymax:g}" xmlns="http://www.w3.org/2000/svg" '
        f'viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{escape(plot.title)}">'
    ]
    parts += _svg_axes(axis, ymax, ystep, plot.unit)
    parts += _svg_bands(bands, axis)
    top = max((t[0] for t in plot.thresholds), default=None)
    for value, color, label in plot.thresholds:
        y = y_of(value, ymax)
        label_y = y - 3 if value == top else y + 11
        parts.append(
            f'<line class="threshold" data-value="{value:g}" x1="{MARGIN_LEFT}" x2="{MARGIN_LEFT + PLOT_W}" '
            f'y1="{y:.1f}" y2="{y:.1f}" stroke="{color}" stroke-width="1.2" stroke-dasharray="6 4"/>'
        )
        parts.append(
            f'<text class="threshold-label" x="{MARGIN_LEFT + 4}" y="{label_y:.1f}" text-anchor="start" '
            f'fill="{color}">{escape(label)}</text>'
        )
    for s in plot.series:
        parts += _svg_series(s, axis, ymax)
    if plot.events is not None:
        parts += _svg_events(plot.events, axis)
    parts.append("</svg>")
    return "".join(parts)


def time_axis(times: Sequence[datetime]) -> TimeAxis | None:
    """The time axis over ``times``: first to last (widened to a minute when they span under 1 s)."""
    if not times:
        return None
    t0, t1 = min(times), max(times)
    if (t1 - t0).total_seconds() < 1:
        t0, t1 = t0 - timedelta(seconds=30), t1 + timedelta(seconds=30)
    return TimeAxis(t0, t1)
