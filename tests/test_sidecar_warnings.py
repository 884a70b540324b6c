"""The sidecar says what is wrong: vLLM unreachable, a --log glob that matches nothing — on its
warn callback (stderr in the CLI) and in /healthz, repeated at a low rate while it lasts."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests

from observe.errors import ConfigError
from observe.sidecar.config import SidecarSettings, check_url
from observe.sidecar.service import Sidecar
from tests.services import free_port, replay_metrics_server, wait_until

ROOT = Path(__file__).resolve().parents[1]
SNAP = (ROOT / "tests" / "data" / "metrics" / "metrics-normal-1.txt").read_text()


class Clock:
    def __init__(self) -> None:
        self.t = 1_000_000.0

    def __call__(self) -> float:
        return self.t


def test_unreachable_vllm_is_told_then_repeated_slowly_then_resolved() -> None:
    told: list[str] = []
    clock = Clock()
    with replay_metrics_server([SNAP]) as (url, ctl):
        car = Sidecar(SidecarSettings(vllm_url=url, warn_every=60.0), clock=clock, warn=told.append)
        ctl.down = True
        car.scrape_once()
        assert car.check_once() and len(told) == 1
        assert told[0].startswith(f"warning: cannot reach vLLM at {url}: HTTP 503")
        clock.t += 30
        car.scrape_once()
        car.check_once()
        assert len(told) == 1  # not again within warn_every
        clock.t += 31
        car.check_once()
        assert len(told) == 2 and told[1].endswith("(still)")
        ok, body = car.health()
        assert body["warnings"] == [told[0][len("warning: ") :]]
        ctl.down = False
        car.scrape_once()
        assert car.check_once() == []
        assert told[-1].startswith("resolved: cannot reach vLLM")
        assert car.health()[1]["warnings"] == []


def test_log_glob_matching_nothing(tmp_path: Path) -> None:
    told: list[str] = []
    car = Sidecar(SidecarSettings(logs=[str(tmp_path / "*.log")]), warn=told.append)
    try:
        car.check_once()
        assert told == [f"warning: --log {tmp_path / '*.log'} matches no file"]
        (tmp_path / "vllm.log").write_text("")
        assert car.check_once() == [] and told[-1].startswith("resolved: --log")
    finally:
        car.stop()


@pytest.mark.parametrize("bad", ["127.0.0.1:8000", "localhost:8000", "ftp://h/x"])
def test_url_without_http_scheme_is_refused(bad: str) -> None:
    with pytest.raises(ConfigError, match="http"):
        check_url(bad)
    with pytest.raises(ConfigError):
        SidecarSettings(vllm_url=bad)


def test_cli_sidecar_warns_on_stderr_and_in_healthz(tmp_path: Path) -> None:
    port, dead = free_port(), free_port()
    proc = subprocess.Popen(
        [
            sys.executable, "-m", "observe.cli", "sidecar",
            "--log", str(tmp_path / "*.log"),
            "--vllm-url", f"http://127.0.0.1:{dead}",
            "--listen", f"127.0.0.1:{port}",
            "--scrape-interval", "1s",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    try:
        body = wait_until(
            lambda: (lambda b: b if len(b.get("warnings", [])) == 2 else None)(
                requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).json()
            ),
            timeout=30,
            what="two warnings in /healthz",
        )
        assert any("matches no file" in w for w in body["warnings"])
        assert any(f"cannot reach vLLM at http://127.0.0.1:{dead}" in w for w in body["warnings"])
        time.sleep(3)  # the first stderr check comes one scrape interval + timeout after start
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=20)
    assert "observe sidecar: warning: --log" in err and "observe sidecar: warning: cannot reach vLLM" in err
    r = subprocess.run(
        [sys.executable, "-m", "observe.cli", "sidecar", "--vllm-url", "127.0.0.1:8000"],
        capture_output=True, text=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
    )  # fmt: skip
    assert r.returncode == 2 and "http://127.0.0.1:8000" in r.stderr and "Traceback" not in r.stderr
