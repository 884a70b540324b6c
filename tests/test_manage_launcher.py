"""The launcher with a real process tree: a stand-in server (a python parent that answers /health
and /metrics and spawns children, as vLLM's API server spawns its engine core) whose children
outlive it. The launcher must end them once the parent has exited, by stop or by crash; plus the
/metrics snapshot and the flag probe's isolation from observe."""

from __future__ import annotations

import ast
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from observe import manage
from observe.errors import TargetError
from observe.flags import probe
from tests.realvllm import free_port
from tests.standin import HANDLER

METRICS = Path(__file__).parent / "data" / "metrics" / "metrics-normal-1.txt"

SERVER = (
    r"""
import http.server, os, signal, subprocess, sys, threading, time

args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
body = open(args["--metrics"], "rb").read()
# an engine core that ignores SIGTERM, and a worker that spawns a grandchild
# (each sleeps an hour: one that is gone when the launcher returns was ended by it)
engine = subprocess.Popen([sys.executable, "-c",
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(3600)"])
worker = subprocess.Popen([sys.executable, "-c",
    "import subprocess, sys, time; g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(3600)']);"
    "print('grandchild', g.pid, flush=True); time.sleep(3600)"], stdout=open(args["--pids"] + ".g", "w"))

"""
    + HANDLER
    + r"""

srv = http.server.ThreadingHTTPServer(("127.0.0.1", int(args["--port"])), H)
threading.Thread(target=srv.serve_forever, daemon=True).start()
while not open(args["--pids"] + ".g").read().strip():
    time.sleep(0.05)
grandchild = int(open(args["--pids"] + ".g").read().split()[1])
with open(args["--pids"], "w") as f:
    f.write(" ".join(map(str, [engine.pid, worker.pid, grandchild])))
print("server up", flush=True)
signal.signal(signal.SIGTERM, lambda *_: os._exit(0))  # a clean exit that leaves its children
if args["--mode"] == "crash":
    time.sleep(1.0)
    os._exit(1)
time.sleep(3600)
"""
)


def _running(pid: int) -> bool:
    """Alive and not a zombie (an ended child of a dead parent may wait for its reaper)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"


@pytest.fixture(autouse=True)
def _no_leftovers(tmp_path: Path):
    """Whatever a failing test leaves of the stand-in's children is killed at teardown."""
    yield
    pids = tmp_path / "pids"
    for pid in pids.read_text().split() if pids.exists() else []:
        if _running(int(pid)):
            os.kill(int(pid), signal.SIGKILL)


def _launcher(tmp_path: Path, mode: str) -> tuple[manage.Launcher, Path]:
    script = tmp_path / "server.py"
    script.write_text(SERVER)
    pids = tmp_path / "pids"
    flags = {"--port": str(free_port()), "--mode": mode, "--pids": str(pids), "--metrics": str(METRICS)}
    spec = manage.LaunchSpec(program=(sys.executable, str(script)), form="serve", model=None, flags=flags)
    return manage.Launcher(spec, tmp_path / "runs", child_grace=1.0), pids


def _children(pids: Path) -> list[int]:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if pids.exists() and pids.read_text().strip():
            return [int(p) for p in pids.read_text().split()]
        time.sleep(0.05)
    raise AssertionError("the stand-in server wrote no child pids")


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_stop_ends_the_children_a_cleanly_exited_server_leaves(tmp_path: Path):
    launcher, pids = _launcher(tmp_path, "serve")
    launcher.start(timeout=30)
    try:
        kids = _children(pids)
        assert all(_running(p) for p in kids)
        snap = launcher.snapshot("test")
        head, body = snap.read_text().split("\n", 1)
        assert head.startswith("# scraped_at ") and head.endswith(" test")
        assert body == METRICS.read_text()
    finally:
        rc = launcher.stop()  # SIGTERM, 1 s grace, SIGKILL for the one that ignores it
    assert rc == 0
    # each child would sleep for an hour: none running once stop() returned means stop ended them
    assert not [p for p in kids if _running(p)]
    assert "server up" in manage.read_log(launcher.log_path)
    assert [e["event"] for e in manage.read_history(launcher.history)] == ["start", "ready", "stop"]


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads process states from /proc")
def test_a_crash_ends_the_children_too(tmp_path: Path):
    launcher, pids = _launcher(tmp_path, "crash")
    launcher.start(timeout=30)
    kids = _children(pids)
    deadline = time.monotonic() + 30
    with pytest.raises(manage.LaunchError, match=r"stopped unexpectedly \(exit code 1\)"):
        while time.monotonic() < deadline:
            launcher.check()
            time.sleep(0.1)
    assert not [p for p in kids if _running(p)]
    assert manage.read_history(launcher.history)[-1]["event"] == "crash"


def test_save_metrics_from_a_server_that_is_down_is_one_line(tmp_path: Path):
    url = f"http://127.0.0.1:{free_port()}"
    with pytest.raises(TargetError) as ei:
        manage.save_metrics(url, tmp_path / "m.txt")
    assert str(ei.value) == f"cannot read {url}/metrics: [Errno 111] Connection refused"
    assert not (tmp_path / "m.txt").exists()


def test_the_probe_imports_only_the_standard_library_and_vllm():
    tree = ast.parse(Path(probe.__file__).read_text())
    mods = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    mods |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    tops = {m.split(".")[0] for m in mods}
    assert tops - {"vllm", "__future__"} <= set(sys.stdlib_module_names)
    assert "vllm" in tops


def test_the_probe_runs_by_path_without_vllm():
    # this interpreter has no vLLM: the probe answers one JSON line saying so, and no traceback
    cp = subprocess.run(
        [sys.executable, "-I", probe.__file__, "describe"], capture_output=True, text=True, timeout=60
    )
    line = next(ln for ln in cp.stdout.splitlines() if ln.startswith(probe.MARK))
    res = json.loads(line[len(probe.MARK) :])
    assert cp.returncode == 0 and res["error"].startswith("cannot import vLLM's argument parser")
