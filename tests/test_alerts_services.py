"""The test services behind the alert tests (tests/services.py): they start the real daemons,
report a broken start with the daemon's log, and replay recorded scrapes exactly."""

from __future__ import annotations

from pathlib import Path

import pytest
import requests

from tests.services import have, prometheus, replay_metrics_server

DATA = Path(__file__).parent / "data" / "metrics"


def test_replay_serves_recorded_text_verbatim_and_advances():
    texts = [(DATA / "metrics-normal-1.txt").read_text(), (DATA / "metrics-normal-idle.txt").read_text()]
    with replay_metrics_server(texts, models={"data": [{"id": "tiny-llama", "max_model_len": 2048}]}) as (
        url,
        ctl,
    ):
        r = requests.get(url + "/metrics", timeout=5)
        assert r.status_code == 200 and r.text == texts[0]
        assert r.headers["Content-Type"].startswith("text/plain; version=0.0.4")
        assert ctl.advance() == 1 and ctl.advance() == 1  # stays on the last snapshot
        assert requests.get(url + "/metrics", timeout=5).text == texts[1]
        assert requests.get(url + "/v1/models", timeout=5).json()["data"][0]["max_model_len"] == 2048
        assert requests.get(url + "/nope", timeout=5).status_code == 404
        ctl.down = True
        assert requests.get(url + "/metrics", timeout=5).status_code == 503
        assert ctl.requests == 3


def test_replay_per_request_mode():
    with replay_metrics_server(["a 1\n", "a 2\n"], mode="per_request") as (url, _):
        assert [requests.get(url + "/metrics", timeout=5).text for _ in range(3)] == [
            "a 1\n",
            "a 2\n",
            "a 2\n",
        ]
    with pytest.raises(ValueError):
        with replay_metrics_server([]):
            pass


@pytest.mark.skipif(not have("prometheus"), reason="Debian prometheus not installed")
def test_prometheus_that_cannot_start_raises_with_its_log(tmp_path: Path):
    with pytest.raises(RuntimeError) as e:
        with prometheus(
            "scrape_configs:\n  - job_name: x\n    scrape_interval: notaduration\n", tmp=tmp_path
        ):
            pass
    assert "prometheus exited" in str(e.value) and "notaduration" in str(e.value)
