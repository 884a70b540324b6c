"""Log events and /metrics scrapes on one time axis (pandas lives here).

`Timeline` is fed one event at a time and keeps at most `max_rows` rows: when it is full, adjacent
rows are merged pairwise (maxima for levels, means for rates, sums for counts), so memory stays
flat however long the log is. Exact whole-run aggregates are kept elsewhere (diagnosis.Summary);
the timeline is for shapes over time: plots and the detectors that look at trends.

Scrapes become `m_*` columns joined to the nearest stats row within a tolerance (stats lines
come every 5–10 s, scrapes at their own interval). Pure: no I/O, no clock.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

from observe.metrics import metricmath, names
from observe.model import Preemption, Scrape, StatsSample


class _Pandas:
    """pandas, imported on first use: a log with nothing to plot or join does not pay for its import."""

    def __getattr__(self, name: str) -> Any:
        import pandas

        globals()["pd"] = pandas  # later uses here go straight to the module
        return getattr(pandas, name)


if TYPE_CHECKING:
    import pandas as pd
else:
    pd = _Pandas()

LOG_COLS = (
    "prompt_tps",
    "generation_tps",
    "running",
    "waiting",
    "swapped",
    "kv_usage_pct",
    "cpu_kv_usage_pct",
    "prefix_hit_pct",
    "preemptions",  # V1 per-interval field
)
EVENT_COLS = ("preemption_warnings", "cumulative_preemptions")
# the scrape columns: metricmath.reading's numbers, prefixed m_ (gauges, rates) or as tagged
# (latency quantiles over each scrape interval: ttft_p50 ... e2e_p99)
_READING_COLS = {
    "kv_usage_pct": "m_kv_usage_pct",
    "running": "m_running",
    "waiting": "m_waiting",
    "preemptions_total": "m_preemptions_total",
    "preemptions_per_s": "m_preemption_rate",
    "generation_tps": "m_generation_tps",
    "prompt_tps": "m_prompt_tps",
}
METRIC_COLS = (
    *_READING_COLS.values(),
    *(metricmath.quantile_tag(k, q) for k in names.LATENCY_HISTOGRAMS for q in metricmath.QUANTILES),
)
# how to merge two adjacent rows when compacting
_MAX = {"running", "waiting", "swapped", "kv_usage_pct", "cpu_kv_usage_pct", "cumulative_preemptions"}
_SUM = {"preemptions", "preemption_warnings"}

_ALL = ("ts", "where") + LOG_COLS + EVENT_COLS
_KINDS = [2 if c in _MAX else 1 if c in _SUM else 0 for c in LOG_COLS + EVENT_COLS]


_NAN = float("nan")
_FLOAT_COLS = LOG_COLS + EVENT_COLS  # the columns of floats (NaN where unknown): all but ts and where


def _nan(v):
    return _NAN if v is None else float(v)


class Timeline:
    """A bounded, append-only timeline of stats samples and preemption warnings."""

    def __init__(self, max_rows: int = 20_000) -> None:
        if max_rows < 16:
            raise ValueError("max_rows must be >= 16")
        self.max_rows = max_rows
        self._rows: list[list] = []
        self.compactions = 0
        self.stride = 1  # stats samples per row: doubles at each compaction, so all rows share one step
        self._acc: list[list] = []  # incoming rows not yet merged into one of `stride` samples
        self._acc_n = 0  # how many samples the rows in _acc stand for
        self._pending_warn = 0
        self._pending_cum: float | None = None

    def __len__(self) -> int:
        return len(self._rows)

    @property
    def empty(self) -> bool:
        """No stats sample yet (then there is no frame to build)."""
        return not self._rows and not self._acc

    def add(self, ev) -> None:
        if isinstance(ev, StatsSample):
            self.add_stats(ev)
        elif isinstance(ev, Preemption):
            self.add_preemption(ev)

    def add_stats(self, s: StatsSample) -> None:
        e = s.env
        gen = s.generation_tps if s.generation_tps is not None else s.throughput_tps
        row = [
            e.ts,
            f"{e.source}:{e.lineno}",
            _nan(s.prompt_tps),
            _nan(gen),
            _nan(s.running),
            _nan(s.waiting),
            _nan(s.swapped),
            _nan(s.kv_usage_pct),
            _nan(s.cpu_kv_usage_pct),
            _nan(s.prefix_hit_pct),
            _nan(s.preemptions),
            float(self._pending_warn),
            _nan(self._pending_cum),
        ]
        self._pending_warn = 0
        self._pending_cum = None
        if self.stride == 1:
            self._rows.append(row)
        else:
            self._acc.append(row)
            self._acc_n += 1
            if self._acc_n >= self.stride:
                self._rows.append(self._merge_all(self._acc))
                self._acc, self._acc_n = [], 0
        if len(self._rows) > self.max_rows:
            self._compact()

    def add_preemption(self, p: Preemption) -> None:
        """A V0 warning is attached to the next stats row (the interval it belongs to)."""
        self._pending_warn += p.env.repeat
        if p.cumulative is not None:
            self._pending_cum = max(self._pending_cum or 0, p.cumulative)

    @staticmethod
    def _merge(a: list, b: list) -> list:
        """Two adjacent rows as one (plain floats: this runs on every 2nd row of a huge log)."""
        m = [a[0] if a[0] is not None else b[0], a[1]]
        for j, kind in enumerate(_KINDS, start=2):
            x, y = a[j], b[j]
            if x != x:  # NaN
                m.append(y)
            elif y != y:
                m.append(x)
            elif kind == 2:
                m.append(x if x >= y else y)
            elif kind == 1:
                m.append(x + y)
            else:
                m.append((x + y) / 2.0)
        return m

    def _merge_all(self, rows: list[list]) -> list:
        """Merge a run of rows as a balanced pairwise tree, so means weigh every sample alike."""
        while len(rows) > 1:
            nxt = [self._merge(rows[i], rows[i + 1]) for i in range(0, len(rows) - 1, 2)]
            if len(rows) % 2:
                nxt.append(rows[-1])
            rows = nxt
        return rows[0]

    def _compact(self) -> None:
        rows = self._rows
        out = [self._merge(rows[i], rows[i + 1]) for i in range(0, len(rows) - 1, 2)]
        if len(rows) % 2:  # an odd last row (stride samples) starts the next, twice as wide, bucket
            self._acc = [rows[-1]] + self._acc
            self._acc_n += self.stride
        self._rows = out
        self.compactions += 1
        self.stride *= 2

    def frame(self) -> pd.DataFrame:
        """The log timeline: DatetimeIndex when every row has a time, else a RangeIndex.
        `df.attrs["stride"]` is how many stats samples each row stands for."""
        rows = self._rows + ([self._merge_all(self._acc)] if self._acc else [])
        if rows:  # built by column: a third of the time of rows (a restart loop builds one per launch)
            import numpy as np  # with pandas, already loaded

            cols: dict[str, Any] = dict(zip(_ALL, map(list, zip(*rows, strict=True)), strict=True))
            ts = cols.pop("ts")
            for k in _FLOAT_COLS:  # every value a float already: no per-column type inference
                cols[k] = np.array(cols[k], dtype=np.float64)
            timed = all(t is not None for t in ts)
            df = pd.DataFrame(cols, index=pd.DatetimeIndex(ts, name="ts") if timed else None)
        else:
            df = pd.DataFrame(rows, columns=list(_ALL)).drop(columns=["ts"])
        df.attrs["stride"] = self.stride
        return df


def scrape_frame(scrapes: Sequence[Scrape]) -> pd.DataFrame:
    """One row per timed scrape with the canonical gauges, counter rates and interval quantiles
    (`metricmath.reading` of each scrape and the one before; the first row has no rates or quantiles)."""
    rows = []
    timed = [(s.at, s) for s in scrapes if s.ok and s.at is not None]
    timed.sort(key=lambda pair: pair[0])
    prev: Scrape | None = None
    for at, s in timed:
        r = metricmath.reading(prev, s)
        row: dict = {"ts": naive(at)}
        for key, col in _READING_COLS.items():
            row[col] = r[key]
        if prev is not None:
            row.update((tag, r[tag]) for tag in METRIC_COLS if tag in r)
        rows.append(row)
        prev = s
    df = pd.DataFrame(rows, columns=["ts", *METRIC_COLS])
    df = df.set_index(pd.DatetimeIndex(df.pop("ts"), name="ts")) if len(df) else df.drop(columns=["ts"])
    return df.astype(float)


def naive(t: datetime) -> datetime:
    """Aware times become naive UTC (vLLM's own log stamps carry no zone; docs/architecture.md)."""
    if t.tzinfo is not None:
        return t.astimezone(UTC).replace(tzinfo=None)
    return t


def join(logs: pd.DataFrame, metrics: pd.DataFrame, tolerance_s: float = 15.0) -> pd.DataFrame:
    """Each stats row gets the nearest scrape within tolerance; scrape-only times are kept too."""
    if metrics is None or metrics.empty:
        return logs
    if logs is None or logs.empty or not isinstance(logs.index, pd.DatetimeIndex):
        return metrics
    left = logs.sort_index().reset_index()
    right = metrics.sort_index().reset_index().rename(columns={"ts": "m_ts"})
    left["ts"] = left["ts"].astype("datetime64[ns]")
    right["m_ts"] = right["m_ts"].astype("datetime64[ns]")
    merged = pd.merge_asof(
        left,
        right,
        left_on="ts",
        right_on="m_ts",
        direction="nearest",
        tolerance=pd.Timedelta(seconds=tolerance_s),
    )
    merged.attrs = dict(logs.attrs)
    used = set(merged["m_ts"].dropna())
    merged = merged.drop(columns=["m_ts"]).set_index("ts")
    extra = metrics[~metrics.index.isin(list(used))]
    if len(extra):
        attrs = dict(merged.attrs)
        merged = pd.concat([merged, extra]).sort_index()
        merged.attrs = attrs
    return merged


def series(df: pd.DataFrame | None, col: str) -> pd.Series:
    """A column as floats without NaN (empty when absent)."""
    if df is None or col not in df.columns:
        return pd.Series(dtype=float)
    return df[col].astype(float).dropna()


def interval_seconds(df: pd.DataFrame) -> float | None:
    """Median spacing of the rows in seconds (None without a time index)."""
    if df is None or len(df) < 2 or not isinstance(df.index, pd.DatetimeIndex):
        return None
    d = pd.Series(df.index).diff().dt.total_seconds().dropna()
    d = d[d > 0]
    return float(d.median()) if len(d) else None
