"""Detectors: one small function each, (Context) → list[Finding]. Pure; shared by diagnose and sidecar.

Every finding states its evidence with the numbers and where it was seen. Thresholds come from
`observe.settings.Settings` (the same object the alert rules and plots read).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from observe import failing, stuck
from observe import timeline as tl
from observe.model import EngineConfig, Finding, Scrape, severity_rank
from observe.quote import quote
from observe.settings import Settings

if TYPE_CHECKING:
    import pandas as pd
else:
    from observe.timeline import pd  # imported on first use


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
        if self.metrics is None:
            return None
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
        given (vllm:request_prompt_tokens / vllm:request_generation_tokens; a family without buckets
        gives its mean, _sum/_count), else the most KV any running request held (KV usage × KV
        tokens / running, from the logs). Never above --max-model-len: no request is longer (the
        interpolation inside the last bucket can overshoot it)."""
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
        got: float | None = None
        if last is not None:
            parts = []
            for fam in ("vllm:request_prompt_tokens", "vllm:request_generation_tokens"):
                q = metricmath.histogram_quantile(0.95, metricmath.buckets(last, fam))
                if q is None:
                    total, n = metricmath.value(last, fam + "_sum"), metricmath.value(last, fam + "_count")
                    q = total / n if total is not None and n else None
                parts.append(q)
            if all(p is not None for p in parts):
                got = float(sum(parts))  # type: ignore[arg-type]
        if got is None:
            got = self.summary.max_tokens_per_running
        cap = self.config.max_model_len
        if got is not None and cap:
            got = min(got, float(cap))
        return got

    def prompt_tokens_mean(self) -> float | None:
        """Mean prompt length in tokens from the last scrape's vllm:request_prompt_tokens _sum / _count."""
        from observe import metricmath

        ok = [(s.at, s) for s in self.scrapes if s.ok and s.at is not None]
        if not ok:
            return None
        last = max(ok, key=lambda pair: pair[0])[1]
        total = metricmath.value(last, "vllm:request_prompt_tokens_sum")
        count = metricmath.value(last, "vllm:request_prompt_tokens_count")
        return total / count if total is not None and count else None

    def length_buckets(self) -> dict[str, list[tuple[float, float]]] | None:
        """The last scrape's cumulative (le, count) buckets of vllm:request_prompt_tokens and
        vllm:request_generation_tokens ("prompt", "generation"); None without both."""
        from observe import metricmath

        ok = [s for s in self.scrapes if s.ok]
        if not ok:
            return None
        last = max(ok, key=lambda s: s.at or datetime.min)
        got = {
            k: metricmath.buckets(last, fam)
            for k, fam in (
                ("prompt", "vllm:request_prompt_tokens"),
                ("generation", "vllm:request_generation_tokens"),
            )
        }
        return got if all(got.values()) else None

    def _at(self, col: str, i: int) -> float | None:
        """A stats column at the first (0) or last (-1) sample that has it; None without one."""
        if self.frame is None or col not in self.frame:
            return None
        v = self.frame[col].dropna()
        return float(v.iloc[i]) if len(v) else None

    def facts(self) -> dict:
        s = self.summary
        return {
            "prompt_tokens_mean": self.prompt_tokens_mean(),
            "max_kv_pct": s.max_kv,
            "kv_pct_first": self._at("kv_usage_pct", 0),
            "kv_pct_last": self._at("kv_usage_pct", -1),
            "waiting_first": self._at("waiting", 0),
            "waiting_last": self._at("waiting", -1),
            "max_running": s.max_running,
            "max_waiting": s.max_waiting,
            "request_tokens": self.request_tokens_p95(),
            "length_buckets": self.length_buckets(),
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
                title=("Queue grows" if s.waiting_rises else "Requests wait")
                + " while the KV cache is full (memory-bound)",
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
                    title=("Queue grows" if s.waiting_rises else "Requests wait")
                    + " while the KV cache has room: bound by --max-num-seqs",
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
                    title=("Queue grows" if s.waiting_rises else "Requests wait")
                    + " while the KV cache has room: bound by prefill or --max-num-seqs",
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
        if len(tl.series(c.metrics, "m_preemptions_total")) == 1:
            parts.append(
                f"vllm:num_preemptions_total was {measured} at the one snapshot (since vLLM started)"
            )
        else:
            parts.append(f"vllm:num_preemptions_total rose by {measured} over the snapshots")
    if total:
        col = tl.series(c.frame, "m_preemption_rate")
        a, b = (
            _when(c.frame, c.frame["m_preemption_rate"] > 0)
            if len(col) and c.frame is not None
            else (None, None)
        )
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
                    "swap_mode": "SWAP" in s.preemption_modes,
                    "silent": s.silent_preempted_requests or None,
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
            title="Prefix caching is on but rarely hits"
            if cfg.enable_prefix_caching
            else "The prefix cache rarely hits",
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
    if m.any() and isinstance(d.index, pd.DatetimeIndex):  # a wedged engine is engine_stuck's incident
        pad = 2.0 * (10.0 if "v1" in c.summary.stats_formats else 5.0) * df.attrs.get("stride", 1)
        m &= ~pd.Series(
            stuck.explains(c, [t.to_pydatetime() for t in d.index], pad), index=d.index, dtype=bool
        )
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
    """Generation throughput falls while Running rises: too many sequences share the batch.

    A stats line's throughput averages the interval since the previous line, its Running is the
    count at the line's moment: where Running changed more than twofold between the two (a round of
    load starting or draining), the interval's concurrency is unknown and the sample is left out —
    else the drain's last line ("Running: 1" after an interval at 8) reads as a peak at 1."""
    df = c.frame
    if df is None or not {"generation_tps", "running"} <= set(df.columns):
        return []
    d = df[["generation_tps", "running"]].dropna()
    prev = d["running"].shift(1)
    steady = prev.isna() | ((d["running"] <= 2 * prev) & (prev <= 2 * d["running"]))
    d = d[(d["running"] > 0) & (d["generation_tps"] > 0) & steady]
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
_KV_KINDS = ("max_seq_len_exceeds_kv", "kv_needed_exceeds_available")
_CRASH_KINDS = ("worker_exception", "engine_core_failed", "startup_failed")


def kv_fit(errors: Sequence[Any], cfg: EngineConfig) -> dict[str, Any]:
    """What the "KV cache too small for one request" messages say, merged over their pieces (a
    wrapped or cut traceback gives its numbers on several lines), and the largest --max-model-len
    that fits: vLLM's own estimate when it printed one; else the KV-cache tokens (V0's form gives
    them); else the requested length scaled by available / needed GiB (KV memory grows linearly with
    the length), rounded down to a multiple of 16. Keys: max_model_len, needed_gib, available_gib,
    kv_tokens, estimated_max_model_len (as printed), max_model_len_fits, fits_from
    ("vllm_estimate" | "kv_tokens" | "ratio" | None)."""
    d: dict[str, Any] = {}
    for e in errors:
        if e.kind not in _KV_KINDS:
            continue
        x = e.details
        for key, src in (
            ("max_model_len", "max_model_len"),
            ("max_model_len", "max_seq_len"),
            ("needed_gib", "kv_needed_gib"),
            ("available_gib", "kv_available_gib"),
            ("kv_tokens", "kv_tokens"),
            ("estimated_max_model_len", "estimated_max_model_len"),
        ):
            if d.get(key) is None and x.get(src) is not None:
                d[key] = x[src]
    if not d:
        return {}
    if d.get("max_model_len") is None and cfg.max_model_len:
        d["max_model_len"] = cfg.max_model_len
    fits, how = None, None
    if d.get("estimated_max_model_len"):
        fits, how = int(d["estimated_max_model_len"]), "vllm_estimate"
    elif d.get("kv_tokens"):
        fits, how = int(d["kv_tokens"]), "kv_tokens"
    elif d.get("needed_gib") and d.get("available_gib") is not None and d.get("max_model_len"):
        if d["available_gib"] <= 0:
            fits, how = 0, "ratio"
        else:
            fits, how = int(d["max_model_len"] * d["available_gib"] / d["needed_gib"]) // 16 * 16, "ratio"
    d["max_model_len_fits"] = fits
    d["fits_from"] = how
    return d


def root_cause(errors: Sequence[Any]) -> dict[str, Any] | None:
    """The first exception of a crash: the first error of a specific kind or exception line in the
    run (what the worker's traceback ends in), not the "WorkerProc hit an exception" wrapper.
    Keys: type, text, kind, where. None when the excerpt holds no such line."""
    for e in errors:
        if e.kind in _CRASH_KINDS or e.kind in (
            "shutdown_noise",
            "error_line",
            "engine_hang",
            "engine_crashed",
        ):
            continue
        if e.kind == "exception":
            return {
                "type": e.details.get("type"),
                "text": e.details.get("text"),
                "kind": "exception",
                "where": f"{e.env.source}:{e.env.lineno}",
            }
        return {
            "type": None,
            "text": quote(e.message, 500),
            "kind": e.kind,
            "where": f"{e.env.source}:{e.env.lineno}",
        }
    return None


def _chunked_prefill_off(cfg: EngineConfig) -> bool | None:
    v = cfg.flags.get("--enable-chunked-prefill")
    if v is None:
        return None
    return v is False or str(v).lower() == "false"


def _hints_in(hints: Sequence[dict], message: str) -> list[dict]:
    return [
        {"flag": h["flag"], "direction": h["direction"], "value": h["value"], "text": h["text"]}
        for h in hints
        if h.get("text") and h["text"] in message
    ]


def _oom_phase(c: Context, e: Any) -> str | None:
    """Where the engine was when it ran out of memory: loading_weights, profiling, kv_cache_init,
    cuda_graph_capture, warmup, sampler_warmup or serving (None: the excerpt does not say)."""
    if e.details.get("phase"):
        return str(e.details["phase"])
    if any(
        x.kind == "worker_exception" and x.details.get("method") == "load_model" for x in c.summary.errors
    ):
        return "loading_weights"
    phases = c.summary.oom_phases
    return phases[0] if phases else None


def engine_errors(c: Context) -> list[Finding]:
    """One finding per failure kind the log reports. Data besides the error's own details (and kind,
    count): ``hints`` [{flag, direction, value, text}] vLLM printed in that message; for
    max_model_len_exceeds_kv_cache the merged kv_fit() keys (max_model_len_fits, needed_gib,
    available_gib, kv_tokens, fits_from); for no_kv_cache_memory max_model_len_fits 0; for cuda_oom
    ``phase`` (see _oom_phase), ``pytorch_allocated_gib``, ``reserved_unallocated_gib`` and
    ``fragmentation`` (reserved-but-unallocated ≥ Settings.oom_fragmentation_gib and ≥ the failed
    allocation: expandable segments would have served it); for prompt_too_long prompt_tokens,
    limit, ``max_prompt_tokens`` (the longest rejected) and ``chunked_prefill_off`` (True / False /
    None: unknown); for engine_error / engine_startup_failed ``root_cause`` (see root_cause())."""
    s, cfg, th = c.summary, c.config, c.settings
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
        ev = (
            quote(e.message, 500) + (f" [{detail}]" if detail else "") + (f" ({count}×)" if count > 1 else "")
        )
        data = dict(e.details, kind=e.kind, count=count, hints=_hints_in(s.hints, e.message))
        if fid == "max_model_len_exceeds_kv_cache":
            fit = kv_fit(s.errors, cfg)
            data.update(fit)
            if fit.get("max_model_len_fits") is not None:
                ev += f". The largest --max-model-len that fits is {fit['max_model_len_fits']:,}" + (
                    " (vLLM's estimate)" if fit["fits_from"] == "vllm_estimate" else ""
                )
        elif fid == "no_kv_cache_memory":
            data["max_model_len_fits"] = 0
        kv = s.kv_by_worker.get(s.kv_worst_worker) if s.kv_worst_worker else None
        if fid in ("no_kv_cache_memory", "max_model_len_exceeds_kv_cache") and kv is not None:
            # several workers printed theirs: the worst decides
            data.update(worst_worker=s.kv_worst_worker, worst_worker_kv_gib=kv)
            ev += (
                f". The worst worker, {s.kv_worst_worker}, had {kv:g} GiB for the KV cache (the others more)"
            )
        elif fid == "cuda_oom":
            phase = _oom_phase(c, e)
            unalloc = e.details.get("reserved_unallocated_gib")
            tried = e.details.get("tried_to_allocate_gib")
            data.update(
                phase=phase,
                pytorch_allocated_gib=e.details.get("allocated_by_pytorch_gib"),
                reserved_unallocated_gib=unalloc,
                fragmentation=None
                if unalloc is None
                else bool(unalloc >= th.oom_fragmentation_gib and (tried is None or unalloc >= tried)),
            )
            if phase:
                title = f"Out of memory ({phase.replace('_', ' ')})"
        elif fid == "prompt_too_long":
            rej = [x for x in s.errors if x.kind == "prompt_too_long"]
            data["max_prompt_tokens"] = max(x.details.get("prompt_tokens") or 0 for x in rej) or None
            data["chunked_prefill_off"] = _chunked_prefill_off(cfg)
        elif fid in ("engine_error", "engine_startup_failed"):
            data["root_cause"] = root_cause(s.errors)
            if data["root_cause"]:
                rc = data["root_cause"]
                ev += f". Root cause: {rc['type'] + ': ' if rc['type'] else ''}{quote(rc['text'] or '', 300)}"
        out[fid] = Finding(
            id=fid,
            severity=sev,
            title=title,
            evidence=ev,
            start=e.env.ts,
            end=e.env.ts,
            where=f"{e.env.source}:{e.env.lineno}",
            data=data,
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
            data=dict(f.data, phase="loading_weights"),
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


_CONFIG_FLAG_WORDS = (
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "kv_cache_dtype",
    "block_size",
    "quantization",
    "dtype",
    "num_speculative_tokens",
    "enable_chunked_prefill",
)


def _reason(text: str) -> str:
    """vLLM's own reason from a pydantic error line: without "Value error, " and pydantic's trailer."""
    t = text.strip()
    t = t.removeprefix("Value error, ")
    return quote(re.sub(r"\s*\[type=[^\]]*\]?\s*$", "", t), 500)


def launch_rejected(c: Context) -> list[Finding]:
    """vLLM refused the launch while validating its arguments (argparse) or its config (pydantic
    ValidationError, a ValueError of a config check). Data: flag (the offending flag, None when the
    excerpt does not name one), value (the rejected value, when given), text, source ("argparse" |
    "pydantic" | "config"), reason ("unrecognized" | "required" | None)."""
    s = c.summary
    bad = [
        e for e in s.errors if e.kind in ("invalid_launch_args", "invalid_config", "max_position_exceeded")
    ]
    if not bad:
        return []
    d: dict[str, Any] = {"flag": None, "value": None, "text": None, "source": None, "reason": None}
    for e in bad:
        x = e.details
        if e.kind == "max_position_exceeded":
            d["flag"] = d["flag"] or "--max-model-len"
            d["value"] = d["value"] if d["value"] is not None else x.get("max_model_len")
            if d["text"] is None or d.get("_header"):
                d["text"], d["_header"] = _reason(e.message), False
            d["source"] = d["source"] or "config"
            continue
        d["source"] = d["source"] or x.get("source")
        if x.get("text") and (d["text"] is None or d.get("_header")):
            d["text"], d["_header"] = _reason(str(x["text"])), False  # vLLM's reason beats pydantic's header
        elif d["text"] is None:
            d["text"], d["_header"] = quote(e.message, 500), True
        d["flag"] = d["flag"] or x.get("flag")
        d["reason"] = d["reason"] or x.get("reason")
        if d["value"] is None:
            d["value"] = x.get("value", x.get("max_num_batched_tokens"))
    d.pop("_header", None)
    if d["flag"] is None and d["text"]:
        hits = [(d["text"].find(w), w) for w in _CONFIG_FLAG_WORDS if w in d["text"]]
        word = min(hits)[1] if hits else None  # the first flag the reason names is the one it judges
        d["flag"] = "--" + word.replace("_", "-") if word else None
        if word and d["value"] is None:
            m = re.search(re.escape(word) + r"\s*\((\d+(?:\.\d+)?)\)", d["text"])
            d["value"] = (float(m.group(1)) if "." in m.group(1) else int(m.group(1))) if m else None
    e0 = bad[0]
    return [
        Finding(
            id="launch_rejected",
            severity="critical",
            title="vLLM rejected the launch: "
            + (f"{d['flag']} is invalid" if d["flag"] else "invalid arguments"),
            evidence=quote(d["text"] or e0.message, 500),
            start=e0.env.ts,
            end=e0.env.ts,
            where=f"{e0.env.source}:{e0.env.lineno}",
            data=d,
        )
    ]


def silent_preemptions(c: Context) -> list[Finding]:
    """Requests preempted without a warning line (V0 prints only every 50th): between two stats
    samples Running fell by d while Waiting rose by the same d, with no prompt throughput (nothing
    was admitted), at KV usage ≥ Settings.silent_preemption_kv_pct. Data: events (sample pairs),
    requests (sum of d), kv_pct_threshold, warnings (preemption warnings printed)."""
    s = c.summary
    if not s.silent_preemption_events:
        return []
    return [
        Finding(
            id="silent_preemptions",
            severity="warning",
            title="Requests preempted without a warning",
            evidence=(
                f"{s.silent_preemption_events} time(s) Running fell while Pending/Waiting rose by the same count "
                f"({s.silent_preempted_requests} requests in all) with no prompt throughput and the KV cache "
                f"≥ {c.settings.silent_preemption_kv_pct:g}% full: the scheduler moved running requests back to "
                f"the queue (preemption); vLLM prints a warning only every 50th"
                + (
                    f", and printed {s.preemption_warnings}"
                    if s.preemption_warnings
                    else ", and printed none"
                )
            ),
            where=s.silent_preemption_where,
            data={
                "events": s.silent_preemption_events,
                "requests": s.silent_preempted_requests,
                "kv_pct_threshold": c.settings.silent_preemption_kv_pct,
                "warnings": s.preemption_warnings,
            },
        )
    ]


def swap_space(c: Context) -> list[Finding]:
    """V0 swap space in use: Swapped > 0 (requests preempted to CPU memory) and how full the CPU KV
    cache got. Data: max_swapped, samples_swapped, first_cpu_kv_pct, max_cpu_kv_pct, climbing
    (max above first), exhausted (max ≥ Settings.swap_full_pct), swap_mode (a SWAP-mode
    preemption warning was printed)."""
    s = c.summary
    if not s.max_swapped:
        return []
    exhausted = s.max_cpu_kv is not None and s.max_cpu_kv >= c.settings.swap_full_pct
    climbing = s.max_cpu_kv is not None and s.first_cpu_kv is not None and s.max_cpu_kv > s.first_cpu_kv
    return [
        Finding(
            id="swap_space_exhausted" if exhausted else "swap_space_in_use",
            severity="critical" if exhausted else "warning",
            title="Swap space exhausted: preempted requests fill the CPU KV cache"
            if exhausted
            else "Requests swapped to CPU memory",
            evidence=(
                f"up to {s.max_swapped} requests swapped in {s.swapped_samples} stats samples; CPU KV cache usage "
                + (
                    f"from {s.first_cpu_kv:.1f}% to {s.max_cpu_kv:.1f}%"
                    if s.max_cpu_kv is not None and s.first_cpu_kv is not None
                    else "not shown"
                )
            ),
            where=_where(s),
            data={
                "max_swapped": s.max_swapped,
                "samples_swapped": s.swapped_samples,
                "first_cpu_kv_pct": s.first_cpu_kv,
                "max_cpu_kv_pct": s.max_cpu_kv,
                "climbing": climbing,
                "exhausted": exhausted,
                "swap_mode": "SWAP" in s.preemption_modes,
            },
        )
    ]


def spec_decode_acceptance(c: Context) -> list[Finding]:
    """Speculative decoding whose drafts are mostly rejected: mean acceptance (the lines' acceptance
    rate, else accepted / drafted tokens) below Settings.low_spec_acceptance_pct. Data:
    mean_acceptance_pct, min_acceptance_pct, samples, accepted_tokens, draft_tokens,
    mean_acceptance_length (the last line's), threshold_pct."""
    s = c.summary
    if not s.spec_acceptance_samples:
        return []
    mean = s.spec_acceptance_sum / s.spec_acceptance_samples
    if s.spec_draft_tokens:
        mean = 100.0 * s.spec_accepted_tokens / s.spec_draft_tokens
    if mean >= c.settings.low_spec_acceptance_pct:
        return []
    return [
        Finding(
            id="spec_decode_low_acceptance",
            severity="warning",
            title="Speculative decoding: most draft tokens are rejected",
            evidence=(
                f"draft acceptance {mean:.1f}% over {s.spec_acceptance_samples} spec-decode lines, below "
                f"{c.settings.low_spec_acceptance_pct:g}%: the draft work costs more than it saves"
            ),
            where=_where(s),
            data={
                "mean_acceptance_pct": round(mean, 2),
                "min_acceptance_pct": s.spec_acceptance_min,
                "samples": s.spec_acceptance_samples,
                "accepted_tokens": s.spec_accepted_tokens or None,
                "draft_tokens": s.spec_draft_tokens or None,
                "mean_acceptance_length": s.spec_mean_len_last,
                "threshold_pct": c.settings.low_spec_acceptance_pct,
            },
        )
    ]


def vllm_hints(c: Context) -> list[Finding]:
    """Changes vLLM itself suggested in its warnings and errors. Data: hints [{flag, direction
    ("up" | "down" | "set"), value (the number vLLM gave, else None), text, where}]."""
    hs = c.summary.hints
    if not hs:
        return []
    words = ", ".join(
        f"{h['flag']} {'↑' if h['direction'] == 'up' else '↓' if h['direction'] == 'down' else '='}"
        + (f" {h['value']}" if h["value"] is not None else "")
        for h in hs[:6]
    )
    return [
        Finding(
            id="vllm_hints",
            severity="info",
            title="vLLM suggested flag changes",
            evidence=f"vLLM's own messages suggest: {words}",
            where=hs[0].get("where"),
            data={"hints": [dict(h) for h in hs]},
        )
    ]


def latency(c: Context) -> list[Finding]:
    """From /metrics: inter-token latency above the SLO, TTFT spikes under bursts (prefill stutter)."""
    m = c.metrics
    if m is None:
        return []
    out = []
    itl = tl.series(m, "itl_p95")
    pad = max(60.0, 2.0 * (tl.interval_seconds(m) or 0.0))  # the interval that saw a stuck engine resume
    if len(itl) and itl.max() > c.settings.itl_slo_seconds:
        bad = m["itl_p95"] > c.settings.itl_slo_seconds
        if bad.any():  # a token that waited for a wedged engine is the stall, not the batch
            waited = stuck.explains(c, [t.to_pydatetime() for t in m.index], pad)
            bad &= ~pd.Series(waited, index=m.index, dtype=bool)
            itl = itl[~pd.Series(waited, index=m.index, dtype=bool).reindex(itl.index, fill_value=False)]
    if len(itl) and itl.max() > c.settings.itl_slo_seconds:
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
        if spike.any():  # a spike in or right after a stuck period is the stall, not prefill
            waited = stuck.explains(c, [t.to_pydatetime() for t in j.index], pad)
            spike &= ~pd.Series(waited, index=j.index, dtype=bool)
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
                data={
                    "kv_tokens": cfg.kv_cache_tokens,
                    "max_model_len": cfg.max_model_len,
                    "max_model_len_fits": cfg.kv_cache_tokens,
                    "fits_from": "kv_tokens",
                },
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
    launch_rejected,
    failing.engine_crashed,
    failing.engine_error,
    silent_preemptions,
    swap_space,
    spec_decode_acceptance,
    vllm_hints,
    capacity_facts,
    kv_cache_saturated,
    preemptions,
    queue_bound,
    too_many_seqs,
    throughput_collapse,
    max_model_len_unused,
    low_prefix_hit,
    engine_stalled,
    stuck.engine_stuck,
    latency,
)


def run_all(c: Context) -> list[Finding]:
    out: list[Finding] = []
    for det in DETECTORS:
        out.extend(det(c))
    out = stuck.reconcile(out)
    if not any(severity_rank(f.severity) >= severity_rank("warning") for f in out):
        # vLLM's own hints are evidence for a problem; on a healthy log they stay in events.hints
        out = [f for f in out if f.id != "vllm_hints"]
    out.sort(key=lambda f: -severity_rank(f.severity))
    return out


def worst(findings: Sequence[Finding]) -> str | None:
    return max((f.severity for f in findings), key=severity_rank, default=None)
