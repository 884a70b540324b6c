"""Grafana dashboards for vLLM, written with grafanalib (the only module that imports it).

Six dashboards, committed as JSON in ``dashboards/`` (``observe generate dashboards``), with their
own uids (``observe-vllm-…``) and tag (``observe``) so that they live beside vLLM's own generated
boards (uids ``vllm-overview``, ``vllm-kv-cache``, ``vllm-instances``, tag ``vllm``):

- ``observe-vllm-overview``: throughput, TTFT / ITL / E2E quantiles and heatmaps, SLO attainment,
  running / waiting, KV usage, preemptions, prefix-cache hits, errors;
- ``observe-vllm-tuning``: tokens per engine step against ``--max-num-batched-tokens``, TPOT,
  time per request phase (queue, prefill, decode, inference), finish reasons, request sizes;
- ``observe-vllm-kv-cache``: measured capacity and maximum concurrency, usage, preemptions, waiting
  by reason, the sidecar's findings and recommendations;
- ``observe-vllm-instances``: ``vllm:cache_config_info``, a per-instance and a per-model table,
  LoRA adapters and HTTP endpoints: see ``observe.dashboards.breakdown``;
- ``observe-vllm-gpu`` and ``observe-vllm-spec-kv-transfer``: see ``observe.dashboards.gpu``.

Queries read vLLM's own metrics (names from ``observe.names``, every exposed alias of a metric
joined with ``or``, so a panel works on every vLLM version) with ``rate(…[$__rate_interval])``;
only the SLO-attainment panel needs observe's recording rules, and says so. Ratios divide by
``(denominator > 0)``: an idle server shows no value rather than NaN. Every panel uses the
``$datasource`` variable (no hard-coded datasource uid) and is filtered by ``$namespace``, ``$job``,
``$instance``, ``$model_name`` and ``$engine``. Descriptions say what to do when a panel looks bad.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import grafanalib.core as g
from grafanalib._gen import DashboardEncoder

from observe import dashjson, names
from observe.errors import ConfigError

__all__ = ["DASHBOARDS", "build", "render", "write_dashboards", "panel_queries"]

DS: dict[str, str] = {"type": "prometheus", "uid": "${datasource}"}
# $namespace's "All" is ".*", which also matches series without the label (compose, plain Prometheus)
NS = 'namespace=~"$namespace", '
SEL = NS + 'job=~"$job", instance=~"$instance", model_name=~"$model_name", engine=~"$engine"'
SEL_NO_MODEL = NS + 'job=~"$job", instance=~"$instance"'
SEL_RULES = NS + 'job=~"$job", instance=~"$instance", model_name=~"$model_name"'  # recording rules: no engine
RI = "$__rate_interval"
BY = "job, instance, model_name"
RUNBOOKS = "docs/runbooks.md"
GRID_W = 24


def _t(
    expr: str, legend: str = "", ref: str = "A", instant: bool = False, fmt: str = "time_series"
) -> g.Target:
    return g.Target(expr=expr, legendFormat=legend, refId=ref, instant=instant, format=fmt, datasource=DS)


def _aliases(canonical: str, template: str) -> str:
    """``template`` (``{m}`` = the metric name) for every name vLLM exposed it under, joined by ``or``."""
    return " or ".join(template.replace("{m}", m) for m in names.exposed_names(canonical))


def _agg(op: str, by: str) -> str:
    return f"{op} by ({by}) " if by else f"{op} "


def _rate(canonical: str, by: str = "", extra: str = "") -> str:
    """Per-second rate of a counter, summed ``by`` (over every alias)."""
    sel = SEL + (", " + extra if extra else "")
    return _aliases(canonical, f"{_agg('sum', by)}(rate({{m}}{{{sel}}}[{RI}]))")


def _gauge(canonical: str, op: str, by: str = "") -> str:
    return _aliases(canonical, f"{_agg(op, by)}({{m}}{{{SEL}}})")


def _ratio(num: str, den: str) -> str:
    """num / den, with no value (not NaN) while den is 0 (an idle server)."""
    return f"({num})\n/\n(({den}) > 0)"


def _buckets(canonical: str, by: str) -> str:
    return _aliases(canonical, f"sum by ({by}) (rate({{m}}_bucket{{{SEL}}}[{RI}]))")


def _hq(q: float, canonical: str, by: str) -> str:
    return f"histogram_quantile({q}, {_buckets(canonical, by + ', le')})"


def _mean(canonical: str, by: str) -> str:
    """Mean of a histogram's observations over the rate interval: rate(sum) / rate(count)."""
    total = _aliases(canonical, f"sum by ({by}) (rate({{m}}_sum{{{SEL}}}[{RI}]))")
    count = _aliases(canonical, f"sum by ({by}) (rate({{m}}_count{{{SEL}}}[{RI}]))")
    return _ratio(total, count)


def _errors_ratio(by: str) -> str:
    return _ratio(
        _rate("vllm:request_success_total", by, 'finished_reason="error"'),
        _rate("vllm:request_success_total", by),
    )


def _http_5xx_ratio() -> str:
    """Share of /v1/* answers that were 5xx; 0 (not empty) while there are answers but no 5xx
    series yet (prometheus_client creates a status label value on its first use)."""
    v1 = f'{SEL_NO_MODEL}, handler=~"/v1/.+"'
    total = f"sum by (instance) (rate(http_requests_total{{{v1}}}[{RI}]))"
    errors = f'sum by (instance) (rate(http_requests_total{{{v1}, status="5xx"}}[{RI}]))'
    return _ratio(f"{errors} or 0 * {total}", total)


def _quantiles(canonical: str, by: str = "instance, model_name") -> list[g.Target]:
    return [
        _t(_hq(q, canonical, by), f"p{int(q * 100)} {{{{instance}}}} {{{{model_name}}}}", ref)
        for q, ref in ((0.5, "A"), (0.9, "B"), (0.99, "C"))
    ]


@dataclass
class _Layout:
    """Places panels left to right in rows of 24 grid units."""

    x: int = 0
    y: int = 0
    row_h: int = 0

    def pos(self, w: int, h: int) -> g.GridPos:
        if self.x + w > GRID_W:
            self.x, self.y, self.row_h = 0, self.y + self.row_h, 0
        p = g.GridPos(h=h, w=w, x=self.x, y=self.y)
        self.x += w
        self.row_h = max(self.row_h, h)
        return p


def _place(panels: Iterable[tuple[int, int, Any]]) -> list[Any]:
    layout = _Layout()
    out = []
    for i, (w, h, panel) in enumerate(panels, start=1):
        panel.gridPos = layout.pos(w, h)
        panel.id = i
        out.append(panel)
    return out


def _ts(title: str, desc: str, targets: list[g.Target], unit: str = "", **kw: Any) -> g.TimeSeries:
    return g.TimeSeries(
        title=title,
        description=desc,
        dataSource=DS,
        targets=targets,
        unit=unit,
        legendDisplayMode="table",
        legendCalcs=["lastNotNull", "max"],
        **kw,
    )


def _stat(
    title: str,
    desc: str,
    expr: str,
    unit: str = "none",
    thresholds: Iterable[tuple[str, float | None]] = (),
    decimals: int | None = None,
) -> g.Stat:
    steps = [
        g.Threshold(color, i, float(value) if value is not None else 0.0)
        for i, (color, value) in enumerate(thresholds)
    ]
    return g.Stat(
        title=title,
        description=desc,
        dataSource=DS,
        targets=[_t(expr)],
        format=unit,
        reduceCalc="lastNotNull",
        decimals=decimals,
        graphMode="area",
        thresholds=steps or [g.Threshold("green", 0, 0.0)],
    )


def _heatmap(title: str, desc: str, canonical: str) -> g.Heatmap:
    """A histogram's buckets over time (all selected series summed per bucket)."""
    return g.Heatmap(
        title=title,
        description=desc,
        dataSource=DS,
        dataFormat="tsbuckets",
        hideZeroBuckets=True,
        yBucketBound="upper",
        targets=[_t(_buckets(canonical, "le"), "{{le}}", fmt="heatmap")],
    )


def _bargauge(
    title: str,
    desc: str,
    target: g.Target,
    unit: str,
    vmin: float | None,
    vmax: float | None,
    thresholds: list[tuple[str, float]],
) -> g.BarGauge:
    """A BarGauge whose unit, range and reduction are also in ``fieldConfig``/``reduceOptions``
    (grafanalib writes only the legacy ``fieldOptions`` that Grafana has to migrate)."""
    steps = [g.Threshold(color, i, float(v)) for i, (color, v) in enumerate(thresholds)]
    defaults: dict[str, Any] = {"unit": unit}
    if vmin is not None:
        defaults["min"] = vmin
    if vmax is not None:
        defaults["max"] = vmax
    return g.BarGauge(
        title=title,
        description=desc,
        dataSource=DS,
        targets=[target],
        format=unit,
        min=vmin,
        max=vmax,
        calc="lastNotNull",
        displayMode="gradient",
        thresholds=steps,
        extraJson={
            "fieldConfig": {"defaults": defaults},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"], "fields": "", "values": False}},
        },
    )


UID_PREFIX = "observe-vllm-"
TAG = "observe"


def _label_var(name: str, label: str, query: str) -> g.Template:
    """A dashboard variable over a label's values: multi-select, "All" matching anything (also series
    without the label), refreshed when the time range changes."""
    return g.Template(
        name=name,
        label=label,
        dataSource=DS,
        query=query,
        includeAll=True,
        multi=True,
        allValue=".*",
        refresh=2,
    )


def _variables(extra: tuple[g.Template, ...] = ()) -> g.Templating:
    base = "vllm:num_requests_running"
    return g.Templating(
        list=[
            g.Template(
                name="datasource", label="Data source", query="prometheus", type="datasource", default=None
            ),
            _label_var("namespace", "namespace", f"label_values({base}, namespace)"),
            _label_var("job", "job", f'label_values({base}{{namespace=~"$namespace"}}, job)'),
            _label_var(
                "instance",
                "instance",
                f'label_values({base}{{namespace=~"$namespace", job=~"$job"}}, instance)',
            ),
            _label_var("model_name", "model", f"label_values({base}{{{SEL_NO_MODEL}}}, model_name)"),
            _label_var("engine", "engine", f"label_values({base}{{{SEL_NO_MODEL}}}, engine)"),
            *extra,
        ]
    )


def _dashboard(
    name: str, title: str, description: str, panels: list[Any], extra_vars: tuple[g.Template, ...] = ()
) -> g.Dashboard:
    return g.Dashboard(
        title=title,
        uid=UID_PREFIX + name,
        description=description,
        tags=[TAG],
        timezone="browser",
        refresh="30s",
        schemaVersion=39,
        editable=True,
        panels=panels,
        templating=_variables(extra_vars),
        time=g.Time("now-3h", "now"),
        links=[
            g.DashboardLink(
                title="observe dashboards",
                type="dashboards",
                tags=[TAG],
                asDropdown=True,
                includeVars=True,
                keepTime=True,
            ),
            g.DashboardLink(
                title="vLLM's own dashboards",
                type="dashboards",
                tags=["vllm"],
                asDropdown=True,
                includeVars=True,
                keepTime=True,
            ),
        ],
    ).auto_panel_ids()


# ---------------------------------------------------------------- Overview


def overview() -> g.Dashboard:
    panels = [
        (
            4,
            4,
            _stat(
                "Requests / s",
                "Finished requests per second. A drop to 0 while clients send traffic means "
                "vLLM is down or stuck: check the VLLMDown alert and the engine log.",
                _rate("vllm:request_success_total"),
                "reqps",
                decimals=2,
            ),
        ),
        (
            4,
            4,
            _stat(
                "Running",
                "Requests in the running batch. Sitting at --max-num-seqs means the batch is "
                "full: raise --max-num-seqs only if KV usage has headroom.",
                _gauge("vllm:num_requests_running", "sum"),
            ),
        ),
        (
            4,
            4,
            _stat(
                "Waiting",
                "Requests queued. A queue that does not drain means the server is over "
                "capacity: add replicas or lower load.",
                _gauge("vllm:num_requests_waiting", "sum"),
                thresholds=[("green", None), ("orange", 1), ("red", 50)],
            ),
        ),
        (
            4,
            4,
            _stat(
                "KV cache usage",
                "Highest KV-cache usage across instances. Near 100% with waiting requests or "
                "preemptions: lower --max-num-seqs or raise --gpu-memory-utilization (see the KV cache dashboard).",
                _gauge("vllm:kv_cache_usage_perc", "max"),
                "percentunit",
                decimals=1,
                thresholds=[("green", None), ("orange", 0.9), ("red", 0.98)],
            ),
        ),
        (
            4,
            4,
            _stat(
                "Preemptions / s",
                "Requests evicted from the KV cache and recomputed. Anything sustained above "
                "0 wastes compute: lower --max-num-seqs or --max-num-batched-tokens.",
                _rate("vllm:num_preemptions_total"),
                "none",
                decimals=2,
                thresholds=[("green", None), ("orange", 0.01), ("red", 0.1)],
            ),
        ),
        (
            4,
            4,
            _stat(
                "Error ratio",
                "Share of requests finished with an error. Above a few percent: read the engine "
                "log (observe diagnose) for OOMs and crashes.",
                f"max({_errors_ratio(BY)})",
                "percentunit",
                decimals=2,
                thresholds=[("green", None), ("orange", 0.01), ("red", 0.05)],
            ),
        ),
        (
            12,
            8,
            _ts(
                "Request throughput by finished reason",
                "Finished requests per second by finished_reason. Many 'length' means max_tokens cuts answers; "
                "'abort' means clients gave up (often from long queues); 'error' needs the engine log.",
                [
                    _t(
                        _rate("vllm:request_success_total", "instance, finished_reason"),
                        "{{instance}} {{finished_reason}}",
                    )
                ],
                "reqps",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Token throughput",
                "Prompt (prefill) and generation tokens per second. Generation flat while requests queue: the "
                "engine is saturated; compare with the running batch.",
                [
                    _t(
                        _rate("vllm:prompt_tokens_total", "instance"),
                        "prompt {{instance}}",
                    ),
                    _t(
                        _rate("vllm:generation_tokens_total", "instance"),
                        "generation {{instance}}",
                        "B",
                    ),
                ],
                "short",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Time to first token (p50 / p90 / p99)",
                "TTFT quantiles from vLLM's histogram. Rising with the queue: capacity; rising alone: long prompts "
                "(enable chunked prefill, lower --max-num-batched-tokens).",
                _quantiles("vllm:time_to_first_token_seconds"),
                "s",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Inter-token latency (p50 / p90 / p99)",
                "Time between streamed tokens (vllm:inter_token_latency_seconds, or time_per_output_token before "
                "v0.11). Grows with the decode batch: lower --max-num-seqs for snappier streams.",
                _quantiles("vllm:inter_token_latency_seconds"),
                "s",
            ),
        ),
        (
            8,
            8,
            _ts(
                "End-to-end latency (p50 / p90 / p99)",
                "Whole-request latency. Compare with queue time below: if most of it is queueing, add capacity.",
                _quantiles("vllm:e2e_request_latency_seconds"),
                "s",
            ),
        ),
        (
            8,
            8,
            _ts(
                "SLO attainment (1h; needs observe's recording rules)",
                "Share of requests (TTFT) and tokens (ITL) within the SLO thresholds set in observe's alert "
                "Settings, over the last hour. Empty: load observe's recording rules (alerts/*.yml or the "
                "PrometheusRule); the thresholds live there. Below target: the SLO burn alerts fire; see "
                "docs/runbooks.md.",
                [
                    _t(f"1 - instance:vllm_ttft_slo_errors:ratio_rate1h{{{SEL_RULES}}}", "TTFT {{instance}}"),
                    _t(
                        f"1 - instance:vllm_itl_slo_errors:ratio_rate1h{{{SEL_RULES}}}",
                        "ITL {{instance}}",
                        "B",
                    ),
                ],
                "percentunit",
                valueMax=1,
            ),
        ),
        (
            8,
            8,
            _ts(
                "Running and waiting requests",
                "The batch (running) and the queue (waiting). Waiting above zero for long: over capacity or a KV "
                "cache too small for the batch — see the KV cache dashboard.",
                [
                    _t(
                        _gauge("vllm:num_requests_running", "sum", "instance"),
                        "running {{instance}}",
                    ),
                    _t(
                        _gauge("vllm:num_requests_waiting", "sum", "instance"),
                        "waiting {{instance}}",
                        "B",
                    ),
                ],
                "short",
            ),
        ),
        (
            8,
            8,
            _ts(
                "KV cache usage",
                "Fraction of KV-cache blocks in use (vllm:kv_cache_usage_perc, gpu_cache_usage_perc before "
                "v0.10). Pinned near 100% with preemptions: lower --max-num-seqs or give the cache more memory.",
                [
                    _t(
                        _gauge("vllm:kv_cache_usage_perc", "max", "instance, model_name"),
                        "{{instance}} {{model_name}}",
                    )
                ],
                "percentunit",
                valueMin=0,
                valueMax=1,
            ),
        ),
        (
            8,
            8,
            _ts(
                "Preemptions / s",
                "Requests preempted per second. Sustained preemptions mean the KV cache cannot hold the batch: "
                "lower --max-num-seqs or --max-num-batched-tokens.",
                [_t(_rate("vllm:num_preemptions_total", "instance"), "{{instance}}")],
                "short",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Prefix-cache hit ratio",
                "Share of prompt tokens served from the prefix cache. Low with shared system prompts: check "
                "--enable-prefix-caching; it can drop under KV pressure as cached blocks are evicted.",
                [
                    _t(
                        _ratio(
                            _rate("vllm:prefix_cache_hits_total", "instance"),
                            _rate("vllm:prefix_cache_queries_total", "instance"),
                        ),
                        "{{instance}}",
                    )
                ],
                "percentunit",
                valueMin=0,
                valueMax=1,
            ),
        ),
        (
            8,
            8,
            _ts(
                "Errors",
                "Requests finished with an error and HTTP 5xx answers on /v1/*, as a share of all. Any sustained "
                "value: read the engine log; VLLMRequestErrors alerts above 5%.",
                [
                    _t(
                        _errors_ratio("instance"),
                        "finished_reason=error {{instance}}",
                    ),
                    _t(_http_5xx_ratio(), "HTTP 5xx {{instance}}", "B"),
                ],
                "percentunit",
            ),
        ),
        (
            8,
            8,
            _ts(
                "Queue time (p50 / p99)",
                "Time requests spent waiting before running. If it dominates end-to-end latency, add capacity.",
                [
                    _t(
                        _hq(q, "vllm:request_queue_time_seconds", "instance"),
                        f"p{int(q * 100)} {{{{instance}}}}",
                        ref,
                    )
                    for q, ref in ((0.5, "A"), (0.99, "B"))
                ],
                "s",
            ),
        ),
        (
            8,
            8,
            _heatmap(
                "Time to first token distribution",
                "TTFT histogram over time (requests per bucket). A second band at high latency is "
                "queueing or preempted requests: see the KV cache dashboard.",
                "vllm:time_to_first_token_seconds",
            ),
        ),
        (
            8,
            8,
            _heatmap(
                "Inter-token latency distribution",
                "Gaps between streamed tokens per bucket over time (vllm:inter_token_latency_seconds, or "
                "time_per_output_token before v0.11). A band moving up with the batch: decode steps slow "
                "down as the batch grows (lower --max-num-seqs); scattered high cells: long prefills "
                "stall decodes (lower --max-num-batched-tokens for smoother streams).",
                "vllm:inter_token_latency_seconds",
            ),
        ),
        (
            8,
            8,
            _heatmap(
                "End-to-end latency distribution",
                "Whole-request latency per bucket over time. Two bands: short and long answers (see "
                "request sizes on the tuning board); the whole distribution moving up with the queue: "
                "add capacity.",
                "vllm:e2e_request_latency_seconds",
            ),
        ),
    ]
    return _dashboard(
        "overview",
        "vLLM / Overview (observe)",
        "Throughput, latency, SLOs, batch and KV cache of vLLM servers (observe).",
        _place(panels),
    )


# ---------------------------------------------------------------- Tuning

# vLLM does not export --max-num-batched-tokens: the board asks for it, to draw the step budget.
BUDGET = g.Template(
    name="max_num_batched_tokens",
    label="--max-num-batched-tokens",
    type="textbox",
    query="8192",
    default="8192",
)


def tuning() -> g.Dashboard:
    steps = "vllm:iteration_tokens_total"
    panels = [
        (
            6,
            5,
            _stat(
                "Tokens per engine step (mean)",
                "Prompt + generation tokens scheduled per engine step. Far below "
                "--max-num-batched-tokens while requests wait: the batch is bound by --max-num-seqs or the KV "
                "cache, not the token budget.",
                _mean(steps, ""),
                "short",
                decimals=0,
            ),
        ),
        (
            6,
            5,
            _stat(
                "Mean TPOT",
                "Mean time per output token over requests (decode speed one user sees). High with a large "
                "running batch: lower --max-num-seqs for faster streams, or add replicas.",
                _mean("vllm:request_time_per_output_token_seconds", ""),
                "s",
                decimals=3,
            ),
        ),
        (
            6,
            5,
            _stat(
                "Mean queue time",
                "Mean time requests waited before being scheduled. Any sustained queue time: the server "
                "is over capacity; add replicas or shrink requests.",
                _mean("vllm:request_queue_time_seconds", ""),
                "s",
                decimals=2,
                thresholds=[("green", None), ("orange", 0.5), ("red", 5)],
            ),
        ),
        (
            6,
            5,
            _stat(
                "Share of requests cut by max_tokens",
                "Finished requests with finished_reason=length. High: clients' max_tokens (or "
                "--max-model-len) cut answers short; raise them if the answers are needed.",
                _ratio(
                    _rate("vllm:request_success_total", "", 'finished_reason="length"'),
                    _rate("vllm:request_success_total"),
                ),
                "percentunit",
                decimals=1,
                thresholds=[("green", None), ("orange", 0.1), ("red", 0.3)],
            ),
        ),
        (
            12,
            8,
            _ts(
                "Tokens per engine step vs --max-num-batched-tokens",
                "Quantiles of tokens per engine step (vllm:iteration_tokens_total) against the step budget "
                "(set the variable to your --max-num-batched-tokens). p99 at the budget: long prefills are "
                "chunked and fill steps (raise the budget for throughput, lower it for smoother ITL); p99 far "
                "below it: the budget is not the limit.",
                [
                    _t(_hq(0.5, steps, "instance"), "p50 {{instance}}"),
                    _t(_hq(0.99, steps, "instance"), "p99 {{instance}}", "B"),
                    _t(_mean(steps, "instance"), "mean {{instance}}", "C"),
                    _t("vector($max_num_batched_tokens)", "--max-num-batched-tokens", "D"),
                ],
                "short",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Time per output token per request (p50 / p90 / p99)",
                "TPOT: each request's mean time per output token (vllm:request_time_per_output_token_seconds, "
                "vLLM from ≈0.11; older versions: the inter-token latency panel on the overview). Grows with "
                "the decode batch: lower --max-num-seqs for faster streams.",
                _quantiles("vllm:request_time_per_output_token_seconds"),
                "s",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Time per request phase (mean)",
                "Where a request's time goes: queued, prefill, decode, and inference (prefill + decode). "
                "Queue dominating: add capacity; prefill dominating: long prompts (chunked prefill, prefix "
                "caching); decode dominating: long outputs or a large decode batch.",
                [
                    _t(_mean("vllm:request_queue_time_seconds", "instance"), "queue {{instance}}"),
                    _t(_mean("vllm:request_prefill_time_seconds", "instance"), "prefill {{instance}}", "B"),
                    _t(_mean("vllm:request_decode_time_seconds", "instance"), "decode {{instance}}", "C"),
                    _t(
                        _mean("vllm:request_inference_time_seconds", "instance"),
                        "inference {{instance}}",
                        "D",
                    ),
                ],
                "s",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Finish reasons (share of finished requests)",
                "Why requests ended (vllm:request_success_total by finished_reason): stop = the model "
                "finished; length = max_tokens or --max-model-len cut it; abort = the client left (often "
                "after long queues); error: read the engine log.",
                [
                    _t(
                        f"({_rate('vllm:request_success_total', 'finished_reason')})\n/ on () group_left ()\n"
                        f"(({_rate('vllm:request_success_total')}) > 0)",
                        "{{finished_reason}}",
                    )
                ],
                "percentunit",
                valueMin=0,
                valueMax=1,
            ),
        ),
        (
            12,
            8,
            _ts(
                "Request sizes (p50 / p99 tokens)",
                "Prompt and generated tokens per request. p99 prompt + output far below --max-model-len: "
                "lower it to give the KV cache more concurrent requests; near it: requests are cut.",
                [
                    _t(_hq(0.5, "vllm:request_prompt_tokens", "instance"), "prompt p50 {{instance}}"),
                    _t(_hq(0.99, "vllm:request_prompt_tokens", "instance"), "prompt p99 {{instance}}", "B"),
                    _t(
                        _hq(0.5, "vllm:request_generation_tokens", "instance"), "output p50 {{instance}}", "C"
                    ),
                    _t(
                        _hq(0.99, "vllm:request_generation_tokens", "instance"),
                        "output p99 {{instance}}",
                        "D",
                    ),
                ],
                "short",
            ),
        ),
        (
            12,
            8,
            _heatmap(
                "Tokens per engine step distribution",
                "Engine steps per token-count bucket over time. A band at the top bucket below the "
                "budget: steps are full; two bands: prefill-heavy and decode-only steps alternate "
                "(chunked prefill mixes them).",
                steps,
            ),
        ),
    ]
    return _dashboard(
        "tuning",
        "vLLM / Tuning (observe)",
        "What to change in vLLM's flags: step budget, TPOT, where request time goes, finish reasons.",
        _place(panels),
        (BUDGET,),
    )


# ---------------------------------------------------------------- KV cache & capacity


def kv_cache() -> g.Dashboard:
    panels = [
        (
            6,
            5,
            _stat(
                "KV capacity (tokens)",
                "Tokens the KV cache holds, read by the observe sidecar from vLLM's "
                "startup log. Too small for your contexts × concurrency: raise --gpu-memory-utilization, use "
                "--kv-cache-dtype fp8, or shard with --tensor-parallel-size (observe capacity sizes it).",
                f"max(observe_vllm_kv_cache_tokens{{{SEL_NO_MODEL}}})",
                "short",
            ),
        ),
        (
            6,
            5,
            _stat(
                "Maximum concurrency",
                "How many max_model_len requests fit in the KV cache at once (startup "
                "log). Below --max-num-seqs, long requests will queue or preempt: lower --max-num-seqs or "
                "--max-model-len.",
                f"min(observe_vllm_max_concurrency{{{SEL_NO_MODEL}}})",
                "short",
                decimals=1,
            ),
        ),
        (
            6,
            5,
            _stat(
                "KV cache usage (max)",
                "Highest current KV usage. Above the alert threshold for long: "
                "VLLMKVCacheSaturated; see docs/runbooks.md.",
                _gauge("vllm:kv_cache_usage_perc", "max"),
                "percentunit",
                decimals=1,
                thresholds=[("green", None), ("orange", 0.9), ("red", 0.98)],
            ),
        ),
        (
            6,
            5,
            _stat(
                "Open findings",
                "Findings the sidecar currently reports (same detectors as observe "
                "diagnose). See the table below and /api/diagnosis on the sidecar.",
                f"count(observe_finding{{{SEL_NO_MODEL}}} > 0) or vector(0)",
                "none",
                thresholds=[("green", None), ("orange", 1)],
            ),
        ),
        (
            12,
            8,
            _ts(
                "KV cache usage",
                "KV usage per instance. Sawtooth up to ~100% with preemptions means the batch "
                "does not fit: lower --max-num-seqs.",
                [
                    _t(
                        _gauge("vllm:kv_cache_usage_perc", "max", "instance, model_name"),
                        "{{instance}} {{model_name}}",
                    )
                ],
                "percentunit",
                valueMin=0,
                valueMax=1,
            ),
        ),
        (
            12,
            8,
            _ts(
                "KV tokens in use",
                "Usage × capacity (capacity from the sidecar). Compare with your typical "
                "context length × running requests.",
                [
                    _t(
                        f"({_gauge('vllm:kv_cache_usage_perc', 'max', 'instance')}) * on (instance) group_left "
                        f"max by (instance) (observe_vllm_kv_cache_tokens{{{SEL_NO_MODEL}}})",
                        "{{instance}}",
                    )
                ],
                "short",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Preemptions / s",
                "Requests evicted for lack of KV blocks. Sustained: lower --max-num-seqs or "
                "--max-num-batched-tokens, or give the cache more memory.",
                [_t(_rate("vllm:num_preemptions_total", "instance"), "{{instance}}")],
                "short",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Waiting requests by reason",
                "capacity = waiting for KV/batch room (scale or shrink the batch); "
                "deferred = LoRA budget or KV transfer. vLLM before 2026-04 has only the total.",
                [
                    _t(
                        f"sum by (instance, reason) (vllm:num_requests_waiting_by_reason{{{SEL}}})",
                        "{{instance}} {{reason}}",
                    ),
                    _t(_gauge("vllm:num_requests_waiting", "sum", "instance"), "{{instance}} total", "B"),
                ],
                "short",
            ),
        ),
        (
            8,
            8,
            _bargauge(
                "KV usage per instance",
                "Current KV usage of each instance; the fullest ones are the "
                "first to preempt. Balance load or resize them.",
                _t(
                    _gauge("vllm:kv_cache_usage_perc", "max", "instance, model_name"),
                    "{{instance}}",
                    instant=True,
                ),
                "percentunit",
                0,
                1,
                [("green", 0.0), ("orange", 0.9), ("red", 0.98)],
            ),
        ),
        (
            8,
            8,
            g.Table(
                title="Findings (sidecar)",
                description="What observe's detectors see now, with severity. "
                "Open /api/diagnosis on the sidecar for the evidence; the runbooks say what to change.",
                dataSource=DS,
                targets=[
                    _t(
                        f"max by (instance, id, severity) (observe_finding{{{SEL_NO_MODEL}}})",
                        instant=True,
                        fmt="table",
                    )
                ],
                transformations=[
                    {"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}
                ],
            ),
        ),
        (
            8,
            8,
            g.Table(
                title="Recommendations (sidecar)",
                description="Flag changes observe recommends for each "
                "instance. Apply the suggested value at the next vLLM restart and watch the finding clear.",
                dataSource=DS,
                targets=[
                    _t(
                        f"max by (instance, flag, current, suggested) "
                        f"(observe_recommendation_info{{{SEL_NO_MODEL}}})",
                        instant=True,
                        fmt="table",
                    )
                ],
                transformations=[
                    {"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}
                ],
            ),
        ),
    ]
    return _dashboard(
        "kv-cache",
        "vLLM / KV cache & capacity (observe)",
        "KV-cache capacity, usage and pressure, with observe's findings and recommendations.",
        _place(panels),
    )


# ---------------------------------------------------------------- rendering

from observe.dashboards.breakdown import instances  # noqa: E402  (uses the helpers above)
from observe.dashboards.gpu import gpu, spec_kv_transfer  # noqa: E402

DASHBOARDS = {
    "observe-vllm-overview.json": overview,
    "observe-vllm-tuning.json": tuning,
    "observe-vllm-kv-cache.json": kv_cache,
    "observe-vllm-instances.json": instances,
    "observe-vllm-gpu.json": gpu,
    "observe-vllm-spec-kv-transfer.json": spec_kv_transfer,
}


def build() -> dict[str, dict[str, Any]]:
    """File name → dashboard JSON model (plain dicts)."""
    return {name: json.loads(render_one(fn())) for name, fn in DASHBOARDS.items()}


def _fix_base_thresholds(node: Any) -> Any:
    """grafanalib writes the base threshold step's value as the string "null"; Grafana's own
    dashboards use JSON null there."""
    if isinstance(node, dict):
        for key in ("steps", "thresholds"):
            steps = node.get(key)
            if (
                isinstance(steps, list)
                and steps
                and isinstance(steps[0], dict)
                and steps[0].get("value") == "null"
            ):
                steps[0]["value"] = None
        for v in node.values():
            _fix_base_thresholds(v)
    elif isinstance(node, list):
        for v in node:
            _fix_base_thresholds(v)
    return node


def render_one(dashboard: g.Dashboard) -> str:
    model = json.loads(json.dumps(dashboard.to_json_data(), cls=DashboardEncoder))
    return json.dumps(dashjson.clean(_fix_base_thresholds(model)), sort_keys=True, indent=2) + "\n"


def render() -> dict[str, str]:
    """File name → JSON text, as committed in ``dashboards/``."""
    return {name: render_one(fn()) for name, fn in DASHBOARDS.items()}


def write_dashboards(out_dir: Path) -> list[Path]:
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, text in render().items():
            path = out_dir / name
            path.write_text(text, encoding="utf-8")
            paths.append(path)
        return paths
    except OSError as e:
        raise ConfigError(f"cannot write dashboards to {out_dir}: {e.strerror or e}") from e


def panel_queries(model: dict[str, Any]) -> list[tuple[str, str]]:
    """(panel title, PromQL expr) for every target of a dashboard JSON model, variables included."""
    out = []
    for panel in model.get("panels", []):
        for target in panel.get("targets", []):
            if target.get("expr"):
                out.append((panel.get("title", ""), target["expr"]))
    for var in model.get("templating", {}).get("list", []):
        q = var.get("query")
        if var.get("type") == "query" and isinstance(q, str):
            out.append((f"variable {var['name']}", q))
    return out
