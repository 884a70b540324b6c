"""Prometheus recording rules for vLLM (``level:metric:operations``), generated from one Settings
object, and the label and selector helpers the alerting rules (``observe.alerts``) share with them.

They first fold vLLM's renamed metrics into one series per canonical metric (`promql.fold`:
``vllm:kv_cache_usage_perc or vllm:gpu_cache_usage_perc``), so alerts and dashboards work on every
vLLM version; the SLO rules record error ratios per window and aggregation level for the
multi-window, multi-burn-rate alerts.
"""

from __future__ import annotations

from typing import Any

from observe import promql
from observe.settings import Settings

__all__ = [
    "recording_rules",
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
    return _up(s, s.vllm_matchers, bool(s.vllm_selector), "vllm:num_requests_running")


def sidecar_up(s: Settings) -> str:
    """``up`` of the observe sidecars, as vllm_up (their own series: observe_up)."""
    return _up(s, s.observe_matchers, bool(s.observe_selector), "observe_up")


def vllm_absent(s: Settings) -> str:
    """True while no vLLM target is scraped: no ``up`` the vllm_selector picks, else no series of
    vLLM's at all."""
    return f"absent(up{_sel(s)})" if s.vllm_selector else f"absent(vllm:num_requests_running{_sel(s)})"


def _slo_error_ratio(s: Settings, canonical: str, threshold: float, window: str, by: str) -> str:
    le = _sel(s, f'le=~"{promql_regex(le_at_most(threshold))}"')
    good = promql.fold(canonical, f"sum by ({by}) (max without (le) (rate({{m}}_bucket{le}[{window}])))")
    total = promql.fold(canonical, f"sum by ({by}) (rate({{m}}_count{_sel(s)}[{window}]))")
    return f"1 - (\n  ({good})\n/\n  ({total})\n)"


# The SLO window the dashboards plot (observe.dashboards reads ..._slo_errors:ratio_rate1h): recorded
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
            "expr": promql.fold("vllm:kv_cache_usage_perc", f"max by ({BY}) ({{m}}{v})"),
        },
        {
            "record": "instance:vllm_requests_running:sum",
            "expr": f"sum by ({BY}) (vllm:num_requests_running{v})",
        },
        {
            "record": "instance:vllm_requests_waiting:sum",
            "expr": f"sum by ({BY}) (vllm:num_requests_waiting{v})",
        },
        {
            "record": f"instance:vllm_preemptions:rate{w}",
            "expr": f"sum by ({BY}) (rate(vllm:num_preemptions_total{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_prompt_tokens:rate{w}",
            "expr": f"sum by ({BY}) (rate(vllm:prompt_tokens_total{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_generation_tokens:rate{w}",
            "expr": f"sum by ({BY}) (rate(vllm:generation_tokens_total{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_request_success:rate{w}",
            "expr": f"sum by ({BY}, finished_reason) (rate(vllm:request_success_total{v}[{w}]))",
        },
        {
            "record": f"instance:vllm_request_errors:ratio_rate{w}",
            "expr": (
                f"sum by ({BY}) (rate(vllm:request_success_total{err}[{w}]))\n/\n"
                f"sum by ({BY}) (rate(vllm:request_success_total{v}[{w}]))"
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
                + promql.fold("vllm:prefix_cache_hits_total", f"sum by ({BY}) (rate({{m}}{v}[{w}]))")
                + ")\n/\n("
                + promql.fold("vllm:prefix_cache_queries_total", f"sum by ({BY}) (rate({{m}}{v}[{w}]))")
                + ")"
            ),
        },
    ]
    for short, canonical in (
        ("ttft", "vllm:time_to_first_token_seconds"),
        ("itl", "vllm:inter_token_latency_seconds"),
        ("e2e_latency", "vllm:e2e_request_latency_seconds"),
        ("queue_time", "vllm:request_queue_time_seconds"),
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
                        "vllm:time_to_first_token_seconds",
                        f"sum by ({level_by}) (rate({{m}}_count{v}[{window}]))",
                    ),
                }
            )
        for window in slo_windows(s):
            rules.append(
                {
                    "record": f"{level}:vllm_ttft_slo_errors:ratio_rate{window}",
                    "expr": _slo_error_ratio(
                        s, "vllm:time_to_first_token_seconds", s.ttft_slo_seconds, window, level_by
                    ),
                }
            )
            rules.append(
                {
                    "record": f"{level}:vllm_itl_slo_errors:ratio_rate{window}",
                    "expr": _slo_error_ratio(
                        s, "vllm:inter_token_latency_seconds", s.itl_slo_seconds, window, level_by
                    ),
                }
            )
    return rules
