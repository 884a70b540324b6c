"""Alert and recording rules: promtool-valid, every alert tested at its `for:` boundary, no drift,
every metric known, thresholds follow the Settings object."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
import yaml

from observe.errors import ConfigError
from observe.flags import vllmflags
from observe.metrics import names
from observe.model import EngineConfig
from observe.monitoring import alerts
from observe.settings import PUBLISHED_RUNBOOKS, Settings
from tests.dashboardq import DCGM
from tests.services import have, promql_metric_names, promtools

ROOT = Path(__file__).resolve().parents[1]
RULE_FILES = sorted((ROOT / "alerts").glob("*.yml"))
TEST_FILES = sorted((ROOT / "tests" / "alerts").glob("*_test.yml"))
RUNBOOKS = ROOT / "docs" / "runbooks.md"
PROM_BUILTIN = {"up", "scrape_duration_seconds", "scrape_samples_scraped"}

needs_promtool = pytest.mark.skipif(
    not have("promtool"), reason="promtool (Debian `prometheus`) not installed"
)


def _rules(kind: str) -> list[dict]:
    out = []
    for f in RULE_FILES:
        for g in yaml.safe_load(f.read_text())["groups"]:
            out += [r for r in g["rules"] if kind in r]
    return out


def _dur_s(d: str) -> int:
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)([smhd])", d))


def test_committed_files_exist():
    assert {p.name for p in RULE_FILES} == {alerts.RULES_FILE}
    assert TEST_FILES


# Prometheus 2 (Debian's promtool) and 3 (what compose and kube-prometheus-stack run; tools/promtool3.sh):
# Prometheus 3's ranges and lookback are left-open and its parser differs, so each rule file and each
# promtool test runs on both, with the same expectations (docs/monitoring.md)
MAJORS = pytest.mark.parametrize("major", [2, 3], ids=lambda m: f"prometheus{m}")


def _promtool(major: int) -> str:
    tool = promtools().get(major)
    if tool is None:
        pytest.skip(f"no Prometheus {major} promtool (Debian `prometheus`; 3: tools/promtool3.sh)")
    return tool


def test_ci_has_a_prometheus_3_promtool():
    """CI runs the promtool tests on Prometheus 3 too (tools/test.sh fetches it), not skipped."""
    if os.environ.get("CI") != "true":
        pytest.skip("outside CI a missing Prometheus 3 promtool skips its tests")
    assert 3 in promtools(), "tools/promtool3.sh found no Prometheus 3 promtool"


@MAJORS
@pytest.mark.parametrize("rule_file", RULE_FILES, ids=lambda p: p.name)
def test_promtool_check_rules(rule_file: Path, major: int):
    r = subprocess.run([_promtool(major), "check", "rules", str(rule_file)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "SUCCESS" in r.stdout


@MAJORS
@pytest.mark.parametrize("test_file", TEST_FILES, ids=lambda p: p.name)
def test_promtool_unit_tests_pass(test_file: Path, major: int):
    r = subprocess.run([_promtool(major), "test", "rules", str(test_file)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr


def _boundary_cases() -> dict[str, list[tuple[int, int]]]:
    """alertname → [(last eval with no alert, first eval with the alert)] within one test case."""
    cases: dict[str, list[tuple[int, int]]] = {}
    for tf in TEST_FILES:
        doc = yaml.safe_load(tf.read_text())
        for case in doc["tests"]:
            by_alert: dict[str, dict[str, list[int]]] = {}
            for t in case.get("alert_rule_test", []):
                slot = by_alert.setdefault(t["alertname"], {"empty": [], "firing": []})
                slot["firing" if t.get("exp_alerts") else "empty"].append(_dur_s(t["eval_time"]))
            for name, slot in by_alert.items():
                for f in slot["firing"]:
                    before = [e for e in slot["empty"] if e < f]
                    if before:
                        cases.setdefault(name, []).append((max(before), f))
    return cases


def test_every_alert_has_a_promtool_test_at_its_for_boundary():
    interval = 60  # evaluation_interval of the promtool tests
    cases = _boundary_cases()
    missing, not_tight = [], []
    for rule in _rules("alert"):
        name = rule["alert"]
        if name not in cases:
            missing.append(name)
        elif not any(f - e == interval for e, f in cases[name]):
            not_tight.append(name)
    assert missing == [], f"alerts without a promtool test: {missing}"
    assert not_tight == [], f"alerts whose test does not check one evaluation before firing: {not_tight}"


def test_firing_time_matches_for_duration_for_constant_inputs():
    """For the alerts whose test input is true from t=0 (gauges), firing time == `for:`."""
    gauges = {
        "VLLMDown",
        "VLLMKVCacheSaturated",
        "VLLMQueueBacklog",
        "ObserveSidecarDown",
        "ObserveCannotReachVLLM",
        "ObserveRecommendationPending",
    }
    fors = {r["alert"]: _dur_s(r.get("for", "0s")) for r in _rules("alert")}
    cases = _boundary_cases()
    for name in gauges:
        assert any(f == fors[name] for _, f in cases[name]), (name, cases[name], fors[name])


def test_generated_files_match_committed_files():
    rendered = alerts.render_rules(Settings())
    for fname, text in rendered.items():
        assert (ROOT / "alerts" / fname).read_text() == text, (
            f"alerts/{fname} drifted: run `observe generate alerts`"
        )


def test_every_metric_in_rules_is_known():
    recorded = {r["record"] for r in _rules("record")}
    unknown = set()
    for rule in _rules("record") + _rules("alert"):
        for metric in promql_metric_names(rule["expr"]):
            if metric in recorded or metric in names.OBSERVE_METRICS or metric in PROM_BUILTIN | DCGM:
                continue
            if names.split_sample_name(metric) is None:
                unknown.add(metric)
    assert unknown == set()


def test_recording_rules_follow_level_metric_operations():
    for rule in _rules("record"):
        assert re.fullmatch(r"[a-z_]+:[a-z0-9_]+:[a-z0-9_]+", rule["record"]), rule["record"]


def test_recording_rules_fold_renamed_metrics():
    exprs = {r["record"]: r["expr"] for r in _rules("record")}
    kv = exprs["instance:vllm_kv_cache_usage:ratio"]
    assert "vllm:kv_cache_usage_perc" in kv and "vllm:gpu_cache_usage_perc" in kv
    itl = exprs["instance:vllm_itl_seconds_bucket:rate5m"]
    assert (
        "vllm:inter_token_latency_seconds_bucket" in itl
        and "vllm:time_per_output_token_seconds_bucket" in itl
    )


def test_every_alert_has_severity_summary_description_runbook():
    anchors = _runbook_anchors()
    for rule in _rules("alert"):
        assert rule["labels"]["severity"] in ("info", "warning", "critical")
        assert rule["labels"]["component"] in ("vllm", "vllm-logs", "observe")
        ann = rule["annotations"]
        assert ann["summary"] and ann["description"]
        url, anchor = ann["runbook_url"].split("#")
        assert url == Settings().runbook_base == PUBLISHED_RUNBOOKS
        assert anchor in anchors, f"docs/runbooks.md has no section for {rule['alert']}"


def _runbook_anchors() -> dict[str, str]:
    """GitHub-style anchors of the `## ` headings in docs/runbooks.md → section text."""
    text = RUNBOOKS.read_text()
    out = {}
    for block in re.split(r"^## ", text, flags=re.M)[1:]:
        heading, _, body = block.partition("\n")
        anchor = re.sub(r"[^a-z0-9 _-]", "", heading.strip().lower()).replace(" ", "-")
        out[anchor] = body
    return out


def test_runbook_sections_say_meaning_confirm_and_flags():
    anchors = _runbook_anchors()
    for rule in _rules("alert"):
        body = anchors[rule["alert"].lower()]
        for part in ("**Meaning**", "**Confirm**", "**Fix**"):
            assert part in body, f"{rule['alert']} runbook lacks {part}"


# ---------------------------------------------------------------- Settings


def _alert_expr(s: Settings, name: str) -> str:
    return next(r["expr"] for r in alerts.alert_rules(s) if r["alert"] == name)


def test_thresholds_come_from_settings():
    s = Settings(
        kv_full_pct=90.0,
        kv_high_pct=85.0,
        waiting_requests=12,
        ttft_slo_seconds=2.5,
        ttft_slo_target=0.995,
        group_interval="10s",
        kv_for="30s",
    )
    assert _alert_expr(s, "VLLMKVCacheSaturated") == (
        "quantile_over_time(0.9, instance:vllm_kv_cache_usage:ratio[5m]) > 0.9"
    )
    assert _alert_expr(s, "VLLMQueueBacklog") == "instance:vllm_requests_waiting:sum > 12"
    assert "> 0.072" in _alert_expr(s, "VLLMTTFTSLOBurnFast")  # 14.4 x 0.5 %
    rec = {r["record"]: r["expr"] for r in alerts.recording_rules(s)}
    le = re.search(r'le=~"([^"]*)"', rec["instance:vllm_ttft_slo_errors:ratio_rate2m"])
    assert le, rec["instance:vllm_ttft_slo_errors:ratio_rate2m"]
    regex = re.compile(le[1].replace("\\\\", "\\"))
    assert regex.fullmatch("2.5") and regex.fullmatch("2.0") and not regex.fullmatch("5.0")
    assert alerts.rule_group(s)["interval"] == "10s"
    kv = next(r for r in alerts.alert_rules(s) if r["alert"] == "VLLMKVCacheSaturated")
    assert kv["for"] == "30s"


def test_settings_derived_from_the_instance():
    engine = EngineConfig(max_num_seqs=64, kv_cache_tokens=100_000, max_model_len=8192)
    s = Settings.for_instance(engine)
    assert s.waiting_threshold == 64
    assert s.kv_usage_ratio == pytest.approx(1 - 8192 / 100_000, abs=1e-3)
    # the sidecar's observe_vllm_max_num_seqs first; the instance's --max-num-seqs where none reports it
    queue = _alert_expr(s, "VLLMQueueBacklog")
    assert "(0.25 * max by (cluster, namespace, pod, instance) (observe_vllm_max_num_seqs))" in queue
    assert "instance:vllm_requests_waiting:sum > 64\n  unless on (cluster, namespace, pod, instance)" in queue
    # a tiny cache (one max_model_len request uses most of it) is clamped, not set to ~0
    assert Settings.for_instance(EngineConfig(kv_cache_tokens=9000, max_model_len=8192)).kv_usage_ratio == 0.5
    # unknown facts keep the defaults; explicit overrides win
    assert Settings.for_instance(EngineConfig()) == Settings()
    assert Settings.for_instance(engine, waiting_requests=5).waiting_threshold == 5


def test_queue_backlog_where_the_batch_is_unknown():
    """vLLM's default --max-num-seqs depends on the release and the GPU (vllm/engine/arg_utils.py
    get_batch_defaults @ v0.32.0 / v0.34.0: 1024 from 70 GiB, A100 and GB10 aside, else 256). Where
    neither a sidecar nor Settings gives the batch it is unknown, not 256: the absolute branch takes
    queue_batch_share of the largest default (no earlier than the share on any GPU) and says so."""
    s = Settings()
    assert s.waiting_threshold is None
    h100 = vllmflags.batch_defaults("0.32.0", gpu="NVIDIA H100 80GB HBM3", gpu_memory_gib=79.1)
    l4 = vllmflags.batch_defaults("0.32.0", gpu="NVIDIA L4", gpu_memory_gib=22.0)
    assert h100 and l4 and (h100["max_num_seqs"], l4["max_num_seqs"]) == (1024, 256)
    largest = vllmflags.largest_gpu_max_num_seqs()
    assert largest == h100["max_num_seqs"]
    for share in (0.25, 0.5):
        s = Settings(queue_batch_share=share)
        want = f"{share * largest:g}"
        assert f"instance:vllm_requests_waiting:sum > {want}\n  unless on" in _alert_expr(
            s, "VLLMQueueBacklog"
        )
        rule = next(r for r in alerts.alert_rules(s) if r["alert"] == "VLLMQueueBacklog")
        assert (
            f"where no sidecar reports it, {want} requests: {share * 100:g}% of {largest}, the largest batch"
            in (rule["annotations"]["description"])
        )
    # the instance's own --max-num-seqs (Settings) is one full batch, and the description names it
    rule = next(r for r in alerts.alert_rules(Settings(max_num_seqs=64)) if r["alert"] == "VLLMQueueBacklog")
    assert "64 requests where no sidecar reports it" in rule["annotations"]["description"]


@pytest.mark.parametrize(
    "kwargs",
    [
        {"ttft_slo_seconds": 0.3},  # not a vLLM bucket bound
        {"itl_slo_seconds": 0.12},
        {"kv_full_pct": 150.0},
        {"ttft_slo_target": 1.0},
        {"kv_for": "ten minutes"},
        {"max_num_seqs": 0},
    ],
)
def test_bad_settings_raise_config_error(kwargs):
    with pytest.raises(ConfigError):
        Settings(**kwargs)


def test_prometheus_operator_manifest_holds_the_same_groups():
    doc = yaml.safe_load(alerts.prometheus_rule_manifest())
    assert doc["apiVersion"] == "monitoring.coreos.com/v1" and doc["kind"] == "PrometheusRule"
    groups = doc["spec"]["groups"]
    on_disk = [g for f in RULE_FILES for g in yaml.safe_load(f.read_text())["groups"]]
    assert sorted(groups, key=lambda g: g["name"]) == sorted(on_disk, key=lambda g: g["name"])


def test_write_alerts_both_formats(tmp_path: Path):
    paths = alerts.write_alerts(tmp_path / "plain")
    assert [p.name for p in paths] == [alerts.RULES_FILE]
    [op] = alerts.write_alerts(tmp_path / "op", fmt="prometheus-operator")
    assert yaml.safe_load(op.read_text())["kind"] == "PrometheusRule"
    with pytest.raises(ConfigError):
        alerts.write_alerts(tmp_path, fmt="nagios")


@needs_promtool
def test_promtool_tests_catch_a_changed_threshold(tmp_path: Path):
    """The unit tests are not vacuous: rules generated with a higher KV threshold fail them."""
    for fname, text in alerts.render_rules(Settings(kv_full_pct=96.5)).items():
        (tmp_path / fname).write_text(text)
    test_doc = yaml.safe_load((ROOT / "tests" / "alerts" / "vllm_alerts_test.yml").read_text())
    test_doc["rule_files"] = [str(tmp_path / alerts.RULES_FILE)]
    (tmp_path / "t_test.yml").write_text(yaml.safe_dump(test_doc, sort_keys=False))
    r = subprocess.run(
        ["promtool", "test", "rules", str(tmp_path / "t_test.yml")], capture_output=True, text=True
    )
    assert r.returncode != 0
    assert "VLLMKVCacheSaturated" in r.stdout + r.stderr


# ---------------------------------------------------------------- CLI: observe generate


def test_cli_generate_alerts_and_dashboards_match_committed(tmp_path: Path):
    from typer.testing import CliRunner

    from observe.cli import app

    runner = CliRunner()
    r = runner.invoke(app, ["generate", "alerts", "--out", str(tmp_path / "a")])
    assert r.exit_code == 0, r.output
    assert (tmp_path / "a" / alerts.RULES_FILE).read_text() == (
        ROOT / "alerts" / alerts.RULES_FILE
    ).read_text()
    r = runner.invoke(
        app, ["generate", "alerts", "--out", str(tmp_path / "k"), "--format", "prometheus-operator"]
    )
    assert r.exit_code == 0, r.output
    assert yaml.safe_load((tmp_path / "k" / "prometheusrule.yml").read_text())["kind"] == "PrometheusRule"
    r = runner.invoke(app, ["generate", "alerts", "--out", str(tmp_path / "m"), "--max-num-seqs", "48"])
    assert (
        r.exit_code == 0
        and "instance:vllm_requests_waiting:sum > 48" in (tmp_path / "m" / alerts.RULES_FILE).read_text()
    )
    r = runner.invoke(app, ["generate", "dashboards", "--out", str(tmp_path / "d")])
    assert r.exit_code == 0, r.output
    for p in (ROOT / "dashboards").glob("*.json"):
        assert (tmp_path / "d" / p.name).read_text() == p.read_text()


def test_cli_generate_alerts_bad_value_is_one_line_error(tmp_path: Path):
    from typer.testing import CliRunner

    from observe.cli import app

    r = CliRunner().invoke(app, ["generate", "alerts", "--out", str(tmp_path), "--ttft-slo", "0.3"])
    assert r.exit_code == 2
    assert "Traceback" not in r.output
    assert "ttft_slo_seconds must be a vLLM bucket bound" in r.output


def test_runbook_base_is_configurable_and_checked(tmp_path) -> None:
    from typer.testing import CliRunner

    from observe.cli import app

    r = CliRunner().invoke(
        app, ["generate", "alerts", "--out", str(tmp_path), "--runbook-base", "https://runbooks.example/v.md"]
    )
    assert r.exit_code == 0, r.stderr
    text = (tmp_path / "vllm-observe.rules.yml").read_text()
    assert "runbook_url: https://runbooks.example/v.md#vllmdown" in text
    assert "github.com/observe-vllm" not in text
    r = CliRunner().invoke(
        app, ["generate", "alerts", "--out", str(tmp_path), "--runbook-base", "javascript:alert(1)"]
    )
    assert r.exit_code == 2 and "http(s) URL" in r.stderr


def test_selector_rule_labels_and_oom_equality_come_from_settings(tmp_path: Path) -> None:
    s = Settings(vllm_selector='job=~".*/vllm"', rule_labels=(("release", "prom"),), namespace="monitoring")
    assert _alert_expr(s, "VLLMDown") == 'up{job=~".*/vllm"} == 0'
    assert _alert_expr(s, "VLLMTargetMissing") == 'absent(up{job=~".*/vllm"})'
    rec = {r["record"]: r["expr"] for r in alerts.recording_rules(s)}
    assert 'vllm:num_requests_running{job=~".*/vllm"}' in rec["instance:vllm_requests_running:sum"]
    assert 'kind="oom"' in _alert_expr(s, "VLLMEngineOOM") and "kind=~" not in _alert_expr(s, "VLLMEngineOOM")
    manifest = yaml.safe_load(alerts.prometheus_rule_manifest(s))
    assert manifest["metadata"]["labels"]["release"] == "prom"
    assert manifest["metadata"]["namespace"] == "monitoring"
    assert "prometheus" not in manifest["metadata"]["labels"]
    windows = [
        (r["labels"]["long_window"], r["labels"]["short_window"])
        for r in alerts.alert_rules(s)
        if r["alert"] == "VLLMTTFTSLOBurnFast" or r["alert"] == "VLLMTTFTSLOBurnSlow"
    ]
    assert windows == [("20m", "2m"), ("6h", "30m"), ("1d", "2h"), ("3d", "6h")]
    cfg = tmp_path / "observe.yaml"
    cfg.write_text('vllm_selector: namespace="llm"\nrule_labels: {release: kps}\nmin_request_rate: 1\n')
    from observe.settings import from_yaml

    t = from_yaml(cfg.read_text())
    assert t.rule_labels == (("release", "kps"),) and t.min_request_rate == 1.0
    assert ">= 1\n" in _alert_expr(t, "VLLMTTFTSLOBurnFast") + "\n"


def test_engine_stuck_pages_stuck_after_s_after_the_last_token():
    """flat window + for: == stuck_after_s, whatever stuck_after_s is (the drill shortens it)."""
    for after, window, for_ in ((180, "2m", "1m"), (40, "40s", None), (300, "2m", "3m"), (150, "2m", "30s")):
        rule = next(
            r for r in alerts.alert_rules(Settings(stuck_after_s=after)) if r["alert"] == "VLLMEngineStuck"
        )
        assert f"[{window}]" in rule["expr"] and rule.get("for") == for_, (after, rule)


@pytest.mark.parametrize("slo", [1.0, 0.1, 2.5, 0.25, 0.075, 10.0, 20.0])
def test_le_regex_takes_every_bound_at_most_the_slo_in_every_written_form(slo: float) -> None:
    """The SLO rules' `le` regex: vLLM's repr (`1.0`, `1e-05`), Prometheus 3's normalised `1`, and
    custom bounds either side of the SLO; never +Inf."""
    from observe.monitoring.recording_rules import le_at_most

    regex = re.compile(le_at_most(slo))
    grid = [0.0, 1e-05, 0.001, 0.05, 0.07, 0.0751, 0.1, 0.1001, 0.15, 0.25, 0.3, 0.8, 0.9999, 1.0, 1.0001]
    grid += [1.5, 2.0, 2.5, 2.51, 9.99, 10.0, 10.5, 19.0, 20.0, 21.0, 100.0, 1000.0]
    for v in grid:
        for text in {repr(v), f"{v:g}"}:
            assert (regex.fullmatch(text) is not None) is (v <= slo), (slo, text)
    assert regex.fullmatch("+Inf") is None
