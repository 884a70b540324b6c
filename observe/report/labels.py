"""Human labels for the numbers a report or `observe compare` shows, and the preemption count a
header quotes with its source. One place, so the HTML, the text report and compare agree."""

from __future__ import annotations

import re
from typing import Any

_HIST = {"ttft": "TTFT", "itl": "ITL", "e2e": "end-to-end latency"}

# metricmath.window_summary's keys and compare's log rows
LABELS: dict[str, str] = {
    "scrapes": "scrapes",
    "window_seconds": "window (s)",
    "generation_tps": "generation throughput (tokens/s)",
    "preemptions": "preemptions",
    "preemptions_since_start": "preemptions since vLLM started",
    "requests_finished": "requests finished",
    "requests_finished_since_start": "requests finished since vLLM started",
    "kv_usage_max_pct": "peak KV usage (%)",
    "log_generation_tps_mean": "log: mean generation throughput (tokens/s)",
    "log_max_kv_usage_pct": "log: peak KV usage (%)",
    "log_max_running": "log: peak running requests",
    "log_max_waiting": "log: peak waiting requests",
}

_QUANTILE_KEY = re.compile(r"(?P<h>[a-z0-9]+)_p(?P<q>\d+)(?P<since>_since_start)?_s")


def metric_label(key: str) -> str:
    """`ttft_p99_since_start_s` → `TTFT p99 since vLLM started (s)`; an unknown key: words."""
    if key in LABELS:
        return LABELS[key]
    m = _QUANTILE_KEY.fullmatch(key)
    if m and m["h"] in _HIST:
        return f"{_HIST[m['h']]} p{m['q']}" + (" since vLLM started" if m["since"] else "") + " (s)"
    return key.replace("_", " ")


def preemption_count(events: dict[str, Any] | None) -> tuple[int, str] | None:
    """The measured number of preemptions and where it comes from, best source first: /metrics'
    counter, vLLM's running total in the stats lines, the per-line counts summed, then the log's
    warnings (V1 prints none: its count is only in /metrics). None when nothing counts them."""
    e = events or {}
    for key, source in (
        ("metrics_preemptions", "/metrics"),
        ("cumulative_preemptions", "vLLM's running total in the log"),
        ("interval_preemptions", "the stats lines"),
        ("preemption_warnings", "log warnings"),
    ):
        v = e.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            return int(v), source
    return None
