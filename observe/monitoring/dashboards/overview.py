"""The overview board (``observe-vllm-overview``): throughput, TTFT / ITL / E2E quantiles and heatmaps,
SLO attainment, running / waiting, KV usage, preemptions, prefix-cache hits, errors."""

from __future__ import annotations

import grafanalib.core as g

from observe.metrics import names
from observe.monitoring.dashboards.common import (
    BY,
    SEL_RULES,
    _dashboard,
    _errors_ratio,
    _gauge,
    _heatmap,
    _hq,
    _http_5xx_ratio,
    _place,
    _quantiles,
    _rate,
    _ratio,
    _stat,
    _t,
    _ts,
    kv_steps,
)
from observe.settings import Settings


def overview(s: Settings) -> g.Dashboard:
    panels = [
        (
            4,
            4,
            _stat(
                "Requests / s",
                "Finished requests per second. A drop to 0 while clients send traffic means "
                "vLLM is down or stuck: check the VLLMDown alert and the engine log.",
                _rate(names.REQUEST_SUCCESS_TOTAL),
                "reqps",
                decimals=2,
            ),
        ),
        (
            4,
            4,
            _stat(
                "Running",
                "Requests in the running batch. Sitting at --max-num-seqs means the batch is "
                "full: raise --max-num-seqs only if KV usage has headroom.",
                _gauge(names.NUM_REQUESTS_RUNNING, "sum"),
            ),
        ),
        (
            4,
            4,
            _stat(
                "Waiting",
                "Requests queued. A queue that does not drain means the server is over "
                "capacity: add replicas or lower load.",
                _gauge(names.NUM_REQUESTS_WAITING, "sum"),
                thresholds=[("green", None), ("orange", 1), ("red", 50)],
            ),
        ),
        (
            4,
            4,
            _stat(
                "KV cache usage",
                "Highest KV-cache usage across instances. Near 100% with waiting requests or "
                "preemptions: lower --max-num-seqs or raise --gpu-memory-utilization (see the KV cache dashboard).",
                _gauge(names.KV_CACHE_USAGE_PERC, "max"),
                "percentunit",
                decimals=1,
                thresholds=kv_steps(s),
            ),
        ),
        (
            4,
            4,
            _stat(
                "Preemptions / s",
                "Requests evicted from the KV cache and recomputed. Anything sustained above "
                "0 wastes compute: lower --max-num-seqs or --max-num-batched-tokens.",
                _rate(names.NUM_PREEMPTIONS_TOTAL),
                "none",
                decimals=2,
                thresholds=[("green", None), ("orange", 0.01), ("red", 0.1)],
            ),
        ),
        (
            4,
            4,
            _stat(
                "Error ratio",
                "Share of requests finished with an error. Above a few percent: read the engine "
                "log (observe diagnose) for OOMs and crashes.",
                f"max({_errors_ratio(BY)})",
                "percentunit",
                decimals=2,
                thresholds=[("green", None), ("orange", 0.01), ("red", 0.05)],
            ),
        ),
        (
            12,
            8,
            _ts(
                "Request throughput by finished reason",
                "Finished requests per second by finished_reason. Many 'length' means max_tokens cuts answers; "
                "'abort' means clients gave up (often from long queues); 'error' needs the engine log.",
                [
                    _t(
                        _rate(names.REQUEST_SUCCESS_TOTAL, "instance, finished_reason"),
                        "{{instance}} {{finished_reason}}",
                    )
                ],
                "reqps",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Token throughput",
                "Prompt (prefill) and generation tokens per second. Generation flat while requests queue: the "
                "engine is saturated; compare with the running batch.",
                [
                    _t(
                        _rate(names.PROMPT_TOKENS_TOTAL, "instance"),
                        "prompt {{instance}}",
                    ),
                    _t(
                        _rate(names.GENERATION_TOKENS_TOTAL, "instance"),
                        "generation {{instance}}",
                        "B",
                    ),
                ],
                "short",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Time to first token (p50 / p90 / p99)",
                "TTFT quantiles from vLLM's histogram. Rising with the queue: capacity; rising alone: long prompts "
                "(enable chunked prefill, lower --max-num-batched-tokens).",
                _quantiles(names.TIME_TO_FIRST_TOKEN_SECONDS),
                "s",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Inter-token latency (p50 / p90 / p99)",
                f"Time between streamed tokens ({names.INTER_TOKEN_LATENCY_SECONDS}, or time_per_output_token before "
                "v0.11). Grows with the decode batch: lower --max-num-seqs for snappier streams.",
                _quantiles(names.INTER_TOKEN_LATENCY_SECONDS),
                "s",
            ),
        ),
        (
            8,
            8,
            _ts(
                "End-to-end latency (p50 / p90 / p99)",
                "Whole-request latency. Compare with queue time below: if most of it is queueing, add capacity.",
                _quantiles(names.E2E_REQUEST_LATENCY_SECONDS),
                "s",
            ),
        ),
        (
            8,
            8,
            _ts(
                "SLO attainment (1h; needs observe's recording rules)",
                "Share of requests (TTFT) and tokens (ITL) within the SLO thresholds set in observe's alert "
                "Settings, over the last hour. Empty: load observe's recording rules (alerts/*.yml or the "
                "PrometheusRule); the thresholds live there. Below target: the SLO burn alerts fire; see "
                "docs/runbooks.md.",
                [
                    _t(f"1 - instance:vllm_ttft_slo_errors:ratio_rate1h{{{SEL_RULES}}}", "TTFT {{instance}}"),
                    _t(
                        f"1 - instance:vllm_itl_slo_errors:ratio_rate1h{{{SEL_RULES}}}",
                        "ITL {{instance}}",
                        "B",
                    ),
                ],
                "percentunit",
                valueMax=1,
            ),
        ),
        (
            8,
            8,
            _ts(
                "Running and waiting requests",
                "The batch (running) and the queue (waiting). Waiting above zero for long: over capacity or a KV "
                "cache too small for the batch — see the KV cache dashboard.",
                [
                    _t(
                        _gauge(names.NUM_REQUESTS_RUNNING, "sum", "instance"),
                        "running {{instance}}",
                    ),
                    _t(
                        _gauge(names.NUM_REQUESTS_WAITING, "sum", "instance"),
                        "waiting {{instance}}",
                        "B",
                    ),
                ],
                "short",
            ),
        ),
        (
            8,
            8,
            _ts(
                "KV cache usage",
                f"Fraction of KV-cache blocks in use ({names.KV_CACHE_USAGE_PERC}, gpu_cache_usage_perc before "
                "v0.10). Pinned near 100% with preemptions: lower --max-num-seqs or give the cache more memory.",
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
            8,
            8,
            _ts(
                "Preemptions / s",
                "Requests preempted per second. Sustained preemptions mean the KV cache cannot hold the batch: "
                "lower --max-num-seqs or --max-num-batched-tokens.",
                [_t(_rate(names.NUM_PREEMPTIONS_TOTAL, "instance"), "{{instance}}")],
                "short",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Prefix-cache hit ratio",
                "Share of prompt tokens served from the prefix cache. Low with shared system prompts: check "
                "--enable-prefix-caching; it can drop under KV pressure as cached blocks are evicted.",
                [
                    _t(
                        _ratio(
                            _rate(names.PREFIX_CACHE_HITS_TOTAL, "instance"),
                            _rate(names.PREFIX_CACHE_QUERIES_TOTAL, "instance"),
                        ),
                        "{{instance}}",
                    )
                ],
                "percentunit",
                valueMin=0,
                valueMax=1,
            ),
        ),
        (
            8,
            8,
            _ts(
                "Errors",
                "Requests finished with an error and HTTP 5xx answers on /v1/*, as a share of all. Any sustained "
                "value: read the engine log; VLLMRequestErrors alerts above 5%.",
                [
                    _t(
                        _errors_ratio("instance"),
                        "finished_reason=error {{instance}}",
                    ),
                    _t(_http_5xx_ratio(), "HTTP 5xx {{instance}}", "B"),
                ],
                "percentunit",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Queue time (p50 / p99)",
                "Time requests spent waiting before running. If it dominates end-to-end latency, add capacity.",
                [
                    _t(
                        _hq(q, names.REQUEST_QUEUE_TIME_SECONDS, "instance"),
                        f"p{int(q * 100)} {{{{instance}}}}",
                        ref,
                    )
                    for q, ref in ((0.5, "A"), (0.99, "B"))
                ],
                "s",
            ),
        ),
        (
            8,
            8,
            _heatmap(
                "Time to first token distribution",
                "TTFT histogram over time (requests per bucket). A second band at high latency is "
                "queueing or preempted requests: see the KV cache dashboard.",
                names.TIME_TO_FIRST_TOKEN_SECONDS,
            ),
        ),
        (
            8,
            8,
            _heatmap(
                "Inter-token latency distribution",
                f"Gaps between streamed tokens per bucket over time ({names.INTER_TOKEN_LATENCY_SECONDS}, or "
                "time_per_output_token before v0.11). A band moving up with the batch: decode steps slow "
                "down as the batch grows (lower --max-num-seqs); scattered high cells: long prefills "
                "stall decodes (lower --max-num-batched-tokens for smoother streams).",
                names.INTER_TOKEN_LATENCY_SECONDS,
            ),
        ),
        (
            8,
            8,
            _heatmap(
                "End-to-end latency distribution",
                "Whole-request latency per bucket over time. Two bands: short and long answers (see "
                "request sizes on the tuning board); the whole distribution moving up with the queue: "
                "add capacity.",
                names.E2E_REQUEST_LATENCY_SECONDS,
            ),
        ),
    ]
    return _dashboard(
        "overview",
        "vLLM / Overview (observe)",
        "Throughput, latency, SLOs, batch and KV cache of vLLM servers (observe).",
        _place(panels),
    )
