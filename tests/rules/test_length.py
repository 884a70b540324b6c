"""rules.length and the request length the rules read (moved from tests/test_detect_excerpts.py)."""

from __future__ import annotations

from observe.diagnosis import InstanceBuilder
from observe.model import Envelope, StatsSample
from observe.rules.context import Context


def _stats(i: int, running: int, waiting: int, kv: float, prompt: float = 0.0) -> StatsSample:
    env = Envelope(source="t", lineno=i)
    return StatsSample(
        env,
        "v0",
        prompt_tps=prompt,
        generation_tps=30.0,
        running=running,
        waiting=waiting,
        swapped=0,
        kv_usage_pct=kv,
        cpu_kv_usage_pct=0.0,
    )


def test_request_length_never_above_max_model_len() -> None:
    b = InstanceBuilder("t")
    b.config.max_model_len = 100
    b.config.kv_cache_tokens = 10_000
    b.add(_stats(1, 1, 0, 50.0))  # one request holding 5,000 tokens of KV: more than the limit
    d = b.finish()
    ctx = Context(summary=d.summary, config=d.config, frame=d.frame)
    assert ctx.request_tokens_p95() == 100
