"""`observe diagnose` on the advice scenarios recorded from a real vLLM (examples/seq-bound,
prefill-bound, shared-prefix; tools/realvllm/record_scenarios.sh, flags in scenarios.json).

Each test reads what the recording shows (stats lines, /metrics snapshots) and checks that the
diagnosis says the same, and that the advice answers what the recording shows.
"""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path

from observe import pipeline
from observe.metrics import metricmath as mm

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
SCENARIOS = json.loads((ROOT / "tools" / "realvllm" / "scenarios.json").read_text())


@cache
def _diag(name: str):
    d = pipeline.diagnose_paths([EXAMPLES / name])
    assert len(d.instances) == 1, d.instances
    return d.instances[0]


def _ids(name: str) -> set[str]:
    return {f.id for f in _diag(name).findings}


def _recs(name: str) -> dict:
    return {r.flag: r for r in _diag(name).recommendations}


def _flag(name: str, flag: str) -> int:
    """The value the scenario launched vLLM with (scenarios.json), as a number."""
    flags = SCENARIOS[name]["flags"]
    return int(flags[flags.index(flag) + 1])


def _snapshots(name: str):
    snaps = [pipeline.read_snapshot(p) for p in (EXAMPLES / name).glob("metrics-*.txt")]
    return sorted((s for s in snaps if s.samples and s.at), key=lambda s: s.at)


def _prefix_hit_rate(name: str) -> float:
    """Prefix-cache hits / queries between the first and the last snapshot (counters)."""
    s = _snapshots(name)
    q = mm.value(s[-1], "vllm:prefix_cache_queries_total") - mm.value(s[0], "vllm:prefix_cache_queries_total")
    h = mm.value(s[-1], "vllm:prefix_cache_hits_total") - mm.value(s[0], "vllm:prefix_cache_hits_total")
    assert q > 0, f"{name}: no prefix-cache queries between the snapshots"
    return h / q


# ------------------------------------------------------------------ seq-bound
def test_seq_bound_recording_is_what_it_claims() -> None:
    i = _diag("seq-bound")
    cap = _flag("seq-bound", "--max-num-seqs")
    assert i.config.max_num_seqs == cap
    assert i.stats["max_running"] == cap and i.stats["max_waiting"] > cap  # queue behind the cap
    assert i.stats["max_kv_cache_usage_pct"] < 10  # while the KV cache has room


def test_seq_bound_diagnosis_names_the_cap_and_raises_it() -> None:
    ids = _ids("seq-bound")
    assert "queue_seq_bound" in ids
    assert not ids & {"kv_cache_saturated", "queue_memory_bound", "preemptions", "preemptions_likely"}
    r = _recs("seq-bound").get("--max-num-seqs")
    assert r is not None and int(r.suggested) > _flag("seq-bound", "--max-num-seqs")
    assert "--kv-cache-memory-bytes" not in _recs("seq-bound")  # the cache is not the problem


def test_seq_bound_advice_admits_the_queue_seen() -> None:
    """The most running + waiting of one stats line (worked out here from the log), at least ×2
    (Settings.seq_step_min_factor); the demand and the KV room per request are both measured (the
    cache under 10 % full), so the step is not capped at ×4 (seq_step_max_factor)."""
    i = _diag("seq-bound")
    log = (EXAMPLES / "seq-bound" / "vllm.log").read_text()
    at_once = max(int(r) + int(w) for r, w in re.findall(r"Running: (\d+) reqs, Waiting: (\d+) reqs", log))
    assert at_once <= i.stats["max_running"] + i.stats["max_waiting"]
    cap = _flag("seq-bound", "--max-num-seqs")
    assert int(_recs("seq-bound")["--max-num-seqs"].suggested) == max(2 * cap, at_once)


# -------------------------------------------------------------- prefill-bound
def test_prefill_bound_recording_is_what_it_claims() -> None:
    i = _diag("prefill-bound")
    assert i.config.max_num_batched_tokens == _flag("prefill-bound", "--max-num-batched-tokens")
    # requests wait with the KV cache nearly empty and Running below --max-num-seqs
    assert i.stats["max_waiting"] > 0 and i.stats["max_kv_cache_usage_pct"] < 10
    assert i.stats["max_running"] < _flag("prefill-bound", "--max-num-seqs")


def test_prefill_bound_diagnosis_sees_the_queue_with_room() -> None:
    ids = _ids("prefill-bound")
    assert "queue_prefill_bound" in ids
    assert not ids & {"queue_seq_bound", "kv_cache_saturated", "preemptions"}
    assert "--max-num-seqs" not in _recs("prefill-bound")  # the cap is not what holds them back


def test_prefill_bound_advice_raises_batched_tokens_with_its_itl_cost() -> None:
    r = _recs("prefill-bound").get("--max-num-batched-tokens")
    assert r is not None and int(r.suggested) > _flag("prefill-bound", "--max-num-batched-tokens")
    text = f"{r.reason} {r.expected_effect or ''}".lower()
    assert "inter-token" in text or "itl" in text


# -------------------------------------------------------------- shared-prefix
def test_shared_prefix_hits_and_no_rarely_hits_finding() -> None:
    assert _prefix_hit_rate("shared-prefix") >= 0.9
    i = _diag("shared-prefix")
    assert i.stats["mean_prefix_cache_hit_pct"] >= 90
    assert "low_prefix_cache_hit_rate" not in _ids("shared-prefix")


def test_shared_prefix_is_healthy_and_left_alone() -> None:
    i = _diag("shared-prefix")
    assert not [f.id for f in i.findings if f.severity in ("warning", "critical")]
    assert i.recommendations == []


def test_random_prompts_do_rarely_hit() -> None:
    # the other two scenarios send random prompts: there the finding is right
    for name in ("seq-bound", "prefill-bound"):
        assert _prefix_hit_rate(name) < 0.1
        assert "low_prefix_cache_hit_rate" in _ids(name)
