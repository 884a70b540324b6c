"""Grafana dashboards: committed JSON = generator output, current panel types, variables, no
hard-coded datasource, descriptions, every query parses (promtool) and reads known metrics; uids
and tags apart from vLLM's own boards; $__rate_interval, guarded ratios, raw vLLM metrics."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from observe import alerts, dashboards, names
from observe.settings import Settings
from tests.dashboardq import MODELS, grafana_to_promql
from tests.services import have, promql_metric_names

ROOT = Path(__file__).resolve().parents[1]
PANEL_TYPES = {"timeseries", "stat", "table", "bargauge", "heatmap"}
PROM_BUILTIN = {"up"}
# what NVIDIA's dcgm-exporter exports by default (the GPU board), tests/data/dcgm/default-counters.csv
DCGM = {
    ln.split(",")[0].strip()
    for ln in (ROOT / "tests" / "data" / "dcgm" / "default-counters.csv").read_text().splitlines()
    if ln.startswith("DCGM_")
}
# vLLM's own generated Grafana boards (vLLM's examples/observability dashboards)
VLLM_UIDS = {"vllm-overview", "vllm-kv-cache", "vllm-instances"}
VLLM_TAGS = {"vllm"}
RECORDED = {r["record"] for r in alerts.recording_rules(Settings())}


def all_queries() -> list[tuple[str, str, str]]:
    return [
        (name, title, grafana_to_promql(q))
        for name, model in MODELS.items()
        for title, q in dashboards.panel_queries(model)
    ]


def test_six_dashboards_committed():
    assert set(MODELS) == {
        "observe-vllm-overview.json",
        "observe-vllm-tuning.json",
        "observe-vllm-kv-cache.json",
        "observe-vllm-instances.json",
        "observe-vllm-gpu.json",
        "observe-vllm-spec-kv-transfer.json",
    }


def test_no_uid_or_tag_collides_with_vllms_own_dashboards():
    uids = [m["uid"] for m in MODELS.values()]
    assert len(set(uids)) == len(uids)
    assert not set(uids) & VLLM_UIDS
    assert all(u.startswith("observe-vllm-") for u in uids)
    for name, m in MODELS.items():
        assert m["uid"] + ".json" == name
        assert not set(m["tags"]) & VLLM_TAGS, (name, m["tags"])
        assert m["tags"] == ["observe"]
        # the dashboards dropdown lists observe's boards; a second one vLLM's own
        assert [link["tags"] for link in m["links"]] == [["observe"], ["vllm"]]


def test_queries_use_rate_interval_not_fixed_windows():
    fixed = []
    for name, model in MODELS.items():
        for title, q in dashboards.panel_queries(model):
            if "rate(" in q or "increase(" in q:
                assert "[$__rate_interval]" in q, (name, title)
            if re.search(r"\[\d+[smhdw]\]", q):
                fixed.append((name, title, q))
    assert fixed == []


def test_ratios_are_guarded_against_idle_zero_over_zero():
    for name, model in MODELS.items():
        for title, q in dashboards.panel_queries(model):
            divisions = len(re.findall(r"(^|\s)/(\s|$)", q))
            assert q.count("> 0)") >= divisions, (name, title, q)


def test_panels_read_raw_vllm_metrics_or_say_they_need_the_recording_rules():
    for name, model in MODELS.items():
        for panel in model["panels"]:
            exprs = " ".join(t.get("expr", "") for t in panel.get("targets", []))
            if promql_metric_names(exprs) & RECORDED:
                assert "recording rules" in panel["title"], (name, panel["title"])
                assert "recording rules" in panel["description"]


def test_regenerating_changes_nothing():
    for name, text in dashboards.render().items():
        assert (ROOT / "dashboards" / name).read_text() == text, (
            f"dashboards/{name} drifted: observe generate dashboards"
        )


@pytest.mark.parametrize("name", sorted(MODELS))
def test_variables_and_datasource(name: str):
    model = MODELS[name]
    variables = {v["name"]: v for v in model["templating"]["list"]}
    assert list(variables)[:6] == ["datasource", "namespace", "job", "instance", "model_name", "engine"]
    assert list(variables)[6:] == (["max_num_batched_tokens"] if name == "observe-vllm-tuning.json" else [])
    assert (
        variables["datasource"]["type"] == "datasource" and variables["datasource"]["query"] == "prometheus"
    )
    for v in ("namespace", "job", "instance", "model_name", "engine"):
        assert variables[v]["includeAll"] and variables[v]["multi"]
    # "All" is ".*": it also matches series without the label (compose has no namespace)
    assert variables["namespace"]["allValue"] == ".*"
    for title, q in dashboards.panel_queries(model):
        if "vllm:" in q and not title.startswith("variable"):
            assert 'namespace=~"$namespace"' in q, (name, title)
    for panel in model["panels"]:
        assert panel["datasource"] == {"type": "prometheus", "uid": "${datasource}"}, panel["title"]
        for t in panel.get("targets", []):
            assert t["datasource"] == {"type": "prometheus", "uid": "${datasource}"}


@pytest.mark.parametrize("name", sorted(MODELS))
def test_panels_are_current_types_with_descriptions_and_a_sane_grid(name: str):
    model = MODELS[name]
    ids, cells = set(), set()
    for panel in model["panels"]:
        assert panel["type"] in PANEL_TYPES, panel["type"]
        assert len(panel.get("description") or "") > 40, f"{panel['title']}: say what to do"
        assert panel["id"] not in ids
        ids.add(panel["id"])
        gp = panel["gridPos"]
        assert 0 <= gp["x"] and gp["x"] + gp["w"] <= 24
        for x in range(gp["x"], gp["x"] + gp["w"]):
            for y in range(gp["y"], gp["y"] + gp["h"]):
                assert (x, y) not in cells, f"{panel['title']} overlaps another panel"
                cells.add((x, y))
        assert panel.get("targets"), panel["title"]


def test_all_panel_types_are_used():
    used = {p["type"] for m in MODELS.values() for p in m["panels"]}
    assert used == PANEL_TYPES


def _titles(name: str) -> str:
    return " | ".join(p["title"] for p in MODELS[name]["panels"]).lower()


def test_overview_covers_the_issue_list():
    titles = _titles("observe-vllm-overview.json")
    for word in (
        "request throughput",
        "token throughput",
        "time to first token",
        "inter-token",
        "end-to-end",
        "slo",
        "running",
        "waiting",
        "kv cache",
        "preemptions",
        "prefix-cache",
        "error",
    ):
        assert word in titles, word


def test_kv_dashboard_covers_capacity_findings_recommendations():
    titles = _titles("observe-vllm-kv-cache.json")
    for word in (
        "capacity",
        "maximum concurrency",
        "usage",
        "preemptions",
        "waiting requests by reason",
        "findings",
        "recommendations",
    ):
        assert word in titles, word
    exprs = " ".join(q for _, q in dashboards.panel_queries(MODELS["observe-vllm-kv-cache.json"]))
    assert "observe_finding" in exprs and "observe_recommendation_info" in exprs


def test_instances_dashboard_reads_cache_config_info():
    exprs = " ".join(q for _, q in dashboards.panel_queries(MODELS["observe-vllm-instances.json"]))
    assert "vllm:cache_config_info" in exprs


def test_tuning_dashboard_has_what_vllms_boards_have_for_tuning():
    model = MODELS["observe-vllm-tuning.json"]
    panels = {p["title"]: " ".join(t["expr"] for t in p["targets"]) for p in model["panels"]}

    def panel(word: str) -> str:
        (exprs,) = [e for t, e in panels.items() if word in t.lower() and "distribution" not in t.lower()]
        return exprs

    steps = panel("tokens per engine step vs")
    assert "vllm:iteration_tokens_total_bucket" in steps and "$max_num_batched_tokens" in steps
    assert "vllm:request_time_per_output_token_seconds_bucket" in panel("time per output token")
    phases = panel("time per request phase")
    for phase in ("queue", "prefill", "decode", "inference"):
        assert f"vllm:request_{phase}_time_seconds_sum" in phases
    reasons = panel("finish reasons")
    assert "vllm:request_success_total" in reasons and "by (finished_reason)" in reasons


def test_every_metric_a_dashboard_reads_is_known():
    unknown = set()
    for name, title, q in all_queries():
        for metric in promql_metric_names(q):
            if (
                metric in RECORDED
                or metric in names.OBSERVE_METRICS
                or metric in PROM_BUILTIN
                or metric in DCGM
            ):
                continue
            if names.split_sample_name(metric) is None:
                unknown.add((name, title, metric))
    assert unknown == set()


@pytest.mark.skipif(not have("promtool"), reason="promtool (Debian `prometheus`) not installed")
def test_every_dashboard_query_parses(tmp_path: Path):
    queries = all_queries()
    rules = [{"record": f"dashboard:query_{i}:check", "expr": q} for i, (_, _, q) in enumerate(queries)]
    f = tmp_path / "dash.rules.yml"
    f.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    r = subprocess.run(["promtool", "check", "rules", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"{len(rules)} rules found" in r.stdout


@pytest.mark.skipif(not have("promtool"), reason="promtool (Debian `prometheus`) not installed")
def test_parse_check_rejects_a_broken_query(tmp_path: Path):
    """The parse check above can fail: a query with a typo is rejected."""
    f = tmp_path / "bad.rules.yml"
    f.write_text(
        yaml.safe_dump(
            {
                "groups": [
                    {
                        "name": "d",
                        "rules": [
                            {
                                "record": "dashboard:bad:check",
                                "expr": grafana_to_promql('sum by (instance (up{job=~"$job"})'),
                            }
                        ],
                    }
                ]
            }
        )
    )
    assert subprocess.run(["promtool", "check", "rules", str(f)], capture_output=True).returncode != 0


def test_write_dashboards(tmp_path: Path):
    paths = dashboards.write_dashboards(tmp_path / "out")
    assert sorted(p.name for p in paths) == sorted(MODELS)
    assert all(p.read_text() == (ROOT / "dashboards" / p.name).read_text() for p in paths)


def test_gpu_board_joins_dcgm_and_vllm_on_namespace_and_pod():
    model = MODELS["observe-vllm-gpu.json"]
    queries = dashboards.panel_queries(model)
    read = {m for _, q in queries for m in promql_metric_names(grafana_to_promql(q))}
    assert {
        "DCGM_FI_DEV_GPU_UTIL",
        "DCGM_FI_DEV_FB_USED",
        "DCGM_FI_DEV_POWER_USAGE",
        "DCGM_FI_DEV_GPU_TEMP",
    } <= read
    mem = " ".join(q for t, q in queries if t.startswith("GPU memory used"))
    assert "by (namespace, pod, gpu)" in mem and "by (namespace, pod)" in mem and "kv_cache_usage_perc" in mem


def test_newer_vllm_machinery_has_panels():
    read = {
        m
        for _, q in dashboards.panel_queries(MODELS["observe-vllm-spec-kv-transfer.json"])
        for m in promql_metric_names(grafana_to_promql(q))
    }
    for family in (
        "vllm:spec_decode_num_accepted_tokens_total",
        "vllm:kv_offload_store_bytes_total",
        "vllm:nixl_xfer_time_seconds_bucket",
        "vllm:num_requests_kv_fetch_by_stage",
    ):
        assert family in read, family
