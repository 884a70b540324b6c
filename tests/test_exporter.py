"""exporter: one Collector over an ExportState, served with /healthz and /api/diagnosis."""

from __future__ import annotations

import requests
from prometheus_client.parser import text_string_to_metric_families

from observe.metrics import names
from observe.sidecar import exporter
from observe.sidecar.exporter import ExportState


def _state() -> ExportState:
    return ExportState(
        up=False,
        scrapes=7,
        scrape_errors=3,
        scrape_duration=0.25,
        log_lines={"/var/log/vllm.log": 120, '/tmp/we"ird\nname.log': 2},
        log_rotations=2,
        parse_errors=1,
        stats={"0": {"kv_usage_pct": 100.0, "waiting": 475.0, "running": 260.0}},
        stats_lines=4,
        preemption_warnings=2,
        cumulative_preemptions=101,
        kv_cache_tokens=42656,
        max_concurrency=20.83,
        engine_errors={"oom": 1},
        info={"version": "0.32.0", "engine": "v1", "model": "tiny-llama"},
        findings=[("kv_cache_saturated", "critical")],
        recommendations=[("--max-num-seqs", "256", "128")],
    )


def test_collector_exports_self_metrics_log_facts_findings() -> None:
    reg = exporter.make_registry(_state)
    g = reg.get_sample_value
    assert g("observe_up") == 0.0
    assert g("observe_scrapes_total") == 7.0
    assert g("observe_scrape_errors_total") == 3.0
    assert g("observe_log_lines_total", {"file": "/var/log/vllm.log"}) == 120.0
    assert g("observe_log_rotations_total") == 2.0
    assert g("observe_parse_errors_total") == 1.0
    assert g("observe_vllm_kv_usage_ratio", {"engine": "0"}) == 1.0
    assert g("observe_vllm_waiting_requests", {"engine": "0"}) == 475.0
    assert g("observe_vllm_preemption_warnings_total") == 2.0
    assert g("observe_vllm_cumulative_preemptions") == 101.0
    assert g("observe_vllm_kv_cache_tokens") == 42656.0
    assert g("observe_vllm_engine_errors_total", {"kind": "oom"}) == 1.0
    assert g("observe_vllm_info", {"version": "0.32.0", "engine": "v1", "model": "tiny-llama"}) == 1.0
    assert g("observe_finding", {"id": "kv_cache_saturated", "severity": "critical"}) == 1.0
    assert (
        g("observe_recommendation_info", {"flag": "--max-num-seqs", "current": "256", "suggested": "128"})
        == 1.0
    )


def test_each_collect_is_fresh_state_and_nothing_sticks() -> None:
    holder = {"s": _state()}
    reg = exporter.make_registry(lambda: holder["s"])
    assert (
        reg.get_sample_value("observe_finding", {"id": "kv_cache_saturated", "severity": "critical"}) == 1.0
    )
    holder["s"] = ExportState()  # findings cleared, no scrape yet
    assert (
        reg.get_sample_value("observe_finding", {"id": "kv_cache_saturated", "severity": "critical"}) is None
    )
    assert reg.get_sample_value("observe_up") is None  # unknown, not 0
    assert reg.get_sample_value("observe_vllm_kv_usage_ratio", {"engine": "0"}) is None


def test_every_exported_name_is_in_the_catalog_with_help() -> None:
    from prometheus_client.exposition import generate_latest

    text = generate_latest(exporter.make_registry(_state)).decode()
    fams = list(text_string_to_metric_families(text))
    assert fams
    for fam in fams:
        for s in fam.samples:
            assert s.name in names.OBSERVE_METRICS, s.name
    # hostile label values come back intact after exposition escaping
    files = {s.labels["file"] for f in fams for s in f.samples if s.name == "observe_log_lines_total"}
    assert files == {"/var/log/vllm.log", '/tmp/we"ird\nname.log'}


def test_server_routes_on_loopback_with_a_free_port() -> None:
    reg = exporter.make_registry(_state)
    diag = {"d": None}
    srv = exporter.Server(
        reg, port=0, health=lambda: (False, {"why": "<script>"}), diagnosis=lambda: diag["d"]
    )
    srv.start()
    try:
        assert srv.address[0] == "127.0.0.1"
        r = requests.get(srv.url + "/metrics", timeout=5)
        assert r.status_code == 200 and r.headers["Content-Type"].startswith("text/plain")
        assert "observe_vllm_kv_cache_tokens 42656.0" in r.text
        h = requests.get(srv.url + "/healthz", timeout=5)
        assert h.status_code == 503 and h.json() == {"status": "degraded", "why": "<script>"}
        assert h.headers["Content-Type"] == "application/json"
        assert requests.get(srv.url + "/api/diagnosis", timeout=5).status_code == 503
        diag["d"] = {"schema": "observe.diagnosis/v1", "findings": []}
        assert requests.get(srv.url + "/api/diagnosis", timeout=5).json()["schema"] == "observe.diagnosis/v1"
        assert requests.get(srv.url + "/nope", timeout=5).status_code == 404
    finally:
        srv.stop()
