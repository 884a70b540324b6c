"""Issue 32, class F: a KV cache running full while the engine serves is a tuning problem — a warning,
as its alert VLLMKVCacheSaturated is — not a failure; critical only when requests fail with it (a
preemption storm, HTTP 5xx). The KV plan still answers a cache full in most samples with requests
waiting (``data.queued``), whatever the severity. Real logs (sources in tests/data/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import pipeline, report
from tests.diagnosekit import suggestions

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "data"


def _diagnose(paths: list[Path], metrics: tuple[Path, ...] = ()) -> dict:
    return report.to_dict(pipeline.diagnose_paths(paths, metrics))


def _sat(d: dict) -> dict:
    (f,) = [f for f in d["findings"] if f["id"] == "kv_cache_saturated"]
    return f


@pytest.mark.parametrize(
    ("log", "lever"),
    [
        ("eval32b/024.log", None),  # 0.4.2: 99.6-100 % with 740-768 waiting
        ("eval32b/027.log", None),  # 0.1's "Throughput:" lines: 99.2-99.9 % with 8-10 waiting
        ("corpus/003-v1-apiserver-prefix-mtp-kv-saturated.log", "--gpu-memory-utilization"),
        ("corpus/017-v1-bench-throughput-kv100-waiting475.log", None),
    ],
)
def test_a_saturated_cache_while_serving_is_a_warning_that_keeps_its_kv_plan(
    log: str, lever: str | None
) -> None:
    d = _diagnose([DATA / log])
    f = _sat(d)
    assert f["severity"] == "warning" and f["data"]["queued"] is True
    assert not [x for x in d["findings"] if x["severity"] == "critical"]
    if lever:
        assert lever in suggestions(d)  # the KV plan answers it: full, with requests waiting


def test_a_saturated_cache_with_a_preemption_storm_is_critical() -> None:
    """examples/kv-pressure with its /metrics snapshots: vllm:num_preemptions_total at 1,429."""
    ex = ROOT / "examples" / "kv-pressure"
    d = _diagnose([ex / "vllm.log"], tuple(sorted(ex.glob("metrics-kv-pressure-*.txt"))))
    assert _sat(d)["severity"] == "critical"
    assert _sat(_diagnose([ex / "vllm.log"]))["severity"] == "warning"  # the log alone shows no storm


def test_the_storm_is_the_settings_preemption_storm() -> None:
    """The same 1,429 preemptions are no storm where Settings.preemption_storm asks for more."""
    from observe.settings import Settings

    ex = ROOT / "examples" / "kv-pressure"
    metrics = tuple(sorted(ex.glob("metrics-kv-pressure-*.txt")))
    d = report.to_dict(
        pipeline.diagnose_paths([ex / "vllm.log"], metrics, settings=Settings(preemption_storm=5000))
    )
    assert _sat(d)["severity"] == "warning"


@pytest.mark.parametrize("log", ["024", "025", "026"])
def test_one_preemption_is_noted_with_no_flag_change(log: str) -> None:
    """eval32e 024-026: one preemption each (total_num_cumulative_preemption=1; 026 on each of its workers) is
    slow, not a pattern: the preemptions finding stays (a warning), the advice is a note and no KV lever —
    until Settings.preemption_pattern says one is enough."""
    from observe.settings import Settings

    path = DATA / "eval32e" / f"{log}.log"
    d = _diagnose([path])
    (f,) = [f for f in d["findings"] if f["id"] == "preemptions"]
    assert (f["severity"], f["data"]["total"]) == ("warning", 1)
    assert not d["recommendations"]
    (note,) = [n["text"] for n in d["advice_notes"] if n["finding_ids"] == ["preemptions"]]
    assert "1 preemption seen" in note and "not a pattern worth a flag change" in note
    one = report.to_dict(pipeline.diagnose_paths([path], settings=Settings(preemption_pattern=1)))
    assert {"--gpu-memory-utilization", "--kv-cache-dtype"} & {r["flag"] for r in one["recommendations"]}
