"""grafanalib's dashboard JSON → clean current Grafana JSON (the schemaVersion of dashboards/common.py). Pure.

grafanalib still writes Angular-era fields — dashboard ``rows``/``style``/``hideControls``/
``sharedCrosshair``, panel ``span``/``height``/``error``/``minSpan``, Graphite-era target fields
(``step``, ``intervalFactor``, ``target``, a ``query`` copy of ``expr``), threshold steps with
``op``/``line``/``yaxis``, the old heatmap's options — and many nulls. Grafana migrates them on load;
vLLM's and production-stack's boards are clean current JSON, and so are ours after `clean`:
legacy fields dropped, the old heatmap turned into the current heatmap panel's options, and no
null left but the one Grafana's schema wants (the base threshold step's ``value``).
"""

from __future__ import annotations

from typing import Any

__all__ = ["LEGACY", "clean"]

LEGACY: dict[str, frozenset[str]] = {
    "dashboard": frozenset({"rows", "style", "hideControls", "sharedCrosshair", "gnetId", "id", "__inputs"}),
    "panel": frozenset(
        {
            "cacheTimeout",
            "editable",
            "error",
            "height",
            "hideTimeOverride",
            "maxPerRow",
            "minSpan",
            "repeat",
            "repeatDirection",
            "span",
            "columns",
            "fontSize",
        }
    ),
    "target": frozenset({"step", "intervalFactor", "metric", "target", "query"}),
    "step": frozenset({"index", "line", "op", "yaxis"}),
    "variable": frozenset({"auto", "auto_count", "auto_min", "tagValuesQuery", "tagsQuery", "useTags"}),
    "timepicker": frozenset({"nowDelay", "time_options"}),
    "heatmap": frozenset(
        {
            "cards",
            "color",
            "dataFormat",
            "heatmap",
            "hideZeroBuckets",
            "highlightCards",
            "legend",
            "reverseYBuckets",
            "tooltip",
            "xAxis",
            "xBucketNumber",
            "xBucketSize",
            "yAxis",
            "yBucketBound",
            "yBucketNumber",
            "yBucketSize",
        }
    ),
}


def _heatmap_options(panel: dict[str, Any]) -> dict[str, Any]:
    """The current heatmap panel's options for grafanalib's old-heatmap fields (buckets from Prometheus)."""
    old_color = panel.get("color") or {}
    options: dict[str, Any] = {
        "calculate": False,  # the series are already buckets (format heatmap / tsbuckets)
        "cellGap": 1,
        "color": {
            "mode": "scheme",
            "scheme": "Oranges",
            "scale": "exponential" if old_color.get("colorScale") == "sqrt" else "linear",
            "exponent": old_color.get("exponent", 0.5),
            "steps": 64,
            "fill": "dark-orange",
            "reverse": False,
        },
        "yAxis": {"axisPlacement": "left", "reverse": bool(panel.get("reverseYBuckets"))},
        "rowsFrame": {"layout": "auto"},
        "tooltip": {"mode": "single", "yHistogram": False},
        "legend": {"show": bool((panel.get("legend") or {}).get("show"))},
        "showValue": "never",
    }
    if panel.get("hideZeroBuckets"):
        options["filterValues"] = {"le": 1e-9}
    return options


def _prune(node: Any, keep_null: bool = False) -> Any:
    """Drop None values (and legacy keys of known shapes) recursively."""
    if isinstance(node, list):
        return [_prune(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for k, v in node.items():
        if v is None and not (keep_null and k == "value"):
            continue
        if k == "steps" and isinstance(v, list):
            out[k] = [
                {sk: sv for sk, sv in _prune(step, keep_null=(i == 0)).items() if sk not in LEGACY["step"]}
                for i, step in enumerate(v)
            ]
        else:
            out[k] = _prune(v)
    return out


def _panel(panel: dict[str, Any]) -> dict[str, Any]:
    p = {k: v for k, v in panel.items() if k not in LEGACY["panel"]}
    if p.get("type") == "heatmap":
        p = {k: v for k, v in p.items() if k not in LEGACY["heatmap"]}
        p["options"] = _heatmap_options(panel)
    if not p.get("mappings"):
        p.pop("mappings", None)  # panel-level mappings: legacy; fieldConfig.defaults holds them now
    targets = []
    for t in p.get("targets", []):
        t = {k: v for k, v in t.items() if k not in LEGACY["target"] or (k == "query" and v != t.get("expr"))}
        targets.append(t)
    if "targets" in p:
        p["targets"] = targets
    if "panels" in p:
        p["panels"] = [_panel(c) for c in p["panels"]]
    return p


def clean(model: dict[str, Any]) -> dict[str, Any]:
    """A grafanalib dashboard model (plain dicts) as clean current Grafana JSON."""
    d = {k: v for k, v in model.items() if k not in LEGACY["dashboard"]}
    d["panels"] = [_panel(p) for p in d.get("panels", [])]
    templating = d.get("templating") or {}
    if "list" in templating:
        templating["list"] = [
            {k: v for k, v in var.items() if k not in LEGACY["variable"]} for var in templating["list"]
        ]
    if isinstance(d.get("timepicker"), dict):
        d["timepicker"] = {k: v for k, v in d["timepicker"].items() if k not in LEGACY["timepicker"]}
    return _prune(d)
