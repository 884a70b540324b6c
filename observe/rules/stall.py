"""Stalls and hangs: an engine loop whose stats lines come minutes apart, an engine stuck with
requests in flight (observe.failures.stuck finds the incidents). Pure.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from observe.failures import stuck
from observe.findingids import FindingId
from observe.model import Finding
from observe.rules.base import Doc, Rule, Section
from observe.rules.context import Context
from observe.rules.context import span as _span
from observe.rules.context import where as _where

if TYPE_CHECKING:
    import pandas as pd
else:
    from observe.timeline import pd  # imported on first use


def engine_stalled(c: Context) -> list[Finding]:
    """Stats lines minutes apart while requests run: the engine loop is stalled, not KV-limited."""
    df = c.frame
    if df is None or "running" not in df.columns or not isinstance(df.index, pd.DatetimeIndex) or len(df) < 3:
        return []
    gaps = pd.Series(df.index).diff().dt.total_seconds().values[1:]
    running = df["running"].values[1:]
    normal = stuck.normal_interval_s(c, df)
    stalled = [
        (g, i)
        for i, (g, r) in enumerate(zip(gaps, running))
        if g > c.settings.stall_factor * normal and r and r > 0
    ]
    if len(stalled) < 2:
        return []
    a = df.index[stalled[0][1]].to_pydatetime()
    b = df.index[stalled[-1][1] + 1].to_pydatetime()
    lo, hi = min(g for g, _ in stalled), max(g for g, _ in stalled)
    return [
        Finding(
            id=FindingId.ENGINE_STALLED,
            severity="warning",
            title="Engine loop stalled: stats lines minutes apart",
            evidence=(
                f"{len(stalled)} gaps of {lo:.0f}–{hi:.0f} s between stats lines while requests were running; "
                f"vLLM logs every {normal:.0f} s when a step completes, so steps took that long "
                f"(look outside KV tuning: a stuck request, the frontend, the host){_span(a, b)}"
            ),
            start=a,
            end=b,
            where=_where(c.summary),
            data={"gaps": len(stalled), "max_gap_s": hi},
        )
    ]


# ---------------------------------------------------------------- the rules

ENGINE_STALLED = Rule(
    family="stalls and hangs",
    detect=engine_stalled,
    docs=(
        Doc(
            FindingId.ENGINE_STALLED,
            "warning",
            Section.BATCH,
            evidence=(
                "stats lines minutes apart while requests run (left out when `engine_stuck` "
                "reports the same period)"
            ),
            advice=(
                "a note: no flag fixes a stalled loop (stuck request, host, frontend; upgrade if it recurs)"
            ),
            note=(
                "no launch flag fixes a stalled engine loop: look for a stuck request, a "
                "saturated host CPU or frontend, or a blocking tokenizer; if it recurs on an idle"
                " host, upgrade vLLM"
            ),
        ),
    ),
    settings=("stall_factor",),
    needs=("stats",),
)


ENGINE_STUCK = Rule(
    family="stalls and hangs",
    detect=stuck.engine_stuck,
    docs=(
        Doc(
            FindingId.ENGINE_STUCK,
            "critical",
            Section.BATCH,
            alert="VLLMEngineStuck",
            evidence=(
                "requests running or waiting while nothing is produced for ≥ `stuck_after_s` "
                "(`observe/metrics/progress.py`, the rule the sidecar, `top` and `VLLMEngineStuck` "
                "share): consecutive stats lines at 0 tokens/s (`source: stats`); a stats line at"
                " 0 tokens/s then no stats line (`silence`: V1 stops logging zero intervals); "
                "`/metrics` snapshots whose prompt + generation token counters do not move "
                '(`metrics`); vLLM\'s "No available shared memory broadcast block found" while '
                "serving, or spanning `stuck_after_s` at start-up when the engine never served "
                "after them (a long compilation prints it too) (`hang_warning`); offline only, a log "
                "that ends in 3+ stats lines (30 s+) at 0 prompt and 0 generation tokens/s with the same "
                "requests running, none waiting and KV use unchanged, on a GPU engine, where vLLM's "
                "scheduling says no step finished: V1 at 0.0 % KV use, V0 after a line that generated "
                "tokens with the same Running and KV use (`stats_end`; the sidecar waits "
                "`stuck_after_s`). data: since, "
                "until, seconds, running, waiting, source, incidents, ongoing, seen_in (the "
                "sidecar's own /metrics reading builds the same finding). One incident, one "
                "finding: `engine_stalled` gaps overlapping it, and `queue_prefill_bound` / "
                "`queue_seq_bound` / `throughput_collapse` seen only inside it, are left out"
            ),
            advice=(
                "a note: no flag fixes a hang — `py-spy dump` the EngineCore and worker pids, "
                "check NCCL and shared memory (`/dev/shm`), restart; `/health` may still answer "
                "200"
            ),
            note=(
                "no launch flag fixes a hung engine: while it hangs, dump the stacks of the "
                "EngineCore process and its workers (py-spy dump --pid <pid>) to see what they "
                "wait on; check NCCL (NCCL_DEBUG=INFO, a peer GPU or rank that died) and shared "
                "memory (/dev/shm in containers: --shm-size or --ipc=host); then restart the "
                "engine. /health can answer 200 meanwhile: page on no progress (VLLMEngineStuck)"
            ),
        ),
    ),
    settings=("stuck_after_s",),
    needs=(
        "stats",
        "metrics",
        "hang warnings",
    ),
)
