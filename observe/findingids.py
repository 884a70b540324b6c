"""Every finding id: the one place each is written. Compare and build findings with these."""

from __future__ import annotations

from enum import StrEnum


class FindingId(StrEnum):
    # the engine did not start, failed or died; requests rejected (rules.failures)
    MAX_MODEL_LEN_EXCEEDS_KV_CACHE = "max_model_len_exceeds_kv_cache"
    MAX_MODEL_LEN_EXCEEDS_MODEL = "max_model_len_exceeds_model"
    NO_KV_CACHE_MEMORY = "no_kv_cache_memory"
    GPU_MEMORY_BUSY = "gpu_memory_busy"
    CUDA_OOM = "cuda_oom"
    GPU_MEMORY_UTILIZATION_TOO_HIGH = "gpu_memory_utilization_too_high"
    LAUNCH_REJECTED = "launch_rejected"
    ENGINE_STARTUP_FAILED = "engine_startup_failed"
    ENGINE_ERROR = "engine_error"
    ENGINE_CRASHED = "engine_crashed"
    PROMPT_TOO_LONG = "prompt_too_long"
    # KV cache and memory (rules.kv)
    KV_CACHE_SATURATED = "kv_cache_saturated"
    PREEMPTIONS = "preemptions"
    PREEMPTIONS_LIKELY = "preemptions_likely"
    SILENT_PREEMPTIONS = "silent_preemptions"
    SWAP_SPACE_IN_USE = "swap_space_in_use"
    SWAP_SPACE_EXHAUSTED = "swap_space_exhausted"
    LOW_MAX_CONCURRENCY = "low_max_concurrency"
    GPU_MEMORY_UTILIZATION_HIGH = "gpu_memory_utilization_high"
    LOW_PREFIX_CACHE_HIT_RATE = "low_prefix_cache_hit_rate"
    # batch size and queues (rules.batch)
    QUEUE_MEMORY_BOUND = "queue_memory_bound"
    QUEUE_SEQ_BOUND = "queue_seq_bound"
    QUEUE_PREFILL_BOUND = "queue_prefill_bound"
    TOO_MANY_SEQS = "too_many_seqs"
    THROUGHPUT_COLLAPSE = "throughput_collapse"
    # context length (rules.length)
    MAX_MODEL_LEN_UNUSED = "max_model_len_unused"
    # latency and SLOs (rules.latency)
    ITL_HIGH = "itl_high"
    TTFT_SPIKES = "ttft_spikes"
    # stalls and hangs (rules.stall)
    ENGINE_STALLED = "engine_stalled"
    ENGINE_STUCK = "engine_stuck"
    # speculative decoding (rules.spec)
    SPEC_DECODE_LOW_ACCEPTANCE = "spec_decode_low_acceptance"
    # vLLM's own suggestions (rules.hints)
    VLLM_HINTS = "vllm_hints"
