"""rules.latency: ITL and TTFT from /metrics, and how their advice yields to KV pressure (moved from
tests/test_detect_advise.py)."""

from __future__ import annotations

from datetime import datetime, timedelta

from observe import advise
from observe.model import EngineConfig, Envelope, Finding, StartupFact, StatsSample

T0 = datetime(2026, 11, 29, 10, 0, 0)


def stats(
    i: int,
    *,
    running: int,
    waiting: int = 0,
    kv: float = 10.0,
    gen: float = 1000.0,
    fmt: str = "v1",
    device: str = "GPU",
) -> StatsSample:
    return StatsSample(
        env=Envelope(source="t.log", lineno=i + 1, ts=T0 + timedelta(seconds=10 * i)),
        fmt=fmt,
        prompt_tps=100.0,
        generation_tps=gen,
        running=running,
        waiting=waiting,
        kv_usage_pct=kv,
        kv_device=device,
    )


def flags(**kw) -> StartupFact:
    return StartupFact(
        env=Envelope(), name="flags", value={"--" + k.replace("_", "-"): v for k, v in kw.items()}
    )


def fact(name, value) -> StartupFact:
    return StartupFact(env=Envelope(), name=name, value=value)


def ids(inst) -> set[str]:
    return {f.id for f in inst.findings}


def recs(inst) -> dict:
    return {r.flag: r.suggested for r in inst.recommendations}


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
