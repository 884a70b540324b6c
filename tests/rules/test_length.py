"""rules.length and the request length the rules read (moved from tests/test_detect_excerpts.py)."""

from __future__ import annotations

from observe.diagnosis import InstanceBuilder
from observe.rules.context import Context
from tests.rules.rulekit import v0_stats


def test_request_length_never_above_max_model_len() -> None:
    b = InstanceBuilder("t")
    b.config.max_model_len = 100
    b.config.kv_cache_tokens = 10_000
    b.add(v0_stats(1, 1, 0, 50.0))  # one request holding 5,000 tokens of KV: more than the limit
    d = b.finish()
    ctx = Context(summary=d.summary, config=d.config, frame=d.frame)
    assert ctx.request_length()[0] == 100
