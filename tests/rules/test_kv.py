"""rules.kv: the silent-preemption rule is the rule's own (diagnosis only counts it as lines stream)."""

from __future__ import annotations

from datetime import datetime

from observe.diagnosis import InstanceBuilder
from observe.model import Envelope, StatsSample
from observe.rules import kv
from observe.settings import Settings


def _line(running: int, waiting: int, kv_pct: float, prompt_tps: float = 0.0, n: int = 1) -> StatsSample:
    env = Envelope(source="t.log", lineno=n, ts=datetime(2025, 1, 1, 0, 0, n))
    return StatsSample(
        env, "v0", running=running, waiting=waiting, kv_usage_pct=kv_pct, prompt_tps=prompt_tps
    )


def test_running_to_waiting_at_a_full_cache_is_a_silent_preemption() -> None:
    s = Settings()
    assert kv.silently_preempted((8, 0), _line(6, 2, 99.0), s) == 2
    assert kv.silently_preempted((8, 0), _line(6, 2, 99.0, prompt_tps=10.0), s) == 0  # admitted: not it
    assert kv.silently_preempted((8, 0), _line(6, 3, 99.0), s) == 0  # waiting rose by more: arrivals
    low = s.silent_preemption_kv_pct - 1
    assert kv.silently_preempted((8, 0), _line(6, 2, low), s) == 0  # room in the cache: requests finished
    assert kv.silently_preempted((8, 0), _line(6, 2, low), Settings(silent_preemption_kv_pct=low)) == 2


def test_the_diagnosis_counts_what_the_rule_says() -> None:
    b = InstanceBuilder("t")
    for n, (r, w) in enumerate([(8, 0), (6, 2), (6, 2), (3, 5)], start=1):
        b.add(_line(r, w, 99.0, n=n))
    d = b.finish()
    assert (d.summary.silent_preemption_events, d.summary.silent_preempted_requests) == (2, 5)
    assert "silent_preemptions" in {f.id for f in d.findings}
