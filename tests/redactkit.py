"""What the redaction tests share (no test module imports another): every output a log reaches —
each `observe diagnose` report format, and each page of a live sidecar following it."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import requests
from typer.testing import CliRunner

from observe.cli import app
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import wait_until

#: every page the sidecar serves
PAGES = ("/api/diagnosis", "/metrics", "/healthz", "/")


def diagnose_report(tmp_path: Path, text: str, fmt: str) -> tuple[str, str]:
    """(the report, what the command printed) of `observe diagnose` over a log holding `text`."""
    log = tmp_path / "vllm.log"
    log.write_text(text, encoding="utf-8")
    out = tmp_path / f"report.{fmt}"
    r = CliRunner().invoke(
        app, ["diagnose", str(log), "--format", fmt, "--output", str(out), "--no-progress"]
    )
    assert r.exit_code == 0, r.stderr
    return out.read_text(encoding="utf-8"), r.stdout + r.stderr


def live_pages(tmp_path: Path, text: str, ready: Callable[[dict], bool]) -> dict[str, str]:
    """What a live sidecar (its own threads) following a log holding `text` from its start serves on
    each of PAGES once its /api/diagnosis document is `ready` (an analysis has read what is looked for)."""
    log = tmp_path / "vllm.log"
    log.write_text(text, encoding="utf-8")
    car = Sidecar(
        SidecarSettings(
            logs=[str(log)], listen_port=0, from_start=True, analyze_interval=0.3, poll_interval=0.1
        )
    ).start()

    def doc() -> dict:
        r = requests.get(car.listen_url + "/api/diagnosis", timeout=5)
        return r.json() if r.status_code == 200 else {}

    try:
        wait_until(lambda: ready(doc()), timeout=30, what="an analysis of the lines looked for")
        return {path: requests.get(car.listen_url + path, timeout=5).text for path in PAGES}
    finally:
        car.stop()
