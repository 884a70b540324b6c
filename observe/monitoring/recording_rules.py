"""Prometheus recording rules for vLLM (``level:metric:operations``), generated from one Settings
object, and the label and selector helpers the alerting rules (``observe.monitoring.alerts``) share with them.

They first fold vLLM's renamed metrics into one series per canonical metric (`promql.fold`:
``vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc``), so alerts and dashboards work on every
vLLM version; the SLO rules record error ratios per window and aggregation level for the
multi-window, multi-burn-rate alerts.
"""

from __future__ import annotations

from typing import Any

from observe.metrics import names, promql
from observe.settings import Settings

__all__ = [
    "recording_rules",
    "gpu_rules",
    "slo_windows",
    "slo_levels",
    "by",
    "target_by",
    "sidecar_by",
    "vllm_up",
    "sidecar_up",
    "vllm_absent",
]

# Labels that tell one replica of a model from another: a per-model rule aggregates them away.
REPLICA_LABELS = ("pod", "instance", "job")


def by(s: Settings, without: tuple[str, ...] = ()) -> str:
    """Settings.rule_by as a PromQL label list, without the labels named in ``without``."""
    return ", ".join(label for label in s.rule_by if label not in without)


def target_by(s: Settings) -> str:
    """The labels of one scrape target (no model_name): HTTP series and joins on ``up``."""
    return by(s, ("model_name",))


def sidecar_by(s: Settings) -> str:
    """The labels a sidecar series shares with its vLLM's (not job, which is the sidecar's own)."""
    return by(s, ("model_name", "job"))


def _num(x: float) -> str:
    """A threshold as PromQL text, without float noise (0.144 not 0.14400000000000002)."""
    return f"{round(float(x), 9):g}"


def _digits(lo: int, hi: int) -> str:
    return str(lo) if lo == hi else f"[{lo}-{hi}]"


def _int_below(digits: str) -> list[str]:
    """Regex alternatives for the integers (no leading zeros) below the integer ``digits``."""
    out = []
    if len(digits) > 1:
        out.append("[0-9]" if len(digits) == 2 else f"[0-9]|[1-9][0-9]{{1,{len(digits) - 2}}}")
    for k, d in enumerate(digits):
        lo = 1 if k == 0 and len(digits) > 1 else 0
        if int(d) > lo:
            rest = f"[0-9]{{{len(digits) - k - 1}}}" if k < len(digits) - 1 else ""
            out.append(f"{digits[:k]}{_digits(lo, int(d) - 1)}{rest}")
    return out


def promql_regex(regex: str) -> str:
    """A regex as the text of a PromQL string (backslashes doubled)."""
    return regex.replace("\\", "\\\\")


def le_at_most(x: float) -> str:
    """A regex (RE2, anchored) for every ``le`` text whose value is at most ``x``, in each form a
    bound is written: vLLM's Python repr (``1.0``, ``0.25``, ``1e-05``) and Prometheus 3's
    normalised one (``1``). Custom buckets may lack ``x`` itself; the largest bound below it
    (``max without (le)`` of the cumulative buckets) then counts as "within the SLO"."""
    text = f"{float(x):.9f}".rstrip("0")
    whole, _, frac = text.partition(".")
    within = ["(\\.0+)?"]
    for k, d in enumerate(frac):
        if d != "0":
            within.append(f"\\.{frac[:k]}{_digits(0, int(d) - 1)}[0-9]*")
    within += [f"\\.{frac[:k]}0*" for k in range(1, len(frac) + 1)]  # x's digits cut short
    alts = [f"({a})(\\.[0-9]+)?" for a in _int_below(whole)] + [f"{whole}({'|'.join(within)})"]
    if x >= 0.001:  # the exponent forms (below 1e-4) are all smaller
        alts.append("[0-9](\\.[0-9]+)?e-[0-9]+")
    return "|".join(alts)


# ---------------------------------------------------------------- recording rules


def _sel(s: Settings, extra: str = "") -> str:
    """A selector of the vLLM targets (Settings.vllm_matchers), with ``extra`` matchers; nothing
    when both are empty (the metric's name alone picks vLLM's series)."""
    inner = ",".join(m for m in (s.vllm_matchers, extra) if m)
    return "{" + inner + "}" if inner else ""


def _up(s: Settings, matchers: str, chosen: bool, present: str) -> str:
    sel = "{" + matchers + "}" if matchers else ""
    if chosen:  # the operator's selector picks the targets
        return f"up{sel}"
    # no job-name assumption: the targets whose /metrics held ``present`` within the lookback
    return f"(up{sel} and on ({target_by(s)}) present_over_time({present}{sel}[{s.target_lookback}]))"


def vllm_up(s: Settings) -> str:
    """``up`` of the vLLM targets: those vllm_selector picks, else those (of ``selector``) that
    exposed vLLM's series within target_lookback."""
    return _up(s, s.vllm_matchers, bool(s.vllm_selector), names.NUM_REQUESTS_RUNNING)


def sidecar_up(s: Settings) -> str:
    """``up`` of the observe sidecars, as vllm_up (their own series: observe_up)."""
    return _up(s, s.observe_matchers, bool(s.observe_selector), "observe_up")


def vllm_absent(s: Settings) -> str:
    """True while no vLLM target is scraped: no ``up`` the vllm_selector picks, else no series of
    vLLM's at all."""
    return f"absent(up{_sel(s)})" if s.vllm_selector else f"absent({names.NUM_REQUESTS_RUNNING}{_sel(s)})"


def _slo_error_ratio(s: Settings, canonical: str, threshold: float, window: str, by: str) -> str:
    le = _sel(s, f'le=~"{promql_regex(le_at_most(threshold))}"')
    good = promql.fold(canonical, f"sum by ({by}) (max without (le) (rate({{m}}_bucket{le}[{window}])))")
    total = promql.fold(canonical, f"sum by ({by}) (rate({{m}}_count{_sel(s)}[{window}]))")
    return f"1 - (\n  ({good})\n/\n  ({total})\n)"


# The SLO window the dashboards plot (observe.monitoring.dashboards reads ..._slo_errors:ratio_rate1h): recorded
# whether or not a burn-rate pair uses it.
DASHBOARD_SLO_WINDOW = "1h"


def slo_windows(s: Settings) -> list[str]:
    """Every window the burn-rate alerts read, in the order the pairs name them, without duplicates,
    then the dashboards' window."""
    out: list[str] = []
    for burn in s.burn_windows:
        for w in (burn[1], burn[0]):
            if w not in out:
                out.append(w)
    if DASHBOARD_SLO_WINDOW not in out:
        out.append(DASHBOARD_SLO_WINDOW)
    return out


def slo_levels(s: Settings) -> tuple[tuple[str, str, str], ...]:
    """SLO levels: per instance (each model on each server) and per model (all its replicas
    together, still per cluster and namespace)."""
    return (("instance", by(s), "VLLM"), ("model", by(s, REPLICA_LABELS), "VLLMModel"))


def recording_rules(s: Settings) -> list[dict[str, Any]]:
    """Recording rules that turn every vLLM version's names into canonical per-instance series."""
    w = s.rate_window
    BY, TBY = by(s), target_by(s)
    v = _sel(s)
    err = _sel(s, 'finished_reason="error"')
    v1 = _sel(s, 'handler=~"/v1/.+"')
    v1_5xx = _sel(s, 'handler=~"/v1/.+",status="5xx"')
    rules: list[dict[str, str]] = [
        {
            "record": "instance:vllm_kv_cache_usage:ratio",
            "expr": promql.fold(names.KV_CACHE_USAGE_PERC, f"max by ({BY}) ({{m}}{v})"),
        },
        {
            "record": "instance:vllm_requests_running:sum",
            "expr": f"sum by ({BY}) ({names.NUM_REQUESTS_RUNNING}{v})",
        },
        {
            "record": "instance:vllm_requests_waiting:sum",
            "expr": f"sum by ({BY}) ({names.NUM_REQUESTS_WAITING}{v})",
        },
        {
            "record": f"instance:vllm_preemptions:rate{w}",
            "expr": f"sum by ({BY}) (rate({names.NUM_PREEMPTIONS_TOTAL}{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_prompt_tokens:rate{w}",
            "expr": f"sum by ({BY}) (rate({names.PROMPT_TOKENS_TOTAL}{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_generation_tokens:rate{w}",
            "expr": f"sum by ({BY}) (rate({names.GENERATION_TOKENS_TOTAL}{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_request_success:rate{w}",
            "expr": f"sum by ({BY}, finished_reason) (rate({names.REQUEST_SUCCESS_TOTAL}{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_request_errors:ratio_rate{w}",
            "expr": (
                f"sum by ({BY}) (rate({names.REQUEST_SUCCESS_TOTAL}{err}[{w}]))\n/\n"
                f"sum by ({BY}) (rate({names.REQUEST_SUCCESS_TOTAL}{v}[{w}]))"
            ),
        },
        {
            "record": f"instance:vllm_http_5xx:ratio_rate{w}",
            "expr": (
                f"sum by ({TBY}) (rate(http_requests_total{v1_5xx}[{w}]))\n/\n"
                f"sum by ({TBY}) (rate(http_requests_total{v1}[{w}]))"
            ),
        },
        {
            "record": f"instance:vllm_http_requests:rate{w}",
            "expr": f"sum by ({TBY}) (rate(http_requests_total{v1}[{w}]))",
        },
        {
            "record": f"instance:vllm_prefix_cache_hit:ratio_rate{w}",
            "expr": (
                "("
                + promql.fold(names.PREFIX_CACHE_HITS_TOTAL, f"sum by ({BY}) (rate({{m}}{v}[{w}]))")
                + ")\n/\n("
                + promql.fold(names.PREFIX_CACHE_QUERIES_TOTAL, f"sum by ({BY}) (rate({{m}}{v}[{w}]))")
                + ")"
            ),
        },
    ]
    for short, canonical in (
        ("ttft", names.TIME_TO_FIRST_TOKEN_SECONDS),
        ("itl", names.INTER_TOKEN_LATENCY_SECONDS),
        ("e2e_latency", names.E2E_REQUEST_LATENCY_SECONDS),
        ("queue_time", names.REQUEST_QUEUE_TIME_SECONDS),
    ):
        rules.append(
            {
                "record": f"instance:vllm_{short}_seconds_bucket:rate{w}",
                "expr": promql.fold(canonical, f"sum by ({BY}, le) (rate({{m}}_bucket{v}[{w}]))"),
            }
        )
    windows = list(dict.fromkeys([w, *slo_windows(s)]))
    for level, level_by, _ in slo_levels(s):
        for window in windows:
            # requests started (one TTFT observation each): the traffic floor of the ratio alerts
            rules.append(
                {
                    "record": f"{level}:vllm_requests:rate{window}",
                    "expr": promql.fold(
                        names.TIME_TO_FIRST_TOKEN_SECONDS,
                        f"sum by ({level_by}) (rate({{m}}_count{v}[{window}]))",
                    ),
                }
            )
        for window in slo_windows(s):
            rules.append(
                {
                    "record": f"{level}:vllm_ttft_slo_errors:ratio_rate{window}",
                    "expr": _slo_error_ratio(
                        s, names.TIME_TO_FIRST_TOKEN_SECONDS, s.ttft_slo_seconds, window, level_by
                    ),
                }
            )
            rules.append(
                {
                    "record": f"{level}:vllm_itl_slo_errors:ratio_rate{window}",
                    "expr": _slo_error_ratio(
                        s, names.INTER_TOKEN_LATENCY_SECONDS, s.itl_slo_seconds, window, level_by
                    ),
                }
            )
    return rules + gpu_rules(s)


# ---------------------------------------------------------------- GPUs (dcgm-exporter) beside vLLM

# NVIDIA dcgm-exporter's default counters (its etc/default-counters.csv) the GPU rules normalise.
DCGM_GAUGES = {
    "gpu_util:percent": "DCGM_FI_DEV_GPU_UTIL",
    "power_usage:watts": "DCGM_FI_DEV_POWER_USAGE",
    "fb_used:mebibytes": "DCGM_FI_DEV_FB_USED",
    "fb_free:mebibytes": "DCGM_FI_DEV_FB_FREE",
    "gpu_temp:celsius": "DCGM_FI_DEV_GPU_TEMP",
}
DCGM_ENERGY = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION"  # counter, mJ since boot
# dcgm's own labels of one GPU (Hostname became hostname after dcgm-exporter 4.5.3-4.8.2)
DCGM_GPU_LABELS = ("gpu", "UUID", "Hostname", "hostname")


def pod_by(s: Settings) -> str:
    """The labels one vLLM pod's series and the series of the GPUs it holds share (Settings.rule_by
    without job, instance and model_name: cluster, namespace, pod by default)."""
    return by(s, ("job", "instance", "model_name"))


def _dcgm_normalised(s: Settings, template: str) -> str:
    """``template`` (``{m}`` = a dcgm selector) per GPU, labelled with the ``namespace`` / ``pod``
    holding the GPU whichever form arrives: ``exported_namespace`` / ``exported_pod`` (a
    ServiceMonitor without honorLabels, as the GPU Operator ships it: ``namespace`` / ``pod`` are
    then the exporter's own) moved onto ``namespace`` / ``pod``, or, where no ``exported_pod`` is,
    ``namespace`` / ``pod`` as they came (honorLabels; none at all on compose). A GPU scraped in
    both forms counts once (``or`` keeps the left side's series)."""
    gby = ", ".join([pod_by(s), *DCGM_GPU_LABELS])
    exported = template.replace("{m}", '{exported_pod!=""}')
    moved = (
        f'label_replace(label_replace({exported}, "namespace", "$1", "exported_namespace", "(.+)"), '
        f'"pod", "$1", "exported_pod", "(.+)")'
    )
    as_came = template.replace("{m}", '{exported_pod=""}')
    return f"max by ({gby}) (\n  {moved}\n)\nor\nmax by ({gby}) ({as_came})"


def gpu_rules(s: Settings) -> list[dict[str, str]]:
    """dcgm-exporter's series per GPU under the holder's ``namespace`` / ``pod`` (either label
    form), then, per vLLM pod (joined on Settings.rule_by's cluster, namespace, pod): its GPUs, their
    power, tokens per joule, GPU-seconds per thousand tokens and idle allocated GPUs / GPU-hours.
    Reads vLLM only through the instance rules above (the catalog's names, folded). None when
    rule_by lacks namespace or pod: vLLM's recorded series then carry nothing to join a GPU to."""
    if not {"namespace", "pod"} <= set(s.rule_by):
        return []
    w, pby = s.rate_window, pod_by(s)
    vllm_pod = "instance:vllm_requests_running:sum"  # any series of a vLLM pod: `and on` keeps its GPUs
    rules = [
        {"record": f"gpu:dcgm_{short}", "expr": _dcgm_normalised(s, metric + "{m}")}
        for short, metric in DCGM_GAUGES.items()
    ]
    rules += [
        {
            # mJ since boot → J per second = watts, averaged over the window (the gauge is one sample)
            "record": f"gpu:dcgm_energy_joules:rate{w}",
            "expr": _dcgm_normalised(s, f"rate({DCGM_ENERGY}{{m}}[{w}]) / 1000"),
        },
        {
            "record": "pod:dcgm_gpus:count",
            "expr": f"count by ({pby}) (gpu:dcgm_power_usage:watts)\nand on ({pby})\n{vllm_pod}",
        },
        {
            "record": "pod:dcgm_power:watts",
            "expr": (
                f"(\n  sum by ({pby}) (gpu:dcgm_energy_joules:rate{w})\n  or\n"
                f"  sum by ({pby}) (gpu:dcgm_power_usage:watts)\n)\nand on ({pby})\n{vllm_pod}"
            ),
        },
        {
            "record": f"pod:vllm_tokens:rate{w}",
            "expr": (
                f"sum by ({pby}) (instance:vllm_prompt_tokens:rate{w})\n+\n"
                f"sum by ({pby}) (instance:vllm_generation_tokens:rate{w})"
            ),
        },
        {
            # tokens/s ÷ J/s: 3000 tokens/s on 300 W = 10 tokens per joule
            "record": f"pod:vllm_tokens_per_joule:ratio_rate{w}",
            "expr": f"pod:vllm_tokens:rate{w}\n/ on ({pby})\n(pod:dcgm_power:watts > 0)",
        },
        {
            # GPU-seconds per second = GPUs held; per 1000 tokens
            "record": f"pod:vllm_gpu_seconds_per_1k_tokens:ratio_rate{w}",
            "expr": f"1000 * pod:dcgm_gpus:count\n/ on ({pby})\n(pod:vllm_tokens:rate{w} > 0)",
        },
        {
            # 0 (not absent) while busy, so the window's average counts busy time as 0
            "record": "pod:dcgm_gpus_idle:count",
            "expr": (
                f"count by ({pby}) (\n  gpu:dcgm_gpu_util:percent <= {_num(s.gpu_idle_util_pct)}\n"
                f"  and on ({pby})\n  (sum by ({pby}) ({vllm_pod}) == 0)\n)\n"
                "or\n0 * pod:dcgm_gpus:count"
            ),
        },
        {
            # idle GPUs averaged over the last hour × 1 hour = idle GPU-hours of that hour (of the
            # samples present: a pod younger than an hour is counted over its life)
            "record": "pod:dcgm_idle_gpu_hours:sum1h",
            "expr": "avg_over_time(pod:dcgm_gpus_idle:count[1h])",
        },
    ]
    return rules
