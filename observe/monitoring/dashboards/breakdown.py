"""The instances board (``observe-vllm-instances``): per-instance status and the engine
configuration each vLLM reports, then panels that break the traffic down: one row per served model,
the LoRA adapters each instance holds, and the OpenAI server's HTTP endpoints. Part of the dashboard
builder (grafanalib stays inside ``observe.monitoring.dashboards``); helpers from the package.

- per model (``model_name``): instances, requests/s, prompt and generation tokens/s, running,
  waiting, KV-cache usage and TTFT p95, one table row each;
- LoRA: ``vllm:lora_requests_info``. vLLM (``v1/metrics/loggers.py``) sets the series of the
  current label set (``max_lora``, ``running_lora_adapters``, ``waiting_lora_adapters``: adapter
  names joined by commas) to the current time at every stats update, and never removes the old
  sets: the newest series of an instance is its state now (``topk by (…) (1, …)``). The series has
  no ``model_name`` or ``engine`` label;
- HTTP: prometheus-fastapi-instrumentator's ``http_requests_total`` (``handler``, ``method``,
  ``status`` grouped as ``2xx``/``4xx``/``5xx``) and ``http_request_duration_seconds`` (``handler``,
  ``method``; few buckets: 0.1, 0.5, 1 s and +Inf in vLLM 0.32, hence means, not quantiles).
"""

from __future__ import annotations

from typing import Any

from observe.metrics import names
from observe.monitoring.dashboards import common as d

BY_MODEL = "model_name"
HTTP_BY = "instance, handler"
_INSTANCE_KEY = "namespace, job, instance"

# column → (refId, expression, unit); one instant query each, merged on model_name
_MODEL_COLUMNS: list[tuple[str, str, str, str]] = [
    (
        "instances",
        "A",
        d.fold(
            names.NUM_REQUESTS_RUNNING,
            f"count by ({BY_MODEL}) (max by ({BY_MODEL}, {_INSTANCE_KEY}) ({{m}}{{{d.SEL}}}))",
        ),
        "none",
    ),
    ("requests/s", "B", d._rate(names.REQUEST_SUCCESS_TOTAL, BY_MODEL), "reqps"),
    ("prompt tokens/s", "C", d._rate(names.PROMPT_TOKENS_TOTAL, BY_MODEL), "short"),
    ("generation tokens/s", "D", d._rate(names.GENERATION_TOKENS_TOTAL, BY_MODEL), "short"),
    ("running", "E", d._gauge(names.NUM_REQUESTS_RUNNING, "sum", BY_MODEL), "none"),
    ("waiting", "F", d._gauge(names.NUM_REQUESTS_WAITING, "sum", BY_MODEL), "none"),
    ("KV usage (max)", "G", d._gauge(names.KV_CACHE_USAGE_PERC, "max", BY_MODEL), "percentunit"),
    ("TTFT p95", "H", d._hq(0.95, names.TIME_TO_FIRST_TOKEN_SECONDS, BY_MODEL), "s"),
]


def _unit_overrides(units: dict[str, str]) -> list[dict[str, Any]]:
    return [
        {"matcher": {"id": "byName", "options": name}, "properties": [{"id": "unit", "value": unit}]}
        for name, unit in units.items()
    ]


def model_table() -> d.g.Table:
    return d.g.Table(
        title="Models",
        description="One row per served model (model_name) across the selected instances: how many "
        "instances serve it, finished requests/s, prompt and generation tokens/s, the batch and the "
        "queue, the fullest KV cache and TTFT p95. A model with waiting requests and a full KV cache "
        "needs more replicas or a smaller batch; a model with no traffic can give its GPUs to another.",
        dataSource=d.DS,
        targets=[d._t(expr, ref=ref, instant=True, fmt="table") for _, ref, expr, _ in _MODEL_COLUMNS],
        transformations=[
            {"id": "merge", "options": {}},
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True},
                    "renameByName": {f"Value #{ref}": col for col, ref, _, _ in _MODEL_COLUMNS},
                },
            },
        ],
        overrides=_unit_overrides({col: unit for col, _, _, unit in _MODEL_COLUMNS}),
    )


def lora_table() -> d.g.Table:
    return d.g.Table(
        title=f"LoRA adapters ({names.LORA_REQUESTS_INFO})",
        description="The LoRA adapters each instance is running and has requests waiting for, with "
        "its --max-loras (max_lora), from vLLM's latest stats update. Waiting adapters while running "
        "already holds max_lora adapters: requests wait for a LoRA slot; raise --max-loras if GPU "
        "memory allows, or route each adapter to fewer instances. Empty: LoRA is not enabled.",
        dataSource=d.DS,
        targets=[
            d._t(
                f"topk by ({_INSTANCE_KEY}) (1, {names.LORA_REQUESTS_INFO}{{{d.SEL_NO_MODEL}}})",
                instant=True,
                fmt="table",
            )
        ],
        transformations=[
            {
                "id": "organize",
                "options": {
                    "excludeByName": {"Time": True, "Value": True, "__name__": True},
                    "indexByName": {
                        "instance": 0,
                        "max_lora": 1,
                        "running_lora_adapters": 2,
                        "waiting_lora_adapters": 3,
                    },
                },
            }
        ],
    )


def _http(metric: str, by: str, extra: str = "") -> str:
    """Per-second rate of an instrumentator series, summed ``by`` (no model_name / engine labels)."""
    sel = d.SEL_NO_MODEL + (", " + extra if extra else "")
    return f"sum by ({by}) (rate({metric}{{{sel}}}[{d.RI}]))"


def breakdown_panels() -> list[tuple[int, int, Any]]:
    """(width, height, panel) for the instances board, after its own panels."""
    by_status = f"{HTTP_BY}, status"
    errors = _http("http_requests_total", by_status, 'status=~"4xx|5xx"')
    answers = _http("http_requests_total", HTTP_BY)
    return [
        (24, 8, model_table()),
        (16, 7, lora_table()),
        (
            8,
            7,
            d._ts(
                "Requests deferred (LoRA slot, KV transfer)",
                "Waiting requests vLLM deferred (reason=deferred): waiting for a LoRA slot or a "
                "KV transfer, not for KV room. Sustained with LoRA on: raise --max-loras or spread "
                "adapters over instances. Empty on vLLM before 2026-04 (only the total exists).",
                [
                    d._t(
                        f"sum by (instance) ({names.NUM_REQUESTS_WAITING_BY_REASON}"
                        f'{{{d.SEL}, reason="deferred"}})',
                        "{{instance}}",
                    )
                ],
                "short",
            ),
        ),
        (
            8,
            8,
            d._ts(
                "HTTP requests by endpoint and status",
                "Answers per second of vLLM's OpenAI server by handler and status class "
                "(http_requests_total). Traffic on an endpoint you did not expect (e.g. /v1/completions "
                "instead of /v1/chat/completions) changes prompt sizes; 4xx are client errors "
                "(bad requests, too-long prompts), 5xx the server's.",
                [d._t(_http("http_requests_total", by_status), "{{handler}} {{status}} {{instance}}")],
                "reqps",
            ),
        ),
        (
            8,
            8,
            d._ts(
                "HTTP error share by endpoint (4xx / 5xx)",
                "Share of each endpoint's answers that were 4xx or 5xx (0, with no status, while "
                "an endpoint answers without errors). 4xx rising: clients send "
                "prompts over --max-model-len or bad parameters (read the API-server log); 5xx: "
                "engine errors, read the engine log (observe diagnose).",
                [
                    d._t(
                        f"({errors} or on ({HTTP_BY}) 0 * {answers})\n"
                        f"/ on ({HTTP_BY}) group_left ()\n(({answers}) > 0)",
                        "{{handler}} {{status}} {{instance}}",
                    )
                ],
                "percentunit",
                valueMin=0,
            ),
        ),
        (
            8,
            8,
            d._ts(
                "HTTP latency by endpoint (mean)",
                "Mean time vLLM's HTTP server took per request, by handler "
                "(http_request_duration_seconds; its buckets are too coarse for quantiles). Compare "
                "with the engine's end-to-end latency on the overview: a much larger HTTP time "
                "points at the API server (detokenization, a busy event loop), not the engine.",
                [
                    d._t(
                        d._ratio(
                            _http("http_request_duration_seconds_sum", HTTP_BY),
                            _http("http_request_duration_seconds_count", HTTP_BY),
                        ),
                        "{{handler}} {{instance}}",
                    )
                ],
                "s",
            ),
        ),
    ]


# ---------------------------------------------------------------- Instances & configuration

_CACHE_CONFIG_COLUMNS = [
    "instance",
    "engine",
    "block_size",
    "num_gpu_blocks",
    "kv_cache_size_tokens",
    "kv_cache_max_concurrency",
    "gpu_memory_utilization",
    "cache_dtype",
    "enable_prefix_caching",
    "num_cpu_blocks",
    "sliding_window",
]


def instances() -> d.g.Dashboard:
    summary_targets = [
        d._t(f"max by (instance) (up{{{d.SEL_NO_MODEL}}})", ref="A", instant=True, fmt="table"),
        d._t(
            d._gauge(names.KV_CACHE_USAGE_PERC, "max", "instance"),
            ref="B",
            instant=True,
            fmt="table",
        ),
        d._t(
            d._gauge(names.NUM_REQUESTS_RUNNING, "sum", "instance"),
            ref="C",
            instant=True,
            fmt="table",
        ),
        d._t(
            d._gauge(names.NUM_REQUESTS_WAITING, "sum", "instance"),
            ref="D",
            instant=True,
            fmt="table",
        ),
        d._t(
            d._rate(names.REQUEST_SUCCESS_TOTAL, "instance"),
            ref="E",
            instant=True,
            fmt="table",
        ),
        d._t(
            d._hq(0.99, names.TIME_TO_FIRST_TOKEN_SECONDS, "instance"),
            ref="F",
            instant=True,
            fmt="table",
        ),
    ]
    rename = {
        "Value #A": "up",
        "Value #B": "KV usage",
        "Value #C": "running",
        "Value #D": "waiting",
        "Value #E": "requests/s",
        "Value #F": "TTFT p99 (s)",
    }
    panels = [
        (
            24,
            8,
            d.g.Table(
                title="Instances",
                description="One row per vLLM instance: up, KV usage, batch, queue, "
                "throughput and TTFT p99. A row with up=0 is down (VLLMDown); high KV usage with waiting "
                "requests needs a smaller batch or more memory.",
                dataSource=d.DS,
                targets=summary_targets,
                transformations=[
                    {"id": "merge", "options": {}},
                    {"id": "organize", "options": {"excludeByName": {"Time": True}, "renameByName": rename}},
                ],
            ),
        ),
        (
            24,
            8,
            d.g.Table(
                title=f"Cache configuration ({names.CACHE_CONFIG_INFO})",
                description="How each engine sized its KV cache: blocks × block_size = KV tokens, "
                "gpu_memory_utilization, cache dtype, prefix caching. Fewer tokens than expected: compare "
                "with observe capacity; num_gpu_blocks='None' on old versions is a vLLM bug (#15755).",
                dataSource=d.DS,
                targets=[
                    d._t(
                        f"max by ({', '.join(_CACHE_CONFIG_COLUMNS)}) "
                        f"({names.CACHE_CONFIG_INFO}{{{d.SEL_NO_MODEL}}})",
                        instant=True,
                        fmt="table",
                    )
                ],
                transformations=[
                    {
                        "id": "organize",
                        "options": {
                            "excludeByName": {"Time": True, "Value": True},
                            "indexByName": {c: i for i, c in enumerate(_CACHE_CONFIG_COLUMNS)},
                        },
                    }
                ],
            ),
        ),
        (
            8,
            8,
            d.g.Stat(
                title="Up",
                description="Scrape status per instance (1 = up). 0: the server is down or "
                "loading; see the VLLMDown runbook.",
                dataSource=d.DS,
                targets=[d._t(f"up{{{d.SEL_NO_MODEL}}}", "{{instance}}")],
                reduceCalc="lastNotNull",
                thresholds=[d.g.Threshold("red", 0, 0.0), d.g.Threshold("green", 1, 1.0)],
            ),
        ),
        (
            8,
            8,
            d._bargauge(
                "Requests / s per instance",
                "Load per instance. Uneven load behind a balancer: check "
                "its policy; one idle instance may be unhealthy.",
                d._t(
                    d._rate(names.REQUEST_SUCCESS_TOTAL, "instance"),
                    "{{instance}}",
                    instant=True,
                ),
                "reqps",
                0,
                None,
                [("green", 0.0)],
            ),
        ),
        (
            8,
            8,
            d._ts(
                "API-server memory",
                "Resident memory of the vLLM API-server process (present with a single API "
                "server). Steady growth over days: report it with the vLLM version.",
                [d._t(f"process_resident_memory_bytes{{{d.SEL_NO_MODEL}}}", "{{instance}}")],
                "bytes",
            ),
        ),
        (
            24,
            6,
            d.g.Table(
                title="vLLM version and engine (sidecar)",
                description="Version and engine (V0/V1) read "
                "from the startup log by the observe sidecar. Mixed versions behind one balancer behave "
                "differently; the names catalog maps their metric names.",
                dataSource=d.DS,
                targets=[
                    d._t(
                        f"max by (instance, version, engine, model) (observe_vllm_info{{{d.SEL_NO_MODEL}}})",
                        instant=True,
                        fmt="table",
                    )
                ],
                transformations=[
                    {"id": "organize", "options": {"excludeByName": {"Time": True, "Value": True}}}
                ],
            ),
        ),
        *breakdown_panels(),
    ]
    return d._dashboard(
        "instances",
        "vLLM / Instances & configuration (observe)",
        "Per-instance status and the engine configuration each vLLM reports; per model, LoRA "
        "adapters and HTTP endpoints (observe.monitoring.dashboards.breakdown).",
        d._place(panels),
    )
