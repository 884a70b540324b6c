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

from observe.metrics import histograms as names_histograms
from observe.metrics import recent as names_recent
from observe.metrics.catalog import ENTRIES as _SCALARS
from observe.metrics.catalog import METRIC_TYPES, Alias, Metric, _m

__all__ = [
    "Alias",
    "Metric",
    "METRIC_TYPES",
    "CATALOG",
    "OBSERVE_METRICS",
    "canonical",
    "exposed_names",
    "is_known_family",
    "split_sample_name",
]

ENTRIES: tuple[Metric, ...] = _SCALARS + names_histograms.HISTOGRAMS

# every name in the hand-written catalog, counters also without _total: what tools/vllm_metric_names.py leaves out of
# observe/metrics/recent.py, the generated rows of the families vLLM added since 0.30
HAND_WRITTEN: frozenset[str] = frozenset(
    n for m in ENTRIES for a in m.names for n in (a.exposed, a.exposed.removesuffix("_total"))
)
_ENTRIES = ENTRIES + tuple(
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
    "observe_vllm_max_num_seqs": "The launch's --max-num-seqs as its log gave it (non-default args); absent when the launch did not set it. VLLMQueueBacklog's threshold is a share of it.",
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


def _known(name: str) -> str:
    """A canonical name of the catalog, checked when observe.metrics.names is imported (a misspelt constant fails
    at once): every other module takes a vLLM metric's name from the constants below."""
    if name not in CATALOG:
        raise KeyError(f"{name} is not a canonical name of the metric catalog")
    return name


def _prefix(prefix: str) -> str:
    """The common beginning of a family of catalogued names (a connector's metrics)."""
    if not any(c.startswith(prefix) for c in CATALOG):
        raise KeyError(f"no catalogued name starts with {prefix}")
    return prefix


# the canonical names observe's code reads (tests/test_metric_literals.py: no bare `vllm:` name elsewhere)
CACHE_CONFIG_INFO = _known("vllm:cache_config_info")
E2E_REQUEST_LATENCY_SECONDS = _known("vllm:e2e_request_latency_seconds")
GENERATION_TOKENS_TOTAL = _known("vllm:generation_tokens_total")
INTER_TOKEN_LATENCY_SECONDS = _known("vllm:inter_token_latency_seconds")
ITERATION_TOKENS_TOTAL = _known("vllm:iteration_tokens_total")
KV_CACHE_USAGE_PERC = _known("vllm:kv_cache_usage_perc")
KV_OFFLOAD_CPU_CACHE_USAGE_PERC = _known("vllm:kv_offload_cpu_cache_usage_perc")
KV_OFFLOAD_LOAD_BYTES_TOTAL = _known("vllm:kv_offload_load_bytes_total")
KV_OFFLOAD_STORE_BYTES_TOTAL = _known("vllm:kv_offload_store_bytes_total")
KV_OFFLOAD_TOTAL_BYTES_TOTAL = _known("vllm:kv_offload_total_bytes_total")
LORA_REQUESTS_INFO = _known("vllm:lora_requests_info")
MOONCAKE_PREFIX = _prefix("vllm:mooncake_")
MOONCAKE_XFER_TIME_SECONDS = _known("vllm:mooncake_xfer_time_seconds")
NIXL_PREFIX = _prefix("vllm:nixl_")
NIXL_NUM_FAILED_TRANSFERS_TOTAL = _known("vllm:nixl_num_failed_transfers_total")
NIXL_XFER_TIME_SECONDS = _known("vllm:nixl_xfer_time_seconds")
NUM_PREEMPTIONS_TOTAL = _known("vllm:num_preemptions_total")
NUM_REQUESTS_KV_FETCH_BY_STAGE = _known("vllm:num_requests_kv_fetch_by_stage")
NUM_REQUESTS_RUNNING = _known("vllm:num_requests_running")
NUM_REQUESTS_WAITING = _known("vllm:num_requests_waiting")
NUM_REQUESTS_WAITING_BY_REASON = _known("vllm:num_requests_waiting_by_reason")
PREFIX_CACHE_HITS_TOTAL = _known("vllm:prefix_cache_hits_total")
PREFIX_CACHE_QUERIES_TOTAL = _known("vllm:prefix_cache_queries_total")
PROMPT_TOKENS_TOTAL = _known("vllm:prompt_tokens_total")
REQUEST_DECODE_TIME_SECONDS = _known("vllm:request_decode_time_seconds")
REQUEST_GENERATION_TOKENS = _known("vllm:request_generation_tokens")
REQUEST_INFERENCE_TIME_SECONDS = _known("vllm:request_inference_time_seconds")
REQUEST_PREFILL_TIME_SECONDS = _known("vllm:request_prefill_time_seconds")
REQUEST_PROMPT_TOKENS = _known("vllm:request_prompt_tokens")
REQUEST_QUEUE_TIME_SECONDS = _known("vllm:request_queue_time_seconds")
REQUEST_SUCCESS_TOTAL = _known("vllm:request_success_total")
REQUEST_TIME_PER_OUTPUT_TOKEN_SECONDS = _known("vllm:request_time_per_output_token_seconds")
SPEC_DECODE_NUM_ACCEPTED_TOKENS_TOTAL = _known("vllm:spec_decode_num_accepted_tokens_total")
SPEC_DECODE_NUM_DRAFT_TOKENS_TOTAL = _known("vllm:spec_decode_num_draft_tokens_total")
TIME_TO_FIRST_TOKEN_SECONDS = _known("vllm:time_to_first_token_seconds")


# latency histograms reported side by side (diagnosis window summary, `observe compare`)
LATENCY_HISTOGRAMS: dict[str, str] = {
    "ttft": TIME_TO_FIRST_TOKEN_SECONDS,
    "itl": INTER_TOKEN_LATENCY_SECONDS,
    "e2e": E2E_REQUEST_LATENCY_SECONDS,
}
# the one quantile set (metricmath.latency_quantiles): p95 is the ITL finding's, p90 the summary's
LATENCY_QUANTILES: tuple[float, ...] = (0.5, 0.9, 0.95, 0.99)
