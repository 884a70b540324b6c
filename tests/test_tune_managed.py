"""`observe tune --run-dir DIR`: the client's refusals (one line, nothing touched) and DIR/session.json's
lifecycle under `observe run`'s session. The tune itself on a real vLLM: test_tune_managed_realvllm.py.

The session here runs a stand-in server (a python that answers /health and /metrics with a recorded
real vLLM scrape), enough for the launcher; nothing here judges a tune.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from observe import errors, manage
from observe.cli import command
from observe.manage import tunerequest as tr
from observe.manage.spec import LaunchSpec
from observe.settings import Settings
from observe.tune import managed
from tests import realvllm as rv
from tests.standin import HANDLER

METRICS = Path(__file__).parent / "data" / "metrics" / "metrics-normal-1.txt"

SERVER = (
    r"""
import http.server, sys
args = dict(zip(sys.argv[2::2], sys.argv[3::2]))
body = open(sys.argv[1], "rb").read()
"""
    + HANDLER
    + r"""
http.server.ThreadingHTTPServer(("127.0.0.1", int(args["--port"])), H).serve_forever()
"""
)


def _cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(command(), list(args), prog_name="observe")
    return r.exit_code, r.stdout, r.stderr


def _dead_pid() -> int:
    p = subprocess.Popen([sys.executable, "-c", "pass"])
    p.wait()
    return p.pid


def _session(run_dir: Path, pid: int, argv: list[str] | None = None) -> None:
    tr.write_atomic(
        run_dir / tr.SESSION,
        {
            "pid": pid,
            "url": "http://127.0.0.1:1",
            "argv": argv or ["vllm", "serve", "m"],
            "command": "vllm serve m",
        },
    )


def _untouched(run_dir: Path) -> None:
    assert not (run_dir / tr.REQUEST).exists() and not (run_dir / tr.TUNE).exists()


# ---------------------------------------------------------------- the client refuses, one line


def test_no_session_file_is_one_line_that_says_how_to_start_one(tmp_path: Path) -> None:
    rc, out, err = _cli("tune", "--run-dir", str(tmp_path))
    assert rc == errors.EXIT_TARGET and out == ""
    assert err.strip().splitlines() == [
        f"observe: error: no `observe run` manages {tmp_path} (no {tmp_path / 'session.json'}): "
        f"start one with `observe run --run-dir {tmp_path} -- vllm serve MODEL [FLAGS]`"
    ]
    _untouched(tmp_path)


def test_a_session_whose_process_is_gone_is_one_line(tmp_path: Path) -> None:
    pid = _dead_pid()
    _session(tmp_path, pid)
    rc, _, err = _cli("tune", "--run-dir", str(tmp_path))
    assert rc == errors.EXIT_TARGET and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert f"its session (pid {pid}) has ended" in err and "start one with `observe run" in err
    _untouched(tmp_path)


def test_a_session_file_that_is_not_one_is_one_line(tmp_path: Path) -> None:
    (tmp_path / tr.SESSION).write_text("{not json")
    rc, _, err = _cli("tune", "--run-dir", str(tmp_path))
    assert rc == errors.EXIT_TARGET and "is not an observe run session file" in err
    _untouched(tmp_path)


@pytest.mark.parametrize(
    ("args", "words"),
    [
        (["--trials", "0"], "--trials must be at least 1"),
        (["--repeats", "1"], "--repeats must be at least 2"),
        (["--time-budget", "0"], "--time-budget must be more than 0 seconds"),
        (["--num-prompts", "0"], "--num-prompts must be at least 1"),
        (["--objective", "speed"], "--objective must be one of throughput, goodput"),
        (
            ["--", "vllm", "serve", "m"],
            "--run-dir tunes the vLLM `observe run` manages there: give no command",
        ),
        (["--out", "elsewhere"], "--out does not apply with --run-dir: the tune's record goes to"),
        (["--echo"], "--echo/--quiet does not apply with --run-dir"),
    ],
)
def test_bad_options_are_refused_as_observe_tune_refuses_them_and_nothing_is_asked(
    tmp_path: Path, args: list[str], words: str
) -> None:
    # the session is this very test process: a SIGUSR2 sent to it would end the test run
    _session(tmp_path, os.getpid())
    rc, out, err = _cli("tune", "--run-dir", str(tmp_path), *args)
    assert rc == errors.EXIT_USAGE and out == "" and "Traceback" not in err
    assert err.strip().splitlines() == [f"observe: error: {err.strip().removeprefix('observe: error: ')}"]
    assert words in err
    _untouched(tmp_path)


def test_a_pending_request_is_not_overwritten(tmp_path: Path) -> None:
    tr.write_request(tmp_path, {"objective": "throughput"})
    before = (tmp_path / tr.REQUEST).read_text()
    with pytest.raises(errors.ConfigError, match="a tune request is already waiting"):
        tr.write_request(tmp_path, {"objective": "goodput"})
    assert (tmp_path / tr.REQUEST).read_text() == before


@pytest.mark.realvllm
def test_a_workload_the_installed_client_rejects_is_refused_before_the_session_is_asked(
    tmp_path: Path,
) -> None:
    py = rv.require_vllm()
    argv = rv.serve_argv(py, rv.tiny_model(py), rv.free_port(), [])
    _session(tmp_path, os.getpid(), argv)
    r = subprocess.run(
        [sys.executable, "-m", "observe.cli", "tune", "--run-dir", str(tmp_path), "--dataset", "sharegpt"],
        capture_output=True, text=True, env=rv.vllm_env(), cwd=rv.ROOT, timeout=400,
    )  # fmt: skip
    assert r.returncode == errors.EXIT_USAGE, r.stderr
    assert "vllm bench serve rejects the workload" in r.stderr and "Traceback" not in r.stderr
    _untouched(tmp_path)


# ---------------------------------------------------------------- the client follows the session


def test_follow_returns_the_report_that_answers_its_request(tmp_path: Path) -> None:
    rid = tr.write_request(tmp_path, {"objective": "throughput"})
    assert tr.take_request(tmp_path)["id"] == rid and not (tmp_path / tr.REQUEST).exists()
    trial = {
        "trial": 1,
        "change": None,
        "objective": {"mean": 12.5},
        "outcome": "baseline",
        "why": "the start",
    }
    (tmp_path / tr.TUNE / "history.jsonl").write_text(json.dumps(trial) + "\n")
    tr.write_atomic(tmp_path / tr.TUNE / "report.json", {"schema": "x", "trials": [trial]})
    tr.finish(tmp_path, rid)
    lines: list[str] = []
    doc = managed.follow(tmp_path, rid, os.getpid(), notify=lines.append, sleep=lambda s: None)
    assert doc["trials"] == [trial]
    assert lines == ["trial 1: start: 12.50 — baseline: the start"]


def test_follow_reports_the_sessions_error_with_its_exit_code(tmp_path: Path) -> None:
    rid = tr.write_request(tmp_path, {})
    tr.take_request(tmp_path)
    tr.finish(tmp_path, rid, error="vLLM failed to start (exit code 1): boom", code=errors.EXIT_LAUNCH)
    with pytest.raises(managed.TuneFailed, match="boom") as e:
        managed.follow(tmp_path, rid, os.getpid(), notify=lambda m: None, sleep=lambda s: None)
    assert e.value.exit_code == errors.EXIT_LAUNCH


def test_follow_stops_with_one_line_when_the_session_dies(tmp_path: Path) -> None:
    rid = tr.write_request(tmp_path, {})
    with pytest.raises(errors.TargetError, match=r"ended before the tune finished"):
        managed.follow(tmp_path, rid, _dead_pid(), notify=lambda m: None, sleep=lambda s: None)


def test_ctrl_c_before_the_session_took_the_request_withdraws_it(tmp_path: Path) -> None:
    rid = tr.write_request(tmp_path, {})

    def ctrl_c(_: float) -> None:
        raise KeyboardInterrupt

    with pytest.raises(managed.TuneFailed, match="nothing was changed") as e:
        managed.follow(tmp_path, rid, os.getpid(), notify=lambda m: None, sleep=ctrl_c)
    assert e.value.exit_code == errors.EXIT_INTERRUPTED
    _untouched(tmp_path)


def test_ctrl_c_during_the_tune_asks_the_session_to_stop_and_still_waits_for_the_report(
    tmp_path: Path,
) -> None:
    # a stand-in session process that takes SIGUSR2 as `observe run` does: without dying
    session = subprocess.Popen(
        [sys.executable, "-c", "import signal, time; signal.signal(signal.SIGUSR2, signal.SIG_IGN); "
         "print('ready', flush=True); time.sleep(120)"],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert session.stdout is not None and session.stdout.readline().strip() == "ready"
    try:
        rid = tr.write_request(tmp_path, {})
        tr.take_request(tmp_path)
        lines: list[str] = []
        calls = []

        def sleep(_: float) -> None:
            calls.append(1)
            if len(calls) == 1:
                raise KeyboardInterrupt
            assert tr.cancelled(tmp_path, rid)  # the session's watcher reads this
            tr.write_atomic(tmp_path / tr.TUNE / "report.json", {"stopped": "interrupted (Ctrl-C)"})
            tr.finish(tmp_path, rid)

        doc = managed.follow(tmp_path, rid, session.pid, notify=lines.append, sleep=sleep)
        assert doc == {"stopped": "interrupted (Ctrl-C)"}
        assert any("asked the session to stop the tune" in m for m in lines)
        assert session.poll() is None
    finally:
        session.kill()
        session.wait()


def test_an_earlier_tune_is_kept_beside_the_new_one(tmp_path: Path) -> None:
    first = tr.write_request(tmp_path, {})
    tr.take_request(tmp_path)
    tr.finish(tmp_path, first)
    second = tr.write_request(tmp_path, {})
    tr.take_request(tmp_path)
    assert tr.serving(tmp_path, second) and tr.result(tmp_path, second) is None
    assert tr.result(tmp_path, first) is None
    assert json.loads((tmp_path / f"tune-{first}" / tr.RESULT).read_text())["id"] == first


# ---------------------------------------------------------------- the session's side


def _spec(port: int, *flags: str) -> LaunchSpec:
    extra = dict(zip(flags[::2], flags[1::2]))
    return LaunchSpec(
        program=(sys.executable, "-c", SERVER, str(METRICS)), form="api_server", model="m",
        flags={"--port": str(port), **extra},
    )  # fmt: skip


def _wait(cond, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not cond():
        assert time.monotonic() < deadline, f"{what} within {seconds} s"
        time.sleep(0.1)


def test_session_json_is_written_at_each_launch_and_removed_at_the_end(tmp_path: Path) -> None:
    port = rv.free_port()
    launcher = tr.SessionLauncher(_spec(port), tmp_path)
    stop = threading.Event()
    t = threading.Thread(
        target=manage.run_session,
        args=(launcher,),
        kwargs=dict(
            startup_timeout=60, notify=lambda m: None, stop=stop, decide=lambda p: False, snapshot_every=0
        ),
    )
    t.start()
    try:
        _wait(lambda: (tmp_path / tr.SESSION).exists(), "session.json")
        first = json.loads((tmp_path / tr.SESSION).read_text())
        assert first["pid"] == os.getpid() and first["url"] == f"http://127.0.0.1:{port}"
        assert first["launch_dir"] == str(tmp_path / "001") and first["argv"] == launcher.spec.argv
        assert tr.live_session(tmp_path)["pid"] == os.getpid()
        launcher.restart(_spec(port, "--max-num-seqs", "8"), timeout=60)  # as --apply or a tune's trial does
        second = json.loads((tmp_path / tr.SESSION).read_text())
        assert second["launch_dir"] == str(tmp_path / "002") and second["flags"]["--max-num-seqs"] == "8"
        assert second["started_at"] == first["started_at"]
        assert not list(tmp_path.glob(".session.json.*"))  # written atomically: no temporary left
    finally:
        stop.set()
        t.join(timeout=60)
    assert not t.is_alive() and not launcher.alive()
    assert not (tmp_path / tr.SESSION).exists()


def test_a_bad_request_is_answered_with_an_error_and_the_instance_keeps_running(tmp_path: Path) -> None:
    port = rv.free_port()
    launcher = tr.SessionLauncher(_spec(port), tmp_path)
    launcher.start(timeout=60)
    try:
        rid = tr.write_request(tmp_path, {"objective": "throughput", "budget": {"trials": 0}, "workload": {}})
        serve = managed.server(tmp_path, flags=None, notify=lambda m: None, stop=threading.Event())
        assert serve(launcher) is True
        res = tr.result(tmp_path, rid)
        assert res is not None and res["ok"] is False and "--trials must be at least 1" in res["error"]
        assert res["exit_code"] == errors.EXIT_USAGE
        assert launcher.alive() and launcher.launch_dir == tmp_path / "001"  # not relaunched
        assert serve(launcher) is False  # nothing pending
    finally:
        launcher.stop()


def test_settings_travel_in_the_request_unchanged() -> None:
    from observe import settings as s
    from observe import settingsfile

    custom = Settings(ttft_slo_seconds=0.25)
    assert s.from_yaml(settingsfile.to_yaml(custom)) == custom
