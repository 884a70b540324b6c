"""The GPU board and the board of vLLM's newer machinery (speculative decoding, KV offload and
transfer, prefill/decode disaggregation). Part of the dashboard builder (grafanalib stays inside
``observe.dashboards``); helpers from the package.

- ``observe-vllm-gpu``: NVIDIA dcgm-exporter's default counters (``DCGM_FI_DEV_*``, see
  deploy/kubernetes/components/dcgm-exporter and compose's GPU profile) per GPU, labelled with the
  ``namespace`` / ``pod`` holding it, beside vLLM's KV-cache usage of the same pod;
- ``observe-vllm-spec-kv-transfer``: draft acceptance, KV offload traffic and CPU-tier usage, NIXL
  and Mooncake transfer times, and the waiting requests by async-KV-load stage of a P/D consumer.
Panels stay empty where the feature is off: vLLM creates those series only when it is on.
"""

from __future__ import annotations

from observe.dashboards import common as d

# dcgm-exporter's own labels (with honorLabels) name the GPU's holder; compose has none: All = .*
GPU_SEL = 'namespace=~"$namespace"'
BY_GPU = "namespace, pod, gpu"


def _dcgm(metric: str, op: str = "max") -> str:
    return f"{op} by ({BY_GPU}) ({metric}{{{GPU_SEL}}})"


def gpu() -> d.g.Dashboard:
    fb_used = _dcgm("DCGM_FI_DEV_FB_USED", "sum")
    fb_total = f"{fb_used} + {_dcgm('DCGM_FI_DEV_FB_FREE', 'sum')}"
    panels = [
        (
            12,
            8,
            d._ts(
                "GPU utilisation",
                "DCGM_FI_DEV_GPU_UTIL per GPU (percent of time a kernel ran). Low while vLLM has "
                "waiting requests: the batch is limited elsewhere (KV cache, --max-num-seqs).",
                [d._t(_dcgm("DCGM_FI_DEV_GPU_UTIL"), "{{pod}} gpu {{gpu}}")],
                unit="percent",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "GPU memory used vs vLLM's KV-cache usage",
                "Framebuffer used / total per GPU (dcgm-exporter) beside vLLM's own KV-cache usage "
                "of the pod holding it. vLLM reserves --gpu-memory-utilization of the memory at "
                "start, so memory stays high while the KV share moves with load.",
                [
                    d._t(d._ratio(fb_used, fb_total), "memory {{pod}} gpu {{gpu}}", "A"),
                    d._t(
                        d.fold(
                            "vllm:kv_cache_usage_perc",
                            f"max by (namespace, pod) ({{m}}{{{d.SEL}}})",
                        ),
                        "KV cache {{pod}}",
                        "B",
                    ),
                ],
                unit="percentunit",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "Power draw",
                "DCGM_FI_DEV_POWER_USAGE per GPU, in watts. Near the board limit the clocks throttle.",
                [d._t(_dcgm("DCGM_FI_DEV_POWER_USAGE"), "{{pod}} gpu {{gpu}}")],
                unit="watt",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "GPU temperature",
                "DCGM_FI_DEV_GPU_TEMP per GPU. Sustained high temperature throttles clocks: check "
                "cooling before tuning vLLM.",
                [d._t(_dcgm("DCGM_FI_DEV_GPU_TEMP"), "{{pod}} gpu {{gpu}}")],
                unit="celsius",
            ),
        ),
    ]
    return d._dashboard(
        "gpu",
        "vLLM / GPUs (observe)",
        "GPU utilisation, memory, power and temperature from NVIDIA's dcgm-exporter, joined to vLLM "
        "on namespace and pod.",
        d._place(panels),
    )


def spec_kv_transfer() -> d.g.Dashboard:
    by = "instance, model_name"
    accepted = d._rate("vllm:spec_decode_num_accepted_tokens_total", by)
    drafted = d._rate("vllm:spec_decode_num_draft_tokens_total", by)
    panels = [
        (
            12,
            8,
            d._ts(
                "Speculative decoding: draft acceptance rate",
                "Accepted / proposed draft tokens. Low acceptance wastes the draft work: fewer "
                "speculative tokens (--speculative-config num_speculative_tokens) or another "
                "draft method.",
                [d._t(d._ratio(accepted, drafted), "{{instance}} {{model_name}}")],
                unit="percentunit",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "KV offload traffic",
                "Bytes per second stored from GPU to the offload tier and loaded back (KV offload "
                "connectors). Loads are prefix hits served from the offload tier.",
                [
                    d._t(d._rate("vllm:kv_offload_store_bytes_total", "instance"), "store {{instance}}", "A"),
                    d._t(d._rate("vllm:kv_offload_load_bytes_total", "instance"), "load {{instance}}", "B"),
                ],
                unit="Bps",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "KV offload CPU tier usage",
                "Share of the CPU offload tier in use. Full: older blocks are evicted from it and "
                "their prefixes recomputed.",
                [d._t(d._gauge("vllm:kv_offload_cpu_cache_usage_perc", "max", "instance"), "{{instance}}")],
                unit="percentunit",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "KV transfer time (NIXL, Mooncake), p50 / p99",
                "Duration of one KV-cache transfer between prefill and decode instances. Rising "
                "transfer time shows up as TTFT on the decode side.",
                [
                    d._t(d._hq(0.5, "vllm:nixl_xfer_time_seconds", "instance"), "NIXL p50 {{instance}}", "A"),
                    d._t(
                        d._hq(0.99, "vllm:nixl_xfer_time_seconds", "instance"), "NIXL p99 {{instance}}", "B"
                    ),
                    d._t(
                        d._hq(0.99, "vllm:mooncake_xfer_time_seconds", "instance"),
                        "Mooncake p99 {{instance}}",
                        "C",
                    ),
                ],
                unit="s",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "Failed KV transfers",
                "NIXL transfers that failed per second (handshake and notification failures "
                "included); requests then recompute their prefill.",
                [d._t(d._rate("vllm:nixl_num_failed_transfers_total", "instance"), "{{instance}}")],
                unit="ops",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "P/D: waiting requests by KV-load stage",
                "vllm:num_requests_kv_fetch_by_stage on a KV consumer (decode side): waiting to "
                "start the async KV load, loading, or loaded and not yet running. Many loading: the "
                "transfer is the bottleneck; many loaded: the decode batch is full.",
                [
                    d._t(
                        d._gauge("vllm:num_requests_kv_fetch_by_stage", "sum", "instance, stage"),
                        "{{stage}} {{instance}}",
                    )
                ],
            ),
        ),
    ]
    return d._dashboard(
        "spec-kv-transfer",
        "vLLM / Speculative decoding, KV offload & transfer (observe)",
        "Draft acceptance, KV offload traffic, KV transfer between prefill and decode instances.",
        d._place(panels),
    )
