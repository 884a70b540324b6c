"""KV cache and memory: saturation, preemption (counted, likely, silent; V0 swap space: rules.swap), what the
start-up facts already say (the cache holds less than one request, fewer than two, no headroom),
the prefix cache. Pure.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from observe import timeline as tl
from observe import versions
from observe.advise import load
from observe.failures.kinds import KV_KINDS
from observe.findingids import FindingId
from observe.metrics import metricmath, names
from observe.model import EngineConfig, Finding, Preemption, StatsSample
from observe.rules.base import Doc, Lever, Rule, Section, State
from observe.rules.context import Context
from observe.rules.context import span as _span
from observe.rules.context import when as _when
from observe.rules.context import where as _where

if TYPE_CHECKING:
    from observe.settings import Settings


@dataclass
class Modes(State[Preemption]):
    """The preemption modes V0's warnings named ("RECOMPUTE", "SWAP")."""

    takes = Preemption
    modes: set[str] = field(default_factory=set)

    def add(self, ev: Preemption, settings: Settings) -> None:
        if ev.mode:
            self.modes.add(ev.mode)


@dataclass
class Silent(State[StatsSample]):
    """Silent preemptions counted line by line as the log streams (``silently_preempted``)."""

    takes = StatsSample
    events: int = 0  # sample pairs that showed one
    requests: int = 0  # requests preempted in all
    where: str | None = None  # the first
    prev: tuple[int | None, int | None] | None = None  # (running, waiting) of the previous stats line

    def add(self, ev: StatsSample, settings: Settings) -> None:
        prev, self.prev = self.prev, (ev.running, ev.waiting)
        if prev is None or prev[0] is None or prev[1] is None or ev.running is None or ev.waiting is None:
            return
        d = silently_preempted((prev[0], prev[1]), ev, settings)
        if d:
            self.events += 1
            self.requests += d
            self.where = self.where or f"{ev.env.source}:{ev.env.lineno}"


def _saturated_from_metrics(c: Context) -> list[Finding]:
    """No stats line: the KV gauge of each /metrics snapshot (vllm:kv_cache_usage_perc, 0-1; its older name
    vllm:gpu_cache_usage_perc is read as it) and the waiting gauge, judged as the stats samples are."""
    th = c.settings
    reads = [
        (100.0 * kv, metricmath.value(sc, names.NUM_REQUESTS_WAITING) or 0.0)
        for sc in c.scrapes
        if sc.ok and (kv := metricmath.value(sc, names.KV_CACHE_USAGE_PERC, agg="max")) is not None
    ]
    high = [kv for kv, _ in reads if kv >= th.kv_high_pct]
    full = [kv for kv in high if kv >= th.kv_full_pct]
    waiting = int(max((w for _, w in reads), default=0))
    if not high or (not full and not waiting and len(high) < 2):
        return []
    share = len(full) / len(reads)
    queued = share >= th.kv_saturated_share and waiting > 0
    return [
        Finding(
            id=FindingId.KV_CACHE_SATURATED,
            severity=_severity(c),
            title="KV cache saturated",
            evidence=f"KV cache usage gauge ≥ {th.kv_high_pct:g}% in {len(high)} and ≥ {th.kv_full_pct:g}% in "
            f"{len(full)} of {len(reads)} /metrics snapshots; max {max(high):.1f}%, up to {waiting} requests waiting",
            data={
                "samples_high": len(high),
                "samples_full": len(full),
                "samples": len(reads),
                "max_kv_pct": max(high),
                "share_full": round(share, 3),
                "queued": queued,
                "points": len(reads),
                "source": "metrics",
            },
        )
    ]


def _preempted(c: Context) -> int:
    """The most preemptions the log or the /metrics snapshots show (V0 warnings' cumulative count, V1's
    Preemptions: field, vllm:num_preemptions_total's rise)."""
    s = c.summary
    warned = (s.cumulative_preemptions or s.preemption_warnings) if s.preemption_warnings else 0
    return max(warned, s.interval_preemptions or 0, c.metrics_preemptions() or 0)


def _severity(c: Context) -> str:
    """A cache running full while the engine serves is a tuning problem (the warning the
    VLLMKVCacheSaturated alert also is): the server works at its memory's capacity and queues the rest.
    Critical only when it fails requests: a preemption storm or HTTP 5xx answers."""
    storm = _preempted(c) >= c.settings.preemption_storm
    return "critical" if storm or c.summary.access_errors else "warning"


def kv_cache_saturated(c: Context) -> list[Finding]:
    s, th = c.summary, c.settings
    if not s.kv_samples and c.scrapes:
        return _saturated_from_metrics(c)
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
    queued = share95 >= th.kv_saturated_share and (s.max_waiting or 0) > 0
    return [
        Finding(
            id=FindingId.KV_CACHE_SATURATED,
            severity=_severity(c),
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
                "queued": queued,
                "points": int(len(kv)),
            },
        )
    ]


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
                f"{names.NUM_PREEMPTIONS_TOTAL} was {measured} at the one snapshot (since vLLM started)"
            )
        else:
            parts.append(f"{names.NUM_PREEMPTIONS_TOTAL} rose by {measured} over the snapshots")
    if total:
        col = tl.series(c.frame, "m_preemption_rate")
        a, b = (
            _when(c.frame, c.frame["m_preemption_rate"] > 0)
            if len(col) and c.frame is not None
            else (None, None)
        )
        return [
            Finding(
                id=FindingId.PREEMPTIONS,
                severity="critical" if total >= c.settings.preemption_storm else "warning",
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
                    "modes": sorted(c.state(Modes).modes),
                    "swap_mode": "SWAP" in c.state(Modes).modes,
                    "silent": c.state(Silent).requests or None,
                },
            )
        ]
    v1 = (cfg.engine == "v1") or ("v1" in s.stats_formats)
    if v1 and measured is None and s.max_kv is not None and s.max_kv >= 99.0 and (s.max_waiting or 0) > 0:
        return [
            Finding(
                id=FindingId.PREEMPTIONS_LIKELY,
                severity="warning",
                title="Preemption likely but unmeasured",
                evidence=(
                    f"KV cache reached {s.max_kv:.1f}% with {s.max_waiting} requests waiting. The V1 engine "
                    "logs no preemption warning; give a /metrics snapshot (--metrics) to count "
                    f"{names.NUM_PREEMPTIONS_TOTAL}."
                ),
                where=_where(s),
                data={"max_kv_pct": s.max_kv},
            )
        ]
    return []


def silently_preempted(prev: tuple[int, int], ev: StatsSample, settings: Settings) -> int:
    """How many requests one stats line shows preempted without a warning (0: none): against the
    line before (``prev``: its Running, Waiting), Running fell by d while Waiting rose by the same d,
    with no prompt throughput (nothing was admitted), at KV usage ≥ Settings.silent_preemption_kv_pct.
    The diagnosis counts it line by line as the log streams (``Silent``)."""
    if ev.running is None or ev.waiting is None:
        return 0
    d = prev[0] - ev.running
    kv = ev.kv_usage_pct
    if (
        d > 0
        and ev.waiting - prev[1] == d
        and not ev.prompt_tps
        and kv is not None
        and kv >= settings.silent_preemption_kv_pct
    ):
        return d
    return 0


def silent_preemptions(c: Context) -> list[Finding]:
    """Requests preempted without a warning line (V0 prints only every 50th): between two stats
    samples Running fell by d while Waiting rose by the same d, with no prompt throughput (nothing
    was admitted), at KV usage ≥ Settings.silent_preemption_kv_pct. Data: events (sample pairs),
    requests (sum of d), kv_pct_threshold, warnings (preemption warnings printed)."""
    s, n = c.summary, c.state(Silent)
    if not n.events:
        return []
    return [
        Finding(
            id=FindingId.SILENT_PREEMPTIONS,
            severity="warning",
            title="Requests preempted without a warning",
            evidence=(
                f"{n.events} time(s) Running fell while Pending/Waiting rose by the same count "
                f"({n.requests} requests in all) with no prompt throughput and the KV cache "
                f"≥ {c.settings.silent_preemption_kv_pct:g}% full: the scheduler moved running requests back to "
                f"the queue (preemption); vLLM prints a warning only every 50th"
                + (
                    f", and printed {s.preemption_warnings}"
                    if s.preemption_warnings
                    else ", and printed none"
                )
            ),
            where=n.where,
            data={
                "events": n.events,
                "requests": n.requests,
                "kv_pct_threshold": c.settings.silent_preemption_kv_pct,
                "warnings": s.preemption_warnings,
            },
        )
    ]


#: vLLM's start-up check that the KV cache holds one request of max_model_len ("The model's max seq len (N) is larger
#: than the maximum number of tokens that can be stored in KV cache (M)"): llm_engine.py's _init_cache from 0.2.7
#: (wheels 0.2.3 → 0.2.6 have none), V1's kv_cache_utils since
KV_CHECK_SINCE = "0.2.7"


def _held(tokens: int, blocks: int | None) -> str:
    """The evidence's opening: the KV cache's tokens, and its blocks where the log gave them."""
    return f"the KV cache holds {tokens:,} tokens" + (f" ({blocks:,} blocks)" if blocks else "")


def _no_kv_check(cfg: EngineConfig, kv: int, mml: int) -> Finding:
    """A KV cache shorter than max_model_len in a release without the start-up check: the engine starts, and its
    scheduler drops each prompt that needs more blocks than the cache holds (scheduler.py, 0.2.x: "Input prompt (N
    tokens) is too long and exceeds the capacity of block_manager", the request finished ignored)."""
    ratio = kv / mml
    return Finding(
        id=FindingId.LOW_MAX_CONCURRENCY,
        severity="warning",
        title="KV cache holds less than one full-length request",
        evidence=(
            _held(kv, cfg.num_gpu_blocks)
            + f", {ratio:.2f}x of one request of max_model_len {mml:,}: this release (vLLM "
            f"{cfg.version_range.text()}) has no start-up check of it (added in {KV_CHECK_SINCE}), so the engine "
            f"starts, and its scheduler drops any prompt longer than the cache holds ('exceeds the capacity of "
            "block_manager')"
        ),
        data={
            "max_concurrency": round(ratio, 2),
            "max_model_len": mml,
            "kv_cache_tokens": kv,
        },
    )


def capacity_facts(c: Context) -> list[Finding]:
    """Startup facts that already say the KV cache is small, or memory has no headroom. A KV cache of fewer tokens
    than max_model_len is a refused start only when vLLM did not itself report room for one such request: V1 logs
    "Maximum concurrency for N tokens per request: X" after its KV size check passed (kv_cache_utils, 0.8 → 0.32), and
    a hybrid model's (sliding-window or linear-attention layers) token count is not what one request needs. Nor is it one
    when the log shows the engine up after it (a stats line, or "Starting vLLM API server": a sliding-window model's
    0.53x with the server serving, eval32bz 021), nor in a release before vLLM's check (``KV_CHECK_SINCE``): a
    warning there (eval32cg 020)."""
    cfg = c.config
    out = []
    pp = int(cfg.pipeline_parallel_size or 1)
    short = bool(
        cfg.kv_cache_tokens
        and cfg.max_model_len
        and cfg.kv_cache_tokens < cfg.max_model_len
        and pp == 1
        and not any(e.kind in KV_KINDS for e in c.summary.errors)
        and not (cfg.max_concurrency is not None and cfg.max_concurrency >= 1)
    )
    if short and versions.available(cfg.version_range, KV_CHECK_SINCE) is False:
        # a release before the check: it starts, and drops the longer prompts
        out.append(_no_kv_check(cfg, cfg.kv_cache_tokens or 0, cfg.max_model_len or 1))
    elif short and not (c.summary.samples or c.summary.ready_where):
        out.append(
            Finding(
                id=FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,
                severity="critical",
                title="--max-model-len does not fit the KV cache (vLLM refuses to start)",
                evidence=(
                    _held(cfg.kv_cache_tokens or 0, cfg.num_gpu_blocks)
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
                id=FindingId.LOW_MAX_CONCURRENCY,
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
                id=FindingId.GPU_MEMORY_UTILIZATION_HIGH,
                severity="info",
                title="--gpu-memory-utilization leaves little headroom",
                evidence=f"--gpu-memory-utilization is {u}: activation spikes and CUDA graphs have almost no room left",
                data={"gpu_memory_utilization": u},
            )
        )
    return out


@dataclass
class PrefixTraffic(State[StatsSample]):
    """The prompt throughput of the stats lines that print a prefix-cache hit rate (and a prompt throughput):
    the rate is over the recent prompts (V1's rolling window), so with hardly any prefill it tells nothing."""

    takes = StatsSample
    samples: int = 0
    prompt_tps: float = 0.0

    def add(self, ev: StatsSample, settings: Settings) -> None:
        if ev.prefix_hit_pct is not None and ev.prompt_tps is not None:
            self.samples += 1
            self.prompt_tps += ev.prompt_tps


def low_prefix_hit(c: Context) -> list[Finding]:
    s, cfg = c.summary, c.config
    if not s.prefix_hit_samples or cfg.enable_prefix_caching is False:
        return []
    mean = s.prefix_hit_sum / s.prefix_hit_samples
    if mean >= c.settings.low_prefix_hit_pct or s.prefix_hit_samples < 3:
        return []
    traffic = c.state(PrefixTraffic)
    if traffic.samples and traffic.prompt_tps / traffic.samples < c.settings.low_prefix_min_prompt_tps:
        return []  # a handful of short prompts: no hit rate to judge
    return [
        Finding(
            id=FindingId.LOW_PREFIX_CACHE_HIT_RATE,
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


# ---------------------------------------------------------------- the rules

#: the KV plan: more KV capacity (else fewer sequences) for the KV-pressure findings that call for it
KV_PLAN = Lever(
    30,
    load.kv_plan,
    answers=(
        FindingId.KV_CACHE_SATURATED,
        FindingId.PREEMPTIONS,
        FindingId.QUEUE_MEMORY_BOUND,
        FindingId.PREEMPTIONS_LIKELY,
        FindingId.LOW_MAX_CONCURRENCY,
    ),
)

SILENT_PREEMPTIONS = Rule(
    family="KV cache and memory",
    detect=silent_preemptions,
    docs=(
        Doc(
            FindingId.SILENT_PREEMPTIONS,
            "warning",
            Section.KV_PRESSURE,
            evidence=(
                "between two stats lines Running fell by d while Pending / Waiting rose by the "
                "same d, with no prompt throughput and KV usage ≥ `silent_preemption_kv_pct`: the"
                " scheduler moved running requests back to the queue; vLLM prints a preemption "
                "warning only every 50th. Data: events, requests, kv_pct_threshold, warnings"
            ),
            advice=(
                "the KV plan below when a KV-pressure finding comes with it; otherwise a note: "
                "the cache is too small for the load — grow it or add replicas"
            ),
            note=(
                "requests leave the running batch for the queue with the KV cache full: the cache"
                " is too small for the load; grow it (see above) or add replicas"
            ),
        ),
    ),
    settings=("silent_preemption_kv_pct",),
    needs=("stats",),
    states=(Silent,),
)


CAPACITY_FACTS = Rule(
    family="KV cache and memory",
    detect=capacity_facts,
    docs=(
        Doc(
            FindingId.LOW_MAX_CONCURRENCY,
            "warning",
            Section.KV_PRESSURE,
            evidence='vLLM\'s "Maximum concurrency for N tokens per request: X" < 2',
            advice=(
                "the KV plan below — but only when the cache was near full under the load seen, "
                "or no load was seen; when requests filled less than `kv_high_pct` (90%) of it, a note (the "
                "figure is at the full `--max-model-len`) and no change"
            ),
            versions="V1 \u2265 0.6, V0 \u2265 0.6",
            settings=("low_concurrency",),
        ),
        Doc(
            FindingId.GPU_MEMORY_UTILIZATION_HIGH,
            "info",
            Section.INFO,
            evidence="`--gpu-memory-utilization` ≥ `high_gpu_util`",
            advice="none",
            settings=("high_gpu_util",),
        ),
    ),
    settings=(
        "low_concurrency",
        "high_gpu_util",
    ),
    needs=("startup facts",),
    levers=(KV_PLAN,),
    also=(FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,),
)


KV_CACHE_SATURATED = Rule(
    family="KV cache and memory",
    detect=kv_cache_saturated,
    docs=(
        Doc(
            FindingId.KV_CACHE_SATURATED,
            "warning/critical",
            Section.KV_PRESSURE,
            alert="VLLMKVCacheSaturated",
            evidence="KV usage ≥ `kv_high_pct` / `kv_full_pct` in stats lines (without any: the KV gauge of the /metrics snapshots)",
            advice=(
                "a warning (a tuning problem, as its alert is), critical only with a preemption storm (≥ 50) or "
                "HTTP 5xx. Full in ≥ `kv_saturated_share` of the samples with requests waiting (data "
                "`queued`): the KV plan below. Else the KV plan when usage is ≥ `kv_high_pct` (90%) and higher "
                "at the last stats sample than at the first (it will fill, and preemption follows), unless the "
                "stats lines show no request ever waiting, nothing reports a preemption and the batch that filled "
                "it is leaving (fewer running at the last sample than the most seen); otherwise a note — "
                "the memory is used, not short"
            ),
            note=(
                "the KV cache ran full but no request waited or was preempted: the memory is "
                "used, not short; no change needed until queues or preemptions appear (then grow "
                "the cache or add replicas)"
            ),
        ),
    ),
    settings=(
        "kv_high_pct",
        "kv_full_pct",
        "kv_saturated_share",
        "max_gpu_util",
        "preemption_storm",
    ),
    needs=("stats", "metrics"),
    levers=(KV_PLAN,),
)


PREEMPTIONS = Rule(
    family="KV cache and memory",
    detect=preemptions,
    docs=(
        Doc(
            FindingId.PREEMPTIONS,
            "warning/critical",
            Section.KV_PRESSURE,
            alert="VLLMPreemptionsSustained",
            evidence=f"V0 preemption warnings, V1 `Preemptions:` field, `{names.NUM_PREEMPTIONS_TOTAL}`",
            advice="the KV plan below, from `preemption_pattern` (2) preemptions; fewer: a note, no flag",
        ),
        Doc(
            FindingId.PREEMPTIONS_LIKELY,
            "warning",
            Section.KV_PRESSURE,
            evidence="V1, KV ≥ 99% with requests waiting, no counter",
            advice="the KV plan below",
            versions="V1",
        ),
    ),
    settings=("preemption_storm", "preemption_pattern"),
    needs=(
        "stats",
        "metrics",
        "warnings",
    ),
    states=(Modes, Silent),
    levers=(KV_PLAN,),
)


LOW_PREFIX_HIT = Rule(
    family="KV cache and memory",
    detect=low_prefix_hit,
    docs=(
        Doc(
            FindingId.LOW_PREFIX_CACHE_HIT_RATE,
            "info",
            Section.INFO,
            evidence="mean prefix-cache hit rate below `low_prefix_hit_pct`, over stats lines whose mean prompt "
            "throughput reaches `low_prefix_min_prompt_tps`",
            advice="none",
        ),
    ),
    settings=("low_prefix_hit_pct", "low_prefix_min_prompt_tps"),
    needs=("stats",),
    states=(PrefixTraffic,),
)
