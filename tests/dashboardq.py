"""The committed Grafana dashboards and their queries as Prometheus sees them (shared by the dashboard
tests and the real-Prometheus end-to-end test)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from observe.monitoring import dashboards

ROOT = Path(__file__).resolve().parents[1]
MODELS = {p.name: json.loads(p.read_text()) for p in sorted((ROOT / "dashboards").glob("*.json"))}

# what NVIDIA's dcgm-exporter exports by default (the GPU rules and board read only these),
# tests/data/dcgm/default-counters.csv
DCGM = {
    ln.split(",")[0].strip()
    for ln in (ROOT / "tests" / "data" / "dcgm" / "default-counters.csv").read_text().splitlines()
    if ln.startswith("DCGM_")
}
_DCGM = "NVIDIA dcgm-exporter (a GPU node), not vLLM"
_SPEC = "only with --speculative-config"
_OFFLOAD = "only with a KV offload connector (--kv-transfer-config OffloadingConnector)"
_PD = "only on a P/D KV consumer (--kv-transfer-config NixlConnector / MooncakeConnector)"
# Series a plain vLLM (no GPU exporter, no LoRA, no speculative decoding, no KV connector) never
# exposes, with the reason: a panel reading one of them is empty against a plain vLLM's scrape.
FEATURE_ONLY: dict[str, str] = {
    **{
        m: _DCGM
        for m in (
            "DCGM_FI_DEV_GPU_UTIL",
            "DCGM_FI_DEV_FB_USED",
            "DCGM_FI_DEV_FB_FREE",
            "DCGM_FI_DEV_POWER_USAGE",
            "DCGM_FI_DEV_GPU_TEMP",
            # observe's GPU recording rules (observe.monitoring.recording_rules.gpu_rules): only with dcgm-exporter
            "gpu:dcgm_gpu_util:percent",
            "gpu:dcgm_fb_used:mebibytes",
            "gpu:dcgm_fb_free:mebibytes",
            "gpu:dcgm_power_usage:watts",
            "gpu:dcgm_gpu_temp:celsius",
            "pod:vllm_tokens_per_joule:ratio_rate5m",
            "pod:vllm_gpu_seconds_per_1k_tokens:ratio_rate5m",
            "pod:dcgm_idle_gpu_hours:sum1h",
        )
    },
    "vllm:lora_requests_info": "only with --enable-lora",
    "vllm:spec_decode_num_accepted_tokens_total": _SPEC,
    "vllm:spec_decode_num_draft_tokens_total": _SPEC,
    "vllm:kv_offload_store_bytes_total": _OFFLOAD,
    "vllm:kv_offload_load_bytes_total": _OFFLOAD,
    "vllm:kv_offload_cpu_cache_usage_perc": _OFFLOAD,
    "vllm:nixl_xfer_time_seconds_bucket": _PD,
    "vllm:nixl_num_failed_transfers_total": _PD,
    "vllm:mooncake_xfer_time_seconds_bucket": _PD,
    "vllm:num_requests_kv_fetch_by_stage": _PD,
}


def grafana_to_promql(expr: str) -> str:
    """A Grafana query as Prometheus sees it: variables (``$namespace`` too) → match-all, $__rate_interval → 5m, the
    step-budget textbox → its default, label_values(q, l) → q."""
    m = re.fullmatch(r"label_values\((.*),\s*\w+\)", expr.strip(), flags=re.S)
    if m:
        expr = m.group(1)
    expr = expr.replace("$__rate_interval", "5m").replace("$__range", "1h")
    expr = expr.replace("$max_num_batched_tokens", dashboards.BUDGET.query)
    return re.sub(r"\$\{?(namespace|job|instance|model_name|engine)\}?", ".*", expr)
