"""Grafana dashboards for vLLM, written with grafanalib (the only module that imports it).

Six dashboards, committed as JSON in ``dashboards/`` (``observe generate dashboards``), with their
own uids (``observe-vllm-…``) and tag (``observe``) so that they live beside vLLM's own generated
boards (uids ``vllm-overview``, ``vllm-kv-cache``, ``vllm-instances``, tag ``vllm``):

One module per board (``overview``, ``tuning``, ``kv_cache``, ``breakdown``, ``gpu``) over the helpers
in ``common``; this module lists them and renders the JSON.

- ``observe-vllm-overview``: throughput, TTFT / ITL / E2E quantiles and heatmaps, SLO attainment,
  running / waiting, KV usage, preemptions, prefix-cache hits, errors;
- ``observe-vllm-tuning``: tokens per engine step against ``--max-num-batched-tokens``, TPOT,
  time per request phase (queue, prefill, decode, inference), finish reasons, request sizes;
- ``observe-vllm-kv-cache``: measured capacity and maximum concurrency, usage, preemptions, waiting
  by reason, the sidecar's findings and recommendations;
- ``observe-vllm-instances``: ``vllm:cache_config_info``, a per-instance and a per-model table,
  LoRA adapters and HTTP endpoints: see ``observe.monitoring.dashboards.breakdown``;
- ``observe-vllm-gpu`` and ``observe-vllm-spec-kv-transfer``: see ``observe.monitoring.dashboards.gpu``.

Queries read vLLM's own metrics (names from ``observe.metrics.names``, every exposed alias of a metric
joined with ``or``, so a panel works on every vLLM version) with ``rate(…[$__rate_interval])``;
only the SLO-attainment panel needs observe's recording rules, and says so. Ratios divide by
``(denominator > 0)``: an idle server shows no value rather than NaN. Every panel uses the
``$datasource`` variable (no hard-coded datasource uid) and is filtered by ``$namespace``, ``$job``,
``$instance``, ``$model_name`` and ``$engine``. Descriptions say what to do when a panel looks bad.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import grafanalib.core as g
from grafanalib._gen import DashboardEncoder

from observe.monitoring import dashjson
from observe.monitoring.dashboards.breakdown import instances
from observe.monitoring.dashboards.gpu import gpu, spec_kv_transfer
from observe.monitoring.dashboards.kv_cache import kv_cache
from observe.monitoring.dashboards.overview import overview
from observe.monitoring.dashboards.tuning import BUDGET, tuning
from observe.monitoring.files import write_texts
from observe.settings import Settings

__all__ = ["BUDGET", "DASHBOARDS", "build", "render", "write_dashboards", "panel_queries"]

# file name → the board from the settings (the KV boards colour usage at kv_high_pct / kv_full_pct)
DASHBOARDS: dict[str, Callable[[Settings], g.Dashboard]] = {
    "observe-vllm-overview.json": overview,
    "observe-vllm-tuning.json": lambda s: tuning(),
    "observe-vllm-kv-cache.json": kv_cache,
    "observe-vllm-instances.json": lambda s: instances(),
    "observe-vllm-gpu.json": lambda s: gpu(),
    "observe-vllm-spec-kv-transfer.json": lambda s: spec_kv_transfer(),
}


def build(settings: Settings | None = None) -> dict[str, dict[str, Any]]:
    """File name → dashboard JSON model (plain dicts)."""
    return {name: json.loads(text) for name, text in render(settings).items()}


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


def render(settings: Settings | None = None) -> dict[str, str]:
    """File name → JSON text, as committed in ``dashboards/`` (default Settings)."""
    s = settings or Settings()
    return {name: render_one(fn(s)) for name, fn in DASHBOARDS.items()}


def write_dashboards(out_dir: Path, settings: Settings | None = None) -> list[Path]:
    return write_texts(out_dir, render(settings), "dashboards")


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
