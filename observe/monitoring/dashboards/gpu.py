"""The GPU board and the board of vLLM's newer machinery (speculative decoding, KV offload and
transfer, prefill/decode disaggregation). Part of the dashboard builder (grafanalib stays inside
``observe.monitoring.dashboards``); helpers from the package.

- ``observe-vllm-gpu``: NVIDIA dcgm-exporter's default counters (``DCGM_FI_DEV_*``, see
  deploy/kubernetes/components/dcgm-exporter and compose's GPU profile) per GPU, as the recording
  rules (observe.monitoring.recording_rules.gpu_rules) label them with the ``namespace`` / ``pod`` holding the
  GPU whichever label form arrives, beside vLLM's KV-cache usage of the same pod; then, per vLLM
  pod, tokens per joule, GPU-seconds per 1000 tokens and idle allocated GPU-hours;
- ``observe-vllm-spec-kv-transfer``: draft acceptance, KV offload traffic and CPU-tier usage, NIXL
  and Mooncake transfer times, and the waiting requests by async-KV-load stage of a P/D consumer.
Panels stay empty where the feature is off: vLLM creates those series only when it is on.
"""

from __future__ import annotations

from observe.metrics import names
from observe.monitoring.dashboards import common as d
from observe.settings import Settings

# The GPU rules' series carry the GPU holder's namespace / pod (either dcgm label form); compose has
# none: All = .*
GPU_SEL = 'namespace=~"$namespace"'
BY_GPU = "namespace, pod, gpu"
BY_POD = "namespace, pod"
RW = Settings().rate_window  # the window the GPU rules' names carry (rate5m)
RULES = " (recording rules)"
NEEDS_RULES = " Needs observe's recording rules (alerts/), which join dcgm-exporter's series to vLLM's."


def _gpu(record: str, op: str = "max", by: str = BY_GPU) -> str:
    return f"{op} by ({by}) ({record}{{{GPU_SEL}}})"


def _per_gpu(title: str, desc: str, record: str, unit: str) -> tuple[int, int, d.g.TimeSeries]:
    return (
        12,
        8,
        d._ts(title + RULES, desc + NEEDS_RULES, [d._t(_gpu(record), "{{pod}} gpu {{gpu}}")], unit=unit),
    )


def _per_pod(title: str, desc: str, record: str, unit: str) -> tuple[int, int, d.g.TimeSeries]:
    target = d._t(_gpu(record, "sum", BY_POD), "{{namespace}}/{{pod}}")
    return (8, 8, d._ts(title + RULES, desc + NEEDS_RULES, [target], unit=unit))


def gpu() -> d.g.Dashboard:
    fb_used = _gpu("gpu:dcgm_fb_used:mebibytes", "sum")
    fb_total = f"{fb_used} + {_gpu('gpu:dcgm_fb_free:mebibytes', 'sum')}"
    panels = [
        _per_gpu(
            "GPU utilisation",
            "DCGM_FI_DEV_GPU_UTIL per GPU (percent of time a kernel ran). Low while vLLM has "
            "waiting requests: the batch is limited elsewhere (KV cache, --max-num-seqs).",
            "gpu:dcgm_gpu_util:percent",
            "percent",
        ),
        (
            12,
            8,
            d._ts(
                "GPU memory used vs vLLM's KV-cache usage" + RULES,
                "Framebuffer used / total per GPU (DCGM_FI_DEV_FB_USED, _FB_FREE) beside vLLM's own "
                "KV-cache usage of the pod holding it. vLLM reserves --gpu-memory-utilization of the "
                "memory at start, so memory stays high while the KV share moves with load." + NEEDS_RULES,
                [
                    d._t(d._ratio(fb_used, fb_total), "memory {{pod}} gpu {{gpu}}", "A"),
                    d._t(
                        d.fold(
                            names.KV_CACHE_USAGE_PERC,
                            f"max by ({BY_POD}) ({{m}}{{{d.SEL}}})",
                        ),
                        "KV cache {{pod}}",
                        "B",
                    ),
                ],
                unit="percentunit",
            ),
        ),
        _per_gpu(
            "Power draw",
            "DCGM_FI_DEV_POWER_USAGE per GPU, in watts. Near the board limit the clocks throttle.",
            "gpu:dcgm_power_usage:watts",
            "watt",
        ),
        _per_gpu(
            "GPU temperature",
            "DCGM_FI_DEV_GPU_TEMP per GPU. Sustained high temperature throttles clocks: check "
            "cooling before tuning vLLM.",
            "gpu:dcgm_gpu_temp:celsius",
            "celsius",
        ),
        _per_pod(
            "Tokens per joule",
            "Prompt + generated tokens per second of each vLLM pod / the power of the GPUs it holds "
            "(the energy counter DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION as a rate, else "
            "DCGM_FI_DEV_POWER_USAGE): 3000 tokens/s on 300 W is 10. Higher is better; it rises with "
            "the batch until the GPU saturates.",
            f"pod:vllm_tokens_per_joule:ratio_rate{RW}",
            "none",
        ),
        _per_pod(
            "GPU-seconds per 1000 tokens",
            "GPUs a vLLM pod holds / its tokens per second, per 1000 tokens: what 1000 prompt + "
            "generated tokens cost in GPU time. Lower is better.",
            f"pod:vllm_gpu_seconds_per_1k_tokens:ratio_rate{RW}",
            "s",
        ),
        _per_pod(
            "Idle allocated GPU-hours (last hour)",
            "GPU-hours in the last hour that a vLLM pod held GPUs with no running request and "
            "utilisation at or below gpu_idle_util_pct (5 %): capacity paid for and unused. Scale "
            "the deployment down, or share the GPUs.",
            "pod:dcgm_idle_gpu_hours:sum1h",
            "h",
        ),
    ]
    return d._dashboard(
        "gpu",
        "vLLM / GPUs (observe)",
        "GPU utilisation, memory, power and temperature from NVIDIA's dcgm-exporter, joined to vLLM "
        "on namespace and pod; tokens per joule, GPU-seconds per 1000 tokens, idle allocated GPU-hours.",
        d._place(panels),
    )


def spec_kv_transfer() -> d.g.Dashboard:
    by = "instance, model_name"
    accepted = d._rate(names.SPEC_DECODE_NUM_ACCEPTED_TOKENS_TOTAL, by)
    drafted = d._rate(names.SPEC_DECODE_NUM_DRAFT_TOKENS_TOTAL, by)
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
                    d._t(d._rate(names.KV_OFFLOAD_STORE_BYTES_TOTAL, "instance"), "store {{instance}}", "A"),
                    d._t(d._rate(names.KV_OFFLOAD_LOAD_BYTES_TOTAL, "instance"), "load {{instance}}", "B"),
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
                [d._t(d._gauge(names.KV_OFFLOAD_CPU_CACHE_USAGE_PERC, "max", "instance"), "{{instance}}")],
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
                    d._t(d._hq(0.5, names.NIXL_XFER_TIME_SECONDS, "instance"), "NIXL p50 {{instance}}", "A"),
                    d._t(d._hq(0.99, names.NIXL_XFER_TIME_SECONDS, "instance"), "NIXL p99 {{instance}}", "B"),
                    d._t(
                        d._hq(0.99, names.MOONCAKE_XFER_TIME_SECONDS, "instance"),
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
                [d._t(d._rate(names.NIXL_NUM_FAILED_TRANSFERS_TOTAL, "instance"), "{{instance}}")],
                unit="ops",
            ),
        ),
        (
            12,
            8,
            d._ts(
                "P/D: waiting requests by KV-load stage",
                f"{names.NUM_REQUESTS_KV_FETCH_BY_STAGE} on a KV consumer (decode side): waiting to "
                "start the async KV load, loading, or loaded and not yet running. Many loading: the "
                "transfer is the bottleneck; many loaded: the decode batch is full.",
                [
                    d._t(
                        d._gauge(names.NUM_REQUESTS_KV_FETCH_BY_STAGE, "sum", "instance, stage"),
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
