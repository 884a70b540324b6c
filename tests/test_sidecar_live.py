"""The sidecar with its threads: started in-process, fed by a writer, read over HTTP, stopped."""

from __future__ import annotations

import socket
import threading
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import replay_metrics_server, wait_until

TAIL = Path(__file__).parent / "data" / "tail"
METRICS = Path(__file__).parent / "data" / "metrics"
LINES = (TAIL / "vllm-cpu-0.32-normal.log").read_bytes().split(b"\n")[:-1]


def _values(url: str) -> dict[tuple, float]:
    text = requests.get(url + "/metrics", timeout=5).text
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_live_sidecar_follows_scrapes_analyzes_and_stops(tmp_path: Path, use_watchdog: bool) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"history that must not be read\n")
    bodies = [(METRICS / f"metrics-normal-{i}.txt").read_text() for i in (1, 2, 3)]
    with replay_metrics_server(
        bodies, mode="per_request", models={"data": [{"id": "tiny-llama", "max_model_len": 2048}]}
    ) as (vurl, ctl):
        settings = SidecarSettings(
            logs=[str(tmp_path / "*.log")],
            vllm_url=vurl,
            listen_port=0,
            scrape_interval=0.3,
            analyze_interval=0.5,
            use_watchdog=use_watchdog,
            poll_interval=0.1,
        )
        car = Sidecar(settings).start()
        try:
            host, port = car.listen_url.rsplit("/", 1)[1].split(":")
            assert host == "127.0.0.1"

            def writer() -> None:
                with log.open("ab") as w:
                    for ln in LINES:
                        w.write(ln + b"\n")
                        w.flush()

            t = threading.Thread(target=writer)
            t.start()
            t.join()
            key = ("observe_log_lines_total", (("file", str(log)),))
            wait_until(
                lambda: _values(car.listen_url).get(key) == len(LINES), timeout=30, what="all lines read"
            )
            wait_until(lambda: ctl.requests >= 3, timeout=30, what="three scrapes")
            wait_until(
                lambda: requests.get(car.listen_url + "/api/diagnosis", timeout=5).status_code == 200,
                timeout=30,
                what="a first analysis",
            )
            v = _values(car.listen_url)
            assert v[("observe_up", ())] == 1.0
            assert v[("observe_scrape_errors_total", ())] == 0.0
            assert v[("observe_vllm_stats_lines_total", ())] == sum(1 for ln in LINES if b"Engine 000:" in ln)
            # the analysis that answered first may predate the /v1/models read: wait for one after it
            wait_until(
                lambda: (
                    (
                        requests.get(car.listen_url + "/api/diagnosis", timeout=5).json().get("engine") or {}
                    ).get("max_model_len")
                    == 2048
                ),
                timeout=30,
                what="an analysis with the served model's max_model_len",
            )
            health = requests.get(car.listen_url + "/healthz", timeout=5)
            assert health.status_code == 200 and health.json()["vllm_up"] is True
        finally:
            car.stop()
    with pytest.raises(OSError):  # the listener is closed
        socket.create_connection(("127.0.0.1", int(port)), timeout=1)
    assert not [t for t in threading.enumerate() if t.name.startswith("observe-")]
