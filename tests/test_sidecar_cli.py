"""`observe sidecar` as a process: serves, and shuts down cleanly on SIGTERM (exit 0) and SIGINT (130)."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from tests.services import free_port, wait_until

LINE = (
    (Path(__file__).parent / "data" / "tail" / "017-v1-bench-throughput-kv100-waiting475.log")
    .read_text()
    .strip()
)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
def test_cli_sidecar_serves_then_exits_on_signal(tmp_path: Path, sig: int) -> None:
    log = tmp_path / "vllm.log"
    log.write_text("")
    port = free_port()
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "observe.cli",
            "sidecar",
            "--log",
            str(tmp_path / "*.log"),
            "--listen",
            f"127.0.0.1:{port}",
            "--analyze-interval",
            "1s",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        url = f"http://127.0.0.1:{port}"

        def up() -> bool:
            try:
                return requests.get(url + "/healthz", timeout=1).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(up, timeout=30, what="sidecar listening")
        with log.open("a") as w:
            w.write(LINE + "\n")
        wait_until(
            lambda: (
                'observe_vllm_waiting_requests{engine="0"} 475.0'
                in requests.get(url + "/metrics", timeout=2).text
            ),
            timeout=30,
            what="the stats line exported",
        )
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=20)
        # the README's table: Ctrl-C (SIGINT) is 130; SIGTERM (a supervisor stopping it) is a clean 0
        assert proc.returncode == (130 if sig == signal.SIGINT else 0), err
        assert "Traceback" not in err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()


def test_cli_sidecar_bad_flags_are_one_line_errors(tmp_path: Path) -> None:
    for args, needle in (
        (["--log", "x.log", "--window", "forever"], "--window 'forever' is not a duration"),
        (["--log", "x.log", "--listen", "127.0.0.1:http"], "port 'http' is not a number"),
        ([], "nothing to watch"),
    ):
        p = subprocess.run(
            [sys.executable, "-m", "observe.cli", "sidecar", *args],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert p.returncode == 2, p.stderr
        assert needle in p.stderr
        assert "Traceback" not in p.stderr
        assert len(p.stderr.strip().splitlines()) == 1


def test_cli_sidecar_port_in_use_is_a_clear_error(tmp_path: Path) -> None:
    import socket

    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen()
    try:
        port = s.getsockname()[1]
        p = subprocess.run(
            [
                sys.executable,
                "-m",
                "observe.cli",
                "sidecar",
                "--log",
                str(tmp_path / "x.log"),
                "--listen",
                f"127.0.0.1:{port}",
            ],
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert p.returncode == 2
        assert f"cannot listen on 127.0.0.1:{port}" in p.stderr and "Traceback" not in p.stderr
    finally:
        s.close()
