"""rules.latency: ITL and TTFT from /metrics, and how their advice yields to KV pressure (moved from
tests/test_detect_advise.py)."""

from __future__ import annotations

from observe import advise
from observe.model import EngineConfig, Finding


def test_ttft_spikes_under_kv_pressure_do_not_touch_max_num_batched_tokens() -> None:

    cfg = EngineConfig(
        version="0.32.0", engine="v1", kv_cache_tokens=2048, max_num_seqs=32, max_num_batched_tokens=2048
    )
    spike = Finding(id="ttft_spikes", severity="warning", title="t", evidence="e")
    sat = Finding(id="queue_memory_bound", severity="warning", title="t", evidence="e")
    alone = {r.flag: r for r in advise.advise(cfg, [spike])}
    # prefill stutter on its own: bigger prefill chunks, with their inter-token-latency cost
    assert alone["--max-num-batched-tokens"].suggested == 4096
    assert "inter-token latency" in alone["--max-num-batched-tokens"].expected_effect
    both = {r.flag for r in advise.advise(cfg, [spike, sat], facts={"request_tokens": 1000})}
    assert "--max-num-batched-tokens" not in both  # the queue waits for KV: the KV fix comes first
