"""Integration: a real Prometheus scrapes the sidecar and a replayed real vLLM /metrics; queries
through Prometheus's HTTP API return the sidecar's series, and our histogram quantile agrees with
PromQL's `histogram_quantile` on the same recorded histogram."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.metrics import metricmath, scrape
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import have, prom_query, prometheus, replay_metrics_server, wait_until

pytestmark = pytest.mark.skipif(not have("prometheus"), reason="Debian prometheus is not installed")

TAIL = Path(__file__).parent / "data" / "tail"
METRICS = Path(__file__).parent / "data" / "metrics"


def _hostport(url: str) -> str:
    return url.split("://", 1)[1].rstrip("/")


def _one(prom: str, expr: str) -> list[dict]:
    res = prom_query(prom, expr)
    assert res["status"] == "success", res
    return res["data"]["result"]


def test_prometheus_scrapes_the_sidecar_and_vllm(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    body = (METRICS / "metrics-normal-1.txt").read_text()
    with replay_metrics_server([body]) as (vurl, _ctl):
        settings = SidecarSettings(
            logs=[str(log)], vllm_url=vurl, listen_port=0, scrape_interval=0.5, analyze_interval=1.0
        )
        with Sidecar(settings) as car:
            data = (TAIL / "017-v1-bench-throughput-kv100-waiting475.log").read_bytes()
            with log.open("ab") as w:
                w.write(data if data.endswith(b"\n") else data + b"\n")
                w.write(
                    (TAIL / "013-v0-preemption-cumulative101-eval.log").read_bytes().rstrip(b"\n") + b"\n"
                )
            cfg = f"""
global: {{scrape_interval: 1s, evaluation_interval: 1s}}
scrape_configs:
  - job_name: observe
    static_configs: [{{targets: ["{_hostport(car.listen_url)}"]}}]
  - job_name: vllm
    static_configs: [{{targets: ["{_hostport(vurl)}"]}}]
"""
            with prometheus(cfg, tmp=tmp_path) as prom:
                wait_until(
                    lambda: (
                        _one(prom, "observe_vllm_kv_usage_ratio")
                        and _one(prom, 'up{job="vllm"} == 1')
                        and _one(prom, "observe_up == 1")
                    ),
                    timeout=60,
                    what="both targets scraped",
                )
                kv = _one(prom, "observe_vllm_kv_usage_ratio")
                assert [(r["metric"]["job"], r["metric"]["engine"], float(r["value"][1])) for r in kv] == [
                    ("observe", "0", 1.0)
                ]
                assert float(_one(prom, "observe_vllm_waiting_requests")[0]["value"][1]) == 475.0
                assert float(_one(prom, "observe_vllm_cumulative_preemptions")[0]["value"][1]) == 101.0
                assert float(_one(prom, "observe_vllm_preemption_warnings_total")[0]["value"][1]) == 1.0
                lines = _one(prom, "observe_log_lines_total")
                assert [(r["metric"]["file"], float(r["value"][1])) for r in lines] == [(str(log), 2.0)]
                assert float(_one(prom, "observe_scrape_errors_total")[0]["value"][1]) == 0.0
                # the vLLM job's own series, as recorded
                kv_m = _one(prom, 'vllm:kv_cache_usage_perc{job="vllm"}')
                assert float(kv_m[0]["value"][1]) == pytest.approx(0.006470516420461481)
                # our quantile == PromQL's, on the same recorded buckets
                fam = "vllm:e2e_request_latency_seconds"
                ours = metricmath.histogram_quantile(0.9, metricmath.buckets(scrape.parse_text(body), fam))
                theirs = _one(prom, f'histogram_quantile(0.9, sum by (le) ({fam}_bucket{{job="vllm"}}))')
                assert ours is not None
                assert float(theirs[0]["value"][1]) == pytest.approx(ours, rel=1e-9)
