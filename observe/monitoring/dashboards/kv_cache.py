"""The KV-cache board (``observe-vllm-kv-cache``): measured capacity and maximum concurrency, usage,
preemptions, waiting by reason, the sidecar's findings and recommendations."""

from __future__ import annotations

import grafanalib.core as g

from observe.metrics import names
from observe.monitoring.dashboards.common import (
    DS,
    SEL,
    SEL_NO_MODEL,
    _bargauge,
    _dashboard,
    _gauge,
    _place,
    _rate,
    _stat,
    _t,
    _ts,
    kv_steps,
)
from observe.settings import Settings


def kv_cache(s: Settings) -> g.Dashboard:
    panels = [
        (
            6,
            5,
            _stat(
                "KV capacity (tokens)",
                "Tokens the KV cache holds, read by the observe sidecar from vLLM's "
                "startup log. Too small for your contexts × concurrency: raise --gpu-memory-utilization, use "
                "--kv-cache-dtype fp8, or shard with --tensor-parallel-size (observe capacity sizes it).",
                f"max(observe_vllm_kv_cache_tokens{{{SEL_NO_MODEL}}})",
                "short",
            ),
        ),
        (
            6,
            5,
            _stat(
                "Maximum concurrency",
                "How many max_model_len requests fit in the KV cache at once (startup "
                "log). Below --max-num-seqs, long requests will queue or preempt: lower --max-num-seqs or "
                "--max-model-len.",
                f"min(observe_vllm_max_concurrency{{{SEL_NO_MODEL}}})",
                "short",
                decimals=1,
            ),
        ),
        (
            6,
            5,
            _stat(
                "KV cache usage (max)",
                "Highest current KV usage. Above the alert threshold for long: "
                "VLLMKVCacheSaturated; see docs/runbooks.md.",
                _gauge(names.KV_CACHE_USAGE_PERC, "max"),
                "percentunit",
                decimals=1,
                thresholds=kv_steps(s),
            ),
        ),
        (
            6,
            5,
            _stat(
                "Open findings",
                "Findings the sidecar currently reports (same detectors as observe "
                "diagnose). See the table below and /api/diagnosis on the sidecar.",
                f"count(observe_finding{{{SEL_NO_MODEL}}} > 0) or vector(0)",
                "none",
                thresholds=[("green", None), ("orange", 1)],
            ),
        ),
        (
            12,
            8,
            _ts(
                "KV cache usage",
                "KV usage per instance. Sawtooth up to ~100% with preemptions means the batch "
                "does not fit: lower --max-num-seqs.",
                [
                    _t(
                        _gauge(names.KV_CACHE_USAGE_PERC, "max", "instance, model_name"),
                        "{{instance}} {{model_name}}",
                    )
                ],
                "percentunit",
                valueMin=0,
                valueMax=1,
            ),
        ),
        (
            12,
            8,
            _ts(
                "KV tokens in use",
                "Usage × capacity (capacity from the sidecar). Compare with your typical "
                "context length × running requests.",
                [
                    _t(
                        f"({_gauge(names.KV_CACHE_USAGE_PERC, 'max', 'instance')}) * on (instance) group_left "
                        f"max by (instance) (observe_vllm_kv_cache_tokens{{{SEL_NO_MODEL}}})",
                        "{{instance}}",
                    )
                ],
                "short",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Preemptions / s",
                "Requests evicted for lack of KV blocks. Sustained: lower --max-num-seqs or "
                "--max-num-batched-tokens, or give the cache more memory.",
                [_t(_rate(names.NUM_PREEMPTIONS_TOTAL, "instance"), "{{instance}}")],
                "short",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Waiting requests by reason",
                "capacity = waiting for KV/batch room (scale or shrink the batch); "
                "deferred = LoRA budget or KV transfer. vLLM before 2026-04 has only the total.",
                [
                    _t(
                        f"sum by (instance, reason) ({names.NUM_REQUESTS_WAITING_BY_REASON}{{{SEL}}})",
                        "{{instance}} {{reason}}",
                    ),
                    _t(_gauge(names.NUM_REQUESTS_WAITING, "sum", "instance"), "{{instance}} total", "B"),
                ],
                "short",
            ),
        ),
        (
            8,
            8,
            _bargauge(
                "KV usage per instance",
                "Current KV usage of each instance; the fullest ones are the "
                "first to preempt. Balance load or resize them.",
                _t(
                    _gauge(names.KV_CACHE_USAGE_PERC, "max", "instance, model_name"),
                    "{{instance}}",
                    instant=True,
                ),
                "percentunit",
                0,
                1,
                kv_steps(s, 0.0),
            ),
        ),
        (
            8,
            8,
            g.Table(
                title="Findings (sidecar)",
                description="What observe's detectors see now, with severity. "
                "Open /api/diagnosis on the sidecar for the evidence; the runbooks say what to change.",
                dataSource=DS,
                targets=[
                    _t(
                        f"max by (instance, id, severity) (observe_finding{{{SEL_NO_MODEL}}})",
                        instant=True,
                        fmt="table",
                    )
                ],
                transformations=[
                    {"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}
                ],
            ),
        ),
        (
            8,
            8,
            g.Table(
                title="Recommendations (sidecar)",
                description="Flag changes observe recommends for each "
                "instance. Apply the suggested value at the next vLLM restart and watch the finding clear.",
                dataSource=DS,
                targets=[
                    _t(
                        f"max by (instance, flag, current, suggested) "
                        f"(observe_recommendation_info{{{SEL_NO_MODEL}}})",
                        instant=True,
                        fmt="table",
                    )
                ],
                transformations=[
                    {"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}
                ],
            ),
        ),
    ]
    return _dashboard(
        "kv-cache",
        "vLLM / KV cache & capacity (observe)",
        "KV-cache capacity, usage and pressure, with observe's findings and recommendations.",
        _place(panels),
    )
