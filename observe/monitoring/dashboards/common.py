"""What every board of the dashboard builder shares: the datasource and the selectors of the
``$namespace`` / ``$job`` / ``$instance`` / ``$model_name`` / ``$engine`` variables, the query helpers
(every metric read over all its exposed names with `promql.fold`), the panel constructors, the
layout and the dashboard frame. One module per board imports these (see ``observe.monitoring.dashboards``)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import grafanalib.core as g

from observe.metrics import names
from observe.metrics.promql import fold
from observe.settings import Settings

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


def kv_steps(s: Settings, base: float | None = None) -> list[tuple[str, float | None]]:
    """The KV-usage colour steps (0-1, as vLLM's gauge): orange from Settings.kv_high_pct, red from
    kv_full_pct (the VLLMKVCacheSaturated threshold), so a board turns red where the alert looks."""
    return [("green", base), ("orange", s.kv_high_pct / 100.0), ("red", s.kv_usage_ratio)]


def _t(
    expr: str, legend: str = "", ref: str = "A", instant: bool = False, fmt: str = "time_series"
) -> g.Target:
    return g.Target(expr=expr, legendFormat=legend, refId=ref, instant=instant, format=fmt, datasource=DS)


def _agg(op: str, by: str) -> str:
    return f"{op} by ({by}) " if by else f"{op} "


def _rate(canonical: str, by: str = "", extra: str = "") -> str:
    """Per-second rate of a counter, summed ``by`` (over every alias)."""
    sel = SEL + (", " + extra if extra else "")
    return fold(canonical, f"{_agg('sum', by)}(rate({{m}}{{{sel}}}[{RI}]))")


def _gauge(canonical: str, op: str, by: str = "") -> str:
    return fold(canonical, f"{_agg(op, by)}({{m}}{{{SEL}}})")


def _ratio(num: str, den: str) -> str:
    """num / den, with no value (not NaN) while den is 0 (an idle server)."""
    return f"({num})\n/\n(({den}) > 0)"


def _buckets(canonical: str, by: str) -> str:
    return fold(canonical, f"sum by ({by}) (rate({{m}}_bucket{{{SEL}}}[{RI}]))")


def _hq(q: float, canonical: str, by: str) -> str:
    return f"histogram_quantile({q}, {_buckets(canonical, by + ', le')})"


def _mean(canonical: str, by: str) -> str:
    """Mean of a histogram's observations over the rate interval: rate(sum) / rate(count)."""
    total = fold(canonical, f"sum by ({by}) (rate({{m}}_sum{{{SEL}}}[{RI}]))")
    count = fold(canonical, f"sum by ({by}) (rate({{m}}_count{{{SEL}}}[{RI}]))")
    return _ratio(total, count)


def _errors_ratio(by: str) -> str:
    return _ratio(
        _rate(names.REQUEST_SUCCESS_TOTAL, by, 'finished_reason="error"'),
        _rate(names.REQUEST_SUCCESS_TOTAL, by),
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
    thresholds: Iterable[tuple[str, float | None]],
) -> g.BarGauge:
    """A BarGauge whose unit, range and reduction are also in ``fieldConfig``/``reduceOptions``
    (grafanalib writes only the legacy ``fieldOptions`` that Grafana has to migrate)."""
    steps = [
        g.Threshold(color, i, float(v) if v is not None else 0.0) for i, (color, v) in enumerate(thresholds)
    ]
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
# The Grafana compose pins (GRAFANA_TAG's default) and the dashboard schema it writes: 13.2.3, the
# newest release (npm's `latest` of @grafana/schema, which Grafana publishes with each release), whose
# defaultDashboard (dist/esm/raw/dashboard/x/types.gen.mjs) has schemaVersion 42, the last schema of the
# v1 dashboard API (grafana/grafana apps/dashboard/pkg/migration/schemaversion/README.md). The steps
# 40..43 of Grafana's migrator rewrite nothing these boards use (tests/test_dashjson.py, docs/monitoring.md).
GRAFANA_VERSION = "13.2.3"
SCHEMA_VERSION = 42


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
    base = names.NUM_REQUESTS_RUNNING
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
        schemaVersion=SCHEMA_VERSION,
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
