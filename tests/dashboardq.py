"""The committed Grafana dashboards and their queries as Prometheus sees them (shared by the dashboard
tests and the real-Prometheus end-to-end test)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from observe import dashboards

ROOT = Path(__file__).resolve().parents[1]
MODELS = {p.name: json.loads(p.read_text()) for p in sorted((ROOT / "dashboards").glob("*.json"))}


def grafana_to_promql(expr: str) -> str:
    """A Grafana query as Prometheus sees it: variables → match-all, $__rate_interval → 5m, the
    step-budget textbox → its default, label_values(q, l) → q."""
    m = re.fullmatch(r"label_values\((.*),\s*\w+\)", expr.strip(), flags=re.S)
    if m:
        expr = m.group(1)
    expr = expr.replace("$__rate_interval", "5m").replace("$__range", "1h")
    expr = expr.replace("$max_num_batched_tokens", dashboards.BUDGET.query)
    return re.sub(r"\$\{?(job|instance|model_name|engine)\}?", ".*", expr)
