"""Latency and SLOs from /metrics: inter-token latency above the SLO, TTFT spikes under bursts.
Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from observe import timeline as tl
from observe.advise import load
from observe.failures import stuck
from observe.findingids import FindingId
from observe.model import Finding
from observe.rules.base import Doc, Lever, Rule, Section
from observe.rules.context import Context
from observe.rules.context import span as _span
from observe.rules.context import when as _when

if TYPE_CHECKING:
    import pandas as pd
else:
    from observe.timeline import pd  # imported on first use


def latency(c: Context) -> list[Finding]:
    """From /metrics: inter-token latency above the SLO, TTFT spikes under bursts (prefill stutter)."""
    m = c.metrics
    if m is None:
        return []
    out = []
    itl = tl.series(m, "itl_p95")
    pad = max(60.0, 2.0 * (tl.interval_seconds(m) or 0.0))  # the interval that saw a stuck engine resume
    if len(itl) and itl.max() > c.settings.itl_slo_seconds:
        bad = m["itl_p95"] > c.settings.itl_slo_seconds
        if bad.any():  # a token that waited for a wedged engine is the stall, not the batch
            waited = stuck.explains(c, [t.to_pydatetime() for t in m.index], pad)
            bad &= ~pd.Series(waited, index=m.index, dtype=bool)
            itl = itl[~pd.Series(waited, index=m.index, dtype=bool).reindex(itl.index, fill_value=False)]
    if len(itl) and itl.max() > c.settings.itl_slo_seconds:
        a, b = _when(m, bad.fillna(False))
        out.append(
            Finding(
                id=FindingId.ITL_HIGH,
                severity="warning",
                title=f"Inter-token latency above {c.settings.itl_slo_seconds * 1000:.0f} ms",
                evidence=(
                    f"ITL p95 above {c.settings.itl_slo_seconds * 1000:.0f} ms in {int(bad.sum())} of {len(itl)} "
                    f"scrape intervals (max {itl.max() * 1000:.0f} ms){_span(a, b)}"
                ),
                start=a,
                end=b,
                data={"max_itl_p95_s": float(itl.max())},
            )
        )
    p99, p50 = tl.series(m, "ttft_p99"), tl.series(m, "ttft_p50")
    if len(p99) and len(p50):
        j = pd.concat([p50, p99], axis=1, keys=["p50", "p99"]).dropna()
        spike = (j["p99"] > c.settings.ttft_spike_min_s) & (
            j["p99"] > c.settings.ttft_spike_ratio * j["p50"].clip(lower=1e-3)
        )
        if spike.any():  # a spike in or right after a stuck period is the stall, not prefill
            waited = stuck.explains(c, [t.to_pydatetime() for t in j.index], pad)
            spike &= ~pd.Series(waited, index=j.index, dtype=bool)
        if spike.any():
            a, b = _when(j, spike)
            out.append(
                Finding(
                    id=FindingId.TTFT_SPIKES,
                    severity="warning",
                    title="TTFT spikes under bursts (prefill stutter)",
                    evidence=(
                        f"TTFT p99 reached {j['p99'].max():.2f} s against a p50 of {j['p50'].median():.2f} s in "
                        f"{int(spike.sum())} scrape intervals{_span(a, b)}"
                    ),
                    start=a,
                    end=b,
                    data={"max_ttft_p99_s": float(j["p99"].max())},
                )
            )
    return out


# ---------------------------------------------------------------- the rules

#: prefill against decode: slow first tokens (and a queue with KV room) take more prompt tokens a
#: step, high inter-token latency fewer; left alone under KV pressure
PREFILL = Lever(
    50,
    load.prefill_balance,
    answers=(FindingId.TTFT_SPIKES, FindingId.QUEUE_PREFILL_BOUND, FindingId.ITL_HIGH),
)


LATENCY = Rule(
    family="latency and SLOs",
    detect=latency,
    docs=(
        Doc(
            FindingId.TTFT_SPIKES,
            "warning",
            Section.BATCH,
            evidence=(
                "TTFT p99 ≫ p50 in `/metrics`, outside a stuck period (a spike in one or right "
                "after it is the stall: those requests waited for the engine)"
            ),
            advice=(
                "`--max-num-batched-tokens` sized by the queue seen as for `queue_prefill_bound` (and its "
                "ITL cost); with no queue seen × 2 capped at `--max-model-len`; when that is no real "
                "increase (< 1.25×) a note instead (never a +1); a note when its value is unknown"
            ),
            versions="needs /metrics",
            settings=("ttft_spike_min_s", "ttft_spike_ratio"),
        ),
        Doc(
            FindingId.ITL_HIGH,
            "warning",
            Section.BATCH,
            alert="VLLMITLSLOBurnFast",
            evidence="ITL p95 above `itl_slo_seconds`",
            advice=(
                "any one of: `--async-scheduling` (when it is off — the default in {while:--async-scheduling=False} — on"
                " V1 GPU, ≤ 32 running, no pipeline parallelism or speculative config), `--long-"
                "prefill-token-threshold` = a quarter of the step's tokens (V1, when the mean "
                "prompt is longer), `--max-num-batched-tokens` halved (≥ 512; TTFT rises), "
                "`--performance-mode interactivity` (≥ {since:--performance-mode})"
            ),
            versions="needs /metrics; each flag only on releases that have it",
            settings=("itl_slo_seconds",),
        ),
    ),
    settings=(
        "itl_slo_seconds",
        "ttft_spike_min_s",
        "ttft_spike_ratio",
    ),
    needs=("metrics",),
    levers=(PREFILL,),
)
