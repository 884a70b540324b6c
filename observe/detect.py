"""Detectors: one small function each, (Context) → list[Finding]. Pure; shared by diagnose and sidecar.

Every finding states its evidence with the numbers and where it was seen. Thresholds come from
`observe.settings.Settings` (the same object the alert rules and plots read).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import pandas as pd

from observe import timeline as tl
from observe.model import EngineConfig, Finding, Scrape, severity_rank
from observe.settings import Settings


@dataclass
class Context:
    summary: Any  # diagnosis.Summary
    config: EngineConfig
    frame: pd.DataFrame | None
    metrics: pd.DataFrame | None = None
    scrapes: Sequence[Scrape] = ()
    now: datetime | None = None
    settings: Settings = field(default_factory=Settings)

    def metrics_preemptions(self) -> int | None:
        """Preemptions counted by vllm:num_preemptions_total over the scrapes (reset-aware)."""
        col = tl.series(self.metrics, "m_preemptions_total")
        if len(col) == 0:
            return None
        total, prev = 0.0, None
        for v in col:
            if prev is not None:
                total += v - prev if v >= prev else v  # counter reset: count from zero
            prev = v
        if len(col) == 1:
            total = col.iloc[0]
        return int(total)

    def request_tokens_p95(self) -> float | None:
        """Request length in tokens: p95 prompt + p95 generation from the /metrics histograms when
        given (vllm:request_prompt_tokens / vllm:request_generation_tokens), else the most KV any
        running request held (KV usage × KV tokens / running, from the logs)."""
        from observe import metricmath

        last = next(
            (
                s
                for s in sorted(
                    (s for s in self.scrapes if s.ok), key=lambda s: s.at or datetime.min, reverse=True
                )
            ),
            None,
        )
        if last is not None:
            parts = [
                metricmath.histogram_quantile(0.95, metricmath.buckets(last, fam))
                for fam in ("vllm:request_prompt_tokens", "vllm:request_generation_tokens")
            ]
            if all(p is not None for p in parts):
                return float(sum(parts))
        return self.summary.max_tokens_per_running

    def prompt_tokens_mean(self) -> float | None:
        """Mean prompt length in tokens from the last scrape's vllm:request_prompt_tokens _sum / _count."""
        from observe import metricmath

        ok = [s for s in self.scrapes if s.ok and s.at is not None]
        if not ok:
            return None
        last = max(ok, key=lambda s: s.at)
        total = metricmath.value(last, "vllm:request_prompt_tokens_sum")
        count = metricmath.value(last, "vllm:request_prompt_tokens_count")
        return total / count if total is not None and count else None

    def facts(self) -> dict:
        s = self.summary
        return {
            "prompt_tokens_mean": self.prompt_tokens_mean(),
            "max_kv_pct": s.max_kv,
            "max_running": s.max_running,
            "max_waiting": s.max_waiting,
            "request_tokens": self.request_tokens_p95(),
            "metrics_preemptions": self.metrics_preemptions(),
            "preemption_warnings": s.preemption_warnings,
            "cumulative_preemptions": s.cumulative_preemptions,
            "running_at_peak_throughput": _running_at_peak(self.frame),
            "device": self.config.device,
        }


def _when(df: pd.DataFrame | None, mask: pd.Series) -> tuple[datetime | None, datetime | None]:
    if df is None or not isinstance(df.index, pd.DatetimeIndex) or not mask.any():
        return None, None
    idx = df.index[mask.values]
    return idx.min().to_pydatetime(), idx.max().to_pydatetime()


def _fmt_t(t: datetime | None) -> str:
    return t.strftime("%m-%d %H:%M:%S") if t else "?"


def _where(s) -> str | None:
    if s.first_where is None:
        return None
    return s.first_where if s.first_where == s.last_where else f"{s.first_where} … {s.last_where}"


def _span(a, b) -> str:
    return f" ({_fmt_t(a)} → {_fmt_t(b)})" if a and b else ""


def _running_at_peak(df: pd.DataFrame | None) -> float | None:
    """How many requests were running when generation throughput peaked (None without both)."""
    if df is None or not {"generation_tps", "running"} <= set(df.columns):
        return None
    d = df[["generation_tps", "running"]].dropna().reset_index(drop=True)
    if d.empty or d["generation_tps"].max() <= 0:
        return None
    return float(d.loc[d["generation_tps"].idxmax(), "running"])


# ---------------------------------------------------------------- detectors


def kv_cache_saturated(c: Context) -> list[Finding]:
    s, th = c.summary, c.settings
    if not s.kv_samples or s.kv_high == 0:
        return []
    if s.kv_full == 0 and (s.max_waiting or 0) == 0 and s.kv_high < 2:
        return []
    share95 = s.kv_full / s.kv_samples
    kv = tl.series(c.frame, "kv_usage_pct")
    a, b = (
        _when(c.frame, c.frame["kv_usage_pct"] >= th.kv_high_pct)
        if c.frame is not None and "kv_usage_pct" in c.frame
        else (None, None)
    )
    step = tl.interval_seconds(c.frame)
    dur = f", about {int(s.kv_full * step)} s" if step and s.kv_full else ""
    sev = "critical" if share95 >= th.kv_saturated_share and (s.max_waiting or 0) > 0 else "warning"
    return [
        Finding(
            id="kv_cache_saturated",
            severity=sev,
            title="KV cache saturated",
            evidence=(
                f"KV cache usage ≥ {th.kv_high_pct:g}% in {s.kv_high} and ≥ {th.kv_full_pct:g}% in {s.kv_full} of {s.kv_samples} stats samples"
                f"{dur}; max {s.max_kv:.1f}%, up to {s.max_waiting or 0} requests waiting{_span(a, b)}"
            ),
            start=a,
            end=b,
            where=_where(s),
            data={
                "samples_high": s.kv_high,
                "samples_full": s.kv_full,
                "samples": s.kv_samples,
                "max_kv_pct": s.max_kv,
                "share_full": round(share95, 3),
                "points": int(len(kv)),
            },
        )
    ]


def queue_bound(c: Context) -> list[Finding]:
    """Requests wait: because the KV cache is full (memory-bound) or while it has room (seqs/prefill)."""
    s, df, cfg = c.summary, c.frame, c.config
    out = []
    if s.waiting_while_full:
        m = (
            (df["waiting"] > 0) & (df["kv_usage_pct"] >= c.settings.kv_queue_full_pct)
            if df is not None and {"waiting", "kv_usage_pct"} <= set(df.columns)
            else pd.Series([], dtype=bool)
        )
        a, b = _when(df, m) if len(m) else (None, None)
        out.append(
            Finding(
                id="queue_memory_bound",
                severity="warning",
                title="Queue grows while the KV cache is full (memory-bound)",
                evidence=(
                    f"{s.waiting_while_full} stats samples had requests waiting (max {s.max_waiting}) while KV usage "
                    f"was ≥ {c.settings.kv_queue_full_pct:.0f}%: admission is limited by KV-cache memory, not by --max-num-seqs{_span(a, b)}"
                ),
                start=a,
                end=b,
                where=_where(s),
                data={"samples": s.waiting_while_full, "max_waiting": s.max_waiting},
            )
        )
    if s.waiting_with_room >= 2 or (s.waiting_with_room and s.samples < 4):
        m = (
            (df["waiting"] > 0) & (df["kv_usage_pct"] < c.settings.kv_queue_full_pct)
            if df is not None and {"waiting", "kv_usage_pct"} <= set(df.columns)
            else pd.Series([], dtype=bool)
        )
        a, b = _when(df, m) if len(m) else (None, None)
        cap = cfg.max_num_seqs
        at_cap = cap is not None and s.max_running is not None and s.max_running >= cap
        if at_cap:
            out.append(
                Finding(
                    id="queue_seq_bound",
                    severity="warning",
                    title="Queue grows while the KV cache has room: bound by --max-num-seqs",
                    evidence=(
                        f"{s.waiting_with_room} stats samples had requests waiting (max {s.max_waiting}) with KV usage "
                        f"< {c.settings.kv_queue_full_pct:.0f}% and Running at the --max-num-seqs cap of {cap}{_span(a, b)}"
                    ),
                    start=a,
                    end=b,
                    where=_where(s),
                    data={"samples": s.waiting_with_room, "max_num_seqs": cap},
                )
            )
        else:
            out.append(
                Finding(
                    id="queue_prefill_bound",
                    severity="info",
                    title="Queue grows while the KV cache has room: bound by prefill or --max-num-seqs",
                    evidence=(
                        f"{s.waiting_with_room} stats samples had requests waiting (max {s.max_waiting}) with KV usage < {c.settings.kv_queue_full_pct:.0f}% "
                        f"and Running up to {s.max_running}"
                        + (f" (below --max-num-seqs {cap})" if cap else " (--max-num-seqs unknown)")
                        + _span(a, b)
                    ),
                    start=a,
                    end=b,
                    where=_where(s),
                    data={"samples": s.waiting_with_room, "max_num_seqs": cap},
                )
            )
    return out


def preemptions(c: Context) -> list[Finding]:
    s, cfg = c.summary, c.config
    measured = c.metrics_preemptions()
    parts, total = [], None
    if s.preemption_warnings:
        total = s.cumulative_preemptions or s.preemption_warnings
        parts.append(
            f"{s.preemption_warnings} V0 preemption warning(s), total_num_cumulative_preemption up to "
            f"{s.cumulative_preemptions} (vLLM prints every 50th, so the true count is ≥ that)"
        )
    if s.interval_preemptions:
        total = max(total or 0, s.interval_preemptions)
        parts.append(f"{s.interval_preemptions} preemptions in the stats lines' Preemptions: field")
    if measured:
        total = max(total or 0, measured)
        parts.append(f"vllm:num_preemptions_total rose by {measured} over the snapshots")
    if total:
        col = tl.series(c.frame, "m_preemption_rate")
        a, b = _when(c.frame, c.frame["m_preemption_rate"] > 0) if len(col) else (None, None)
        return [
            Finding(
                id="preemptions",
                severity="critical" if total >= 50 else "warning",
                title="Requests are preempted (KV cache too small for the load)",
                evidence="; ".join(parts)
                + ". Each preemption throws away a request's KV cache and recomputes it.",
                start=a,
                end=b,
                where=_where(s),
                data={
                    "total": int(total),
                    "warnings": s.preemption_warnings,
                    "metrics": measured,
                    "modes": sorted(s.preemption_modes),
                },
            )
        ]
    v1 = (cfg.engine == "v1") or ("v1" in s.stats_formats)
    if v1 and measured is None and s.max_kv is not None and s.max_kv >= 99.0 and (s.max_waiting or 0) > 0:
        return [
            Finding(
                id="preemptions_likely",
                severity="warning",
                title="Preemption likely but unmeasured",
                evidence=(
                    f"KV cache reached {s.max_kv:.1f}% with {s.max_waiting} requests waiting. The V1 engine "
                    "logs no preemption warning; give a /metrics snapshot (--metrics) to count "
                    "vllm:num_preemptions_total."
                ),
                where=_where(s),
                data={"max_kv_pct": s.max_kv},
            )
        ]
    return []


def low_prefix_hit(c: Context) -> list[Finding]:
    s, cfg = c.summary, c.config
    if not s.prefix_hit_samples or cfg.enable_prefix_caching is False:
        return []
    mean = s.prefix_hit_sum / s.prefix_hit_samples
    if mean >= c.settings.low_prefix_hit_pct or s.prefix_hit_samples < 3:
        return []
    return [
        Finding(
            id="low_prefix_cache_hit_rate",
            severity="info",
            title="Prefix caching is on but rarely hits",
            evidence=(
                f"mean prefix-cache hit rate {mean:.1f}% over {s.prefix_hit_samples} samples: prompts share "
                "little prefix; caching costs little, but do not count on it for capacity"
            ),
            where=_where(s),
            data={"mean_hit_pct": round(mean, 2)},
        )
    ]


def throughput_collapse(c: Context) -> list[Finding]:
    """Generation throughput falls far below its peak while requests are still running."""
    df = c.frame
    if df is None or not {"generation_tps", "running"} <= set(df.columns):
        return []
    d = df[["generation_tps", "running"]].dropna()
    d = d[d["running"] > 1]
    if len(d) < 4:
        return []
    peak = d["generation_tps"].cummax()
    run_at_peak = d["running"].where(d["generation_tps"] == peak).ffill()
    m = (d["generation_tps"] < c.settings.collapse_ratio * peak) & (d["running"] >= run_at_peak) & (peak > 0)
    if m.sum() < 2:
        return []
    a, b = _when(d, m)
    low = d.loc[m, "generation_tps"].min()
    return [
        Finding(
            id="throughput_collapse",
            severity="warning",
            title="Generation throughput collapsed under load",
            evidence=(
                f"in {int(m.sum())} samples generation throughput fell to {low:.1f} tokens/s, under "
                f"{c.settings.collapse_ratio:.0%} of its earlier peak {peak.max():.1f}, while as many requests were "
                f"running{_span(a, b)}"
            ),
            start=a,
            end=b,
            where=_where(c.summary),
            data={"min_tps": float(low), "peak_tps": float(peak.max())},
        )
    ]


def too_many_seqs(c: Context) -> list[Finding]:
    """Generation throughput falls while Running rises: too many sequences share the batch."""
    df = c.frame
    if df is None or not {"generation_tps", "running"} <= set(df.columns):
        return []
    d = df[["generation_tps", "running"]].dropna()
    d = d[(d["running"] > 0) & (d["generation_tps"] > 0)]
    if len(d) < 6 or d["running"].nunique() < 3:
        return []
    rho = d["running"].rank().corr(d["generation_tps"].rank())
    if not (rho < -0.5):
        return []
    best = d.loc[d["generation_tps"].idxmax()]
    if isinstance(best, pd.DataFrame):
        best = best.iloc[0]
    top = d[d["running"] >= d["running"].quantile(0.8)]
    if top["generation_tps"].mean() > 0.8 * best["generation_tps"]:
        return []
    return [
        Finding(
            id="too_many_seqs",
            severity="warning",
            title="More running sequences, less throughput",
            evidence=(
                f"generation throughput falls as Running rises (rank correlation {rho:.2f} over {len(d)} samples): "
                f"peak {best['generation_tps']:.1f} tokens/s at {int(best['running'])} running, "
                f"{top['generation_tps'].mean():.1f} tokens/s at ≥ {int(top['running'].min())} running"
            ),
            where=_where(c.summary),
            data={
                "rho": round(float(rho), 3),
                "best_running": int(best["running"]),
                "best_tps": float(best["generation_tps"]),
            },
        )
    ]


def max_model_len_unused(c: Context) -> list[Finding]:
    cfg, s = c.config, c.summary
    used = c.request_tokens_p95()
    if not cfg.max_model_len or not used or s.samples < 3:
        return []
    if cfg.max_model_len < c.settings.max_model_len_slack * used or cfg.max_model_len <= 4096:
        return []
    return [
        Finding(
            id="max_model_len_unused",
            severity="info",
            title="--max-model-len far above what requests use",
            evidence=(
                f"--max-model-len is {cfg.max_model_len:,} but the KV cache held at most {used:,.0f} tokens "
                f"per running request ({s.samples} samples)"
            ),
            where=_where(s),
            data={"max_model_len": cfg.max_model_len, "max_tokens_per_request": round(used)},
        )
    ]


_ERROR_FINDINGS = {
    "max_seq_len_exceeds_kv": (
        "max_model_len_exceeds_kv_cache",
        "critical",
        "Engine refused to start: --max-model-len does not fit the KV cache",
    ),
    "kv_needed_exceeds_available": (
        "max_model_len_exceeds_kv_cache",
        "critical",
        "Engine refused to start: --max-model-len does not fit the KV cache",
    ),
    "no_available_memory": ("no_kv_cache_memory", "critical", "No memory left for the KV cache"),
    "free_memory_below_utilization": (
        "gpu_memory_busy",
        "critical",
        "Free device memory is below --gpu-memory-utilization",
    ),
    "oom": ("cuda_oom", "critical", "Out of memory"),
    "engine_core_failed": ("engine_startup_failed", "critical", "Engine failed to start"),
    "startup_failed": ("engine_startup_failed", "critical", "Engine failed to start"),
    "worker_exception": ("engine_error", "critical", "Worker raised an exception"),
    "max_position_exceeded": (
        "max_model_len_exceeds_model",
        "critical",
        "--max-model-len exceeds the model's context",
    ),
    "prompt_too_long": ("prompt_too_long", "warning", "Prompts rejected as too long"),
}


def engine_errors(c: Context) -> list[Finding]:
    s, cfg = c.summary, c.config
    out: dict[str, Finding] = {}
    for e in s.errors:
        spec = _ERROR_FINDINGS.get(e.kind)
        if spec is None:
            continue
        fid, sev, title = spec
        if fid in out:
            continue
        detail = ", ".join(
            f"{k}={v}" for k, v in e.details.items() if isinstance(v, (int, float, str)) and v != ""
        )
        count = s.error_kinds.get(e.kind, 1)
        ev = f"{e.message[:300]}" + (f" [{detail}]" if detail else "") + (f" ({count}×)" if count > 1 else "")
        out[fid] = Finding(
            id=fid,
            severity=sev,
            title=title,
            evidence=ev,
            start=e.env.ts,
            end=e.env.ts,
            where=f"{e.env.source}:{e.env.lineno}",
            data=dict(e.details, kind=e.kind, count=count),
        )
    load_fail = any(
        e.kind == "worker_exception" and e.details.get("method") == "load_model" for e in s.errors
    )
    if "cuda_oom" in out and load_fail:
        f = out["cuda_oom"]
        out["cuda_oom"] = Finding(
            id=f.id,
            severity=f.severity,
            title="Out of memory while loading the weights",
            evidence=f.evidence + ". The weights alone do not fit: no KV-cache setting fixes this; "
            "split them over more GPUs (--tensor-parallel-size), use a quantized checkpoint, or offload "
            "(--cpu-offload-gb).",
            start=f.start,
            end=f.end,
            where=f.where,
            data=dict(f.data, phase="load_model"),
        )
    if "cuda_oom" in out and cfg.gpu_memory_utilization is not None and cfg.gpu_memory_utilization >= 0.95:
        out["gpu_memory_utilization_too_high"] = Finding(
            id="gpu_memory_utilization_too_high",
            severity="critical",
            title="--gpu-memory-utilization leaves no headroom for peaks",
            evidence=(
                f"--gpu-memory-utilization is {cfg.gpu_memory_utilization} and the engine ran out of memory: "
                "activation peaks and CUDA graphs need room outside the KV cache"
            ),
            where=out["cuda_oom"].where,
            data={"gpu_memory_utilization": cfg.gpu_memory_utilization},
        )
    return list(out.values())


def latency(c: Context) -> list[Finding]:
    """From /metrics: inter-token latency above the SLO, TTFT spikes under bursts (prefill stutter)."""
    m = c.metrics
    out = []
    itl = tl.series(m, "itl_p95")
    if len(itl) and itl.max() > c.settings.itl_slo_seconds:
        bad = m["itl_p95"] > c.settings.itl_slo_seconds
        a, b = _when(m, bad.fillna(False))
        out.append(
            Finding(
                id="itl_high",
                severity="warning",
                title=f"Inter-token latency above {c.settings.itl_slo_seconds * 1000:.0f} ms",
                evidence=(
                    f"ITL p95 above {c.settings.itl_slo_seconds * 1000:.0f} ms in {int(bad.sum())} of {len(itl)} "
                    f"scrape intervals (max {itl.max() * 1000:.0f} ms){_span(a, b)}"
                ),
                start=a,
                end=b,
                data={"max_itl_p95_s": float(itl.max())},
            )
        )
    p99, p50 = tl.series(m, "ttft_p99"), tl.series(m, "ttft_p50")
    if len(p99) and len(p50):
        j = pd.concat([p50, p99], axis=1, keys=["p50", "p99"]).dropna()
        spike = (j["p99"] > c.settings.ttft_spike_min_s) & (
            j["p99"] > c.settings.ttft_spike_ratio * j["p50"].clip(lower=1e-3)
        )
        if spike.any():
            a, b = _when(j, spike)
            out.append(
                Finding(
                    id="ttft_spikes",
                    severity="warning",
                    title="TTFT spikes under bursts (prefill stutter)",
                    evidence=(
                        f"TTFT p99 reached {j['p99'].max():.2f} s against a p50 of {j['p50'].median():.2f} s in "
                        f"{int(spike.sum())} scrape intervals{_span(a, b)}"
                    ),
                    start=a,
                    end=b,
                    data={"max_ttft_p99_s": float(j["p99"].max())},
                )
            )
    return out


def engine_stalled(c: Context) -> list[Finding]:
    """Stats lines minutes apart while requests run: the engine loop is stalled, not KV-limited."""
    df = c.frame
    if df is None or "running" not in df.columns or not isinstance(df.index, pd.DatetimeIndex) or len(df) < 3:
        return []
    gaps = pd.Series(df.index).diff().dt.total_seconds().values[1:]
    running = df["running"].values[1:]
    normal = (10.0 if "v1" in c.summary.stats_formats else 5.0) * df.attrs.get("stride", 1)
    stalled = [
        (g, i)
        for i, (g, r) in enumerate(zip(gaps, running))
        if g > c.settings.stall_factor * normal and r and r > 0
    ]
    if len(stalled) < 2:
        return []
    a = df.index[stalled[0][1]].to_pydatetime()
    b = df.index[stalled[-1][1] + 1].to_pydatetime()
    lo, hi = min(g for g, _ in stalled), max(g for g, _ in stalled)
    return [
        Finding(
            id="engine_stalled",
            severity="warning",
            title="Engine loop stalled: stats lines minutes apart",
            evidence=(
                f"{len(stalled)} gaps of {lo:.0f}–{hi:.0f} s between stats lines while requests were running; "
                f"vLLM logs every {normal:.0f} s when a step completes, so steps took that long "
                f"(look outside KV tuning: a stuck request, the frontend, the host){_span(a, b)}"
            ),
            start=a,
            end=b,
            where=_where(c.summary),
            data={"gaps": len(stalled), "max_gap_s": hi},
        )
    ]


def capacity_facts(c: Context) -> list[Finding]:
    """Startup facts that already say the KV cache is small, or memory has no headroom."""
    cfg = c.config
    out = []
    pp = int(cfg.pipeline_parallel_size or 1)
    if (
        cfg.kv_cache_tokens
        and cfg.max_model_len
        and cfg.kv_cache_tokens < cfg.max_model_len
        and pp == 1
        and not any(
            e.kind in ("max_seq_len_exceeds_kv", "kv_needed_exceeds_available") for e in c.summary.errors
        )
    ):
        out.append(
            Finding(
                id="max_model_len_exceeds_kv_cache",
                severity="critical",
                title="--max-model-len does not fit the KV cache (vLLM refuses to start)",
                evidence=(
                    f"the KV cache holds {cfg.kv_cache_tokens:,} tokens"
                    + (f" ({cfg.num_gpu_blocks:,} blocks)" if cfg.num_gpu_blocks else "")
                    + f", less than one request of max_model_len {cfg.max_model_len:,}"
                ),
                data={"kv_tokens": cfg.kv_cache_tokens, "max_model_len": cfg.max_model_len},
            )
        )
    if cfg.max_concurrency is not None and cfg.max_concurrency < c.settings.low_concurrency:
        n = cfg.max_concurrency_len or cfg.max_model_len
        out.append(
            Finding(
                id="low_max_concurrency",
                severity="warning",
                title="KV cache holds fewer than two full-length requests",
                evidence=(
                    f"vLLM reported maximum concurrency {cfg.max_concurrency:.2f}x for {n:,} tokens per request"
                    + (f" ({cfg.kv_cache_tokens:,} KV tokens)" if cfg.kv_cache_tokens else "")
                    + ": long requests will wait or be preempted"
                )
                if n
                else f"vLLM reported maximum concurrency {cfg.max_concurrency:.2f}x",
                data={
                    "max_concurrency": cfg.max_concurrency,
                    "max_model_len": n,
                    "kv_cache_tokens": cfg.kv_cache_tokens,
                },
            )
        )
    u = cfg.gpu_memory_utilization
    if u is not None and u >= c.settings.high_gpu_util and (cfg.device or "GPU").upper() != "CPU":
        out.append(
            Finding(
                id="gpu_memory_utilization_high",
                severity="info",
                title="--gpu-memory-utilization leaves little headroom",
                evidence=f"--gpu-memory-utilization is {u}: activation spikes and CUDA graphs have almost no room left",
                data={"gpu_memory_utilization": u},
            )
        )
    return out


DETECTORS: tuple[Callable[[Context], list[Finding]], ...] = (
    engine_errors,
    capacity_facts,
    kv_cache_saturated,
    preemptions,
    queue_bound,
    too_many_seqs,
    throughput_collapse,
    max_model_len_unused,
    low_prefix_hit,
    engine_stalled,
    latency,
)


def run_all(c: Context) -> list[Finding]:
    out: list[Finding] = []
    for det in DETECTORS:
        out.extend(det(c))
    out.sort(key=lambda f: -severity_rank(f.severity))
    return out


def worst(findings: Sequence[Finding]) -> str | None:
    return max((f.severity for f in findings), key=severity_rank, default=None)
