"""A folder of saved /metrics snapshots with one failed scrape in it (issue 29): `diagnose` reads the
log and every other snapshot, and names the one it left out in one line; it is not a failure (exit
0). A snapshot named with --metrics is still an error (the user asked for that file)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from typer.testing import CliRunner

from observe.cli import app

NORMAL = Path(__file__).resolve().parent.parent / "examples" / "normal"


def _folder(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "normal"
    shutil.copytree(NORMAL, folder)
    stamp = (NORMAL / "metrics-normal-1.txt").read_text().splitlines()[0]  # the recorder's own header
    bad = folder / "metrics-normal-9.txt"
    bad.write_text(f"{stamp}\ncurl: (7) Failed to connect to 127.0.0.1 port 8000: Connection refused\n")
    return folder, bad


def test_one_failed_scrape_is_named_and_the_rest_read(tmp_path: Path) -> None:
    clean = CliRunner().invoke(app, ["diagnose", str(NORMAL), "--format", "json", "--no-progress"])
    folder, bad = _folder(tmp_path)
    r = CliRunner().invoke(app, ["diagnose", str(folder), "--format", "json", "--no-progress"])
    assert r.exit_code == 0, r.output
    doc = json.loads(r.stdout)
    read = json.loads(clean.stdout)["instances"][0]["metrics_snapshots"]
    assert read > 0 and doc["instances"][0]["metrics_snapshots"] == read  # every good one read
    left = [u for u in doc["unreadable"] if u["path"] == str(bad)]
    assert [u["kind"] for u in left] == ["bad_snapshot"]
    text = CliRunner().invoke(app, ["diagnose", str(folder), "--no-progress"])
    assert text.exit_code == 0 and "Traceback" not in text.output
    assert sum(str(bad) in ln for ln in text.output.splitlines()) == 1  # one line names it


def test_a_failed_scrape_named_with_metrics_is_still_an_error(tmp_path: Path) -> None:
    folder, bad = _folder(tmp_path)
    r = CliRunner().invoke(
        app, ["diagnose", str(folder / "vllm.log"), "--metrics", str(bad), "--no-progress"]
    )
    assert r.exit_code != 0 and "Traceback" not in r.output
