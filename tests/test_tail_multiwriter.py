"""Several processes writing one file through their own RotatingFileHandler, as vLLM's API server, engine
core and workers do with components/vllm-logging's logging.json: each process rotates when ITS
descriptor's file is full, so a process that logs rarely keeps writing into a file another process has
already rotated away (and then rotates the live file under the busy one). The follower keeps rotated
files it has read open while they are still linked and reads what lands in them late: every line
written is counted once."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from observe.sidecar import tail
from observe.sidecar.tail import Follower

ROOT = Path(__file__).resolve().parents[1]
HANDLER = next(
    h
    for h in json.loads((ROOT / "deploy/kubernetes/components/vllm-logging/logging.json").read_text())[
        "handlers"
    ].values()
    if h["class"] == "logging.handlers.RotatingFileHandler"
)

WRITER = r"""
import json, logging, logging.config, os, sys, time
w = json.loads(sys.argv[1])  # name, n, every, pad, handler, brackets, waits: {line: file it waits for}
logging.config.dictConfig({
    "version": 1, "disable_existing_loggers": False,
    "formatters": {"plain": {"format": w["brackets"][0] + "%(processName)s pid=%(process)07d" + w["brackets"][1] + " %(levelname)s %(message)s"}},
    "handlers": {"file": dict(w["handler"], formatter="plain")},
    "loggers": {"vllm": {"handlers": ["file"], "level": "INFO", "propagate": False}},
})
log = logging.getLogger("vllm.x")
for i in range(w["n"]):
    while str(i) in w["waits"] and not os.path.exists(w["waits"][str(i)]):
        time.sleep(0.01)
    log.info("%s line %06d %s", w["name"], i, "x" * w["pad"])
    time.sleep(w["every"])
"""


def start(name: str, n: int, every: float, handler: dict, *, pad: int = 60, brackets: str = "()",
          waits: dict[int, Path] | None = None) -> subprocess.Popen:  # fmt: skip
    """A process logging n lines of `name` through its own RotatingFileHandler `handler` (line i waits for
    the file waits[i], if any); "(name pid=N)" heads each line, as vLLM's formatter does, or "<…>"."""
    spec = {"name": name, "n": n, "every": every, "pad": pad, "handler": handler, "brackets": brackets,
            "waits": {str(i): str(f) for i, f in (waits or {}).items()}}  # fmt: skip
    return subprocess.Popen([sys.executable, "-c", WRITER, json.dumps(spec)])


def test_two_processes_rotating_one_file_lose_and_double_nothing(tmp_path: Path):
    path = tmp_path / "vllm.log"
    busy_n, rare_n, idle_n = 3000, 60, 6
    rotated, busy_done = tmp_path / "rotated", tmp_path / "busy-done"
    handler = dict(HANDLER, filename=str(path), maxBytes=8192)
    got: list[str] = []
    # the follower first: the file it meets later is read from its first byte (one there already
    # would be read from its end, and a loaded machine can let the writers start first)
    with Follower([str(path)], use_watchdog=False, poll_interval=0.01) as f:
        procs = [
            start("busy", busy_n, 0.0005, handler),
            start("rare", rare_n, 0.03, handler),
            # like vLLM's engine core: a line at start; one once the file has rotated (so it rolls
            # over into a file of its own, then falls silent); the rest at shutdown, long after that
            # file was rotated past backupCount and deleted
            start("idle", idle_n, 0.0, handler, waits={1: rotated, 2: busy_done}),
        ]
        while any(p.poll() is None for p in procs):
            if f.stats.rotations >= 2:
                rotated.touch()
            if procs[0].poll() is not None and procs[1].poll() is not None:
                busy_done.touch()
            got.extend(ln.text for ln in f.poll())
            time.sleep(0.005)
        deadline = time.monotonic() + 30  # wait for the condition (all lines), not for a time
        while len(got) < busy_n + rare_n + idle_n and time.monotonic() < deadline:
            got.extend(ln.text for ln in f.poll())
            time.sleep(0.01)
        got.extend(ln.text for ln in f.poll())
        rotations = f.stats.rotations
    assert all(p.returncode == 0 for p in procs)
    assert rotations >= 5, "the file must have rotated for this to test anything"
    lines = [t.split(" INFO ", 1)[1].rsplit(" ", 1)[0] for t in got]
    expected = [
        f"{name} line {i:06d}"
        for name, n in (("busy", busy_n), ("rare", rare_n), ("idle", idle_n))
        for i in range(n)
    ]
    assert len(lines) == len(set(lines)), "a line was read twice"
    assert sorted(lines) == sorted(expected), f"lost: {sorted(set(expected) - set(lines))[:10]}"


@pytest.mark.parametrize("brackets", ["()", "<>"], ids=["named", "unnamed"])
def test_a_quiet_writers_start_up_file_outlives_more_rotations_than_the_follower_keeps(
    tmp_path: Path, brackets: str
) -> None:
    """vLLM's engine core writes its start-up lines into the first file, which the API server then fills
    up to a slack of less than one of its (long, request-logging) lines, and writes nothing more until
    its shutdown lines, short enough to fit in that slack: they land in the first file, long rotated
    away. By then the API server has rotated more files away than the follower keeps open
    (_MAX_LINGER), all of them only its own, and smaller than the first: the follower lets those go
    (their one writer writes newer files), never the first. Sizes are exact: the busy writer's lines
    are 1,001 bytes, the quiet one's 50, so the first file ends at 50 + 8 × 1,001 = 8,058 bytes and
    its two late lines fit below 8,192; every other file ends at 8,008 (the old rule, fullest first,
    let the first go and lost the two). A quiet writer whose lines do not name it ("<…>", not vLLM's
    "(…)") is one the follower cannot know has left: the first file is kept just the same."""
    path = tmp_path / "vllm.log"
    # backupCount high: a generation the follower is slow to meet (a loaded machine) is not deleted
    # meanwhile; one it let go is never read again, deleted or not, so the scenario is the same
    handler = dict(HANDLER, filename=str(path), maxBytes=8192, backupCount=1000)
    busy_done = tmp_path / "busy-done"
    rollovers = tail._MAX_LINGER + 8  # the busy writer's, each after 8 lines
    busy_n = 8 * (rollovers + 1)

    got: list[str] = []
    with Follower([str(path)], use_watchdog=False, poll_interval=0.01) as f:
        quiet = start("quiet", 3, 0.0, handler, pad=0, brackets=brackets, waits={1: busy_done})
        deadline = time.monotonic() + 30
        while not got and time.monotonic() < deadline:  # the follower has read the quiet one's first line
            got.extend(ln.text for ln in f.poll())
            time.sleep(0.01)
        busy = start("busy", busy_n, 0.003, handler, pad=952)
        while quiet.poll() is None:
            if busy.poll() is not None:
                busy_done.touch()
            got.extend(ln.text for ln in f.poll())
            time.sleep(0.002)
        while len(got) < busy_n + 3 and time.monotonic() < deadline + 60:
            got.extend(ln.text for ln in f.poll())
            time.sleep(0.01)
    assert busy.returncode == 0 and quiet.returncode == 0
    lengths = {t.split(" INFO ", 1)[1].split()[0]: len(t) + 1 for t in got}
    assert lengths == {"quiet": 50, "busy": 1001}, lengths  # the sizes the scenario rests on
    lines = sorted(t.split(" INFO ", 1)[1][:17] for t in got)
    assert lines == sorted(
        [f"busy line {i:06d} " for i in range(busy_n)] + [f"quiet line {i:06d}" for i in range(3)]
    )
    files = len(list(tmp_path.glob("vllm.log*")))  # backupCount 1000: every generation is still there
    assert files == rollovers + 1, (
        "the quiet writer rolled over: its late lines missed the first file's slack"
    )
