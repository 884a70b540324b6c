"""V0 swap space: requests preempted to CPU memory, and the CPU KV cache filling up. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from observe.findingids import FindingId
from observe.model import Finding, StatsSample
from observe.rules.base import Doc, Rule, Section, State
from observe.rules.context import Context
from observe.rules.context import where as _where
from observe.rules.kv import Modes

if TYPE_CHECKING:
    from observe.settings import Settings


@dataclass
class Swap(State[StatsSample]):
    """V0 swap space: the CPU KV usage, first and highest, and the samples with requests swapped."""

    takes = StatsSample
    first_cpu_kv: float | None = None
    max_cpu_kv: float | None = None
    samples: int = 0

    def add(self, ev: StatsSample, settings: Settings) -> None:
        cpu = ev.cpu_kv_usage_pct
        if cpu is not None:
            self.first_cpu_kv = cpu if self.first_cpu_kv is None else self.first_cpu_kv
            self.max_cpu_kv = cpu if self.max_cpu_kv is None or cpu > self.max_cpu_kv else self.max_cpu_kv
        if ev.swapped:
            self.samples += 1


def swap_space(c: Context) -> list[Finding]:
    """V0 swap space in use: Swapped > 0 (requests preempted to CPU memory) and how full the CPU KV
    cache got. Data: max_swapped, samples_swapped, first_cpu_kv_pct, max_cpu_kv_pct, climbing
    (max above first), exhausted (max ≥ Settings.swap_full_pct), swap_mode (a SWAP-mode
    preemption warning was printed)."""
    s, w = c.summary, c.state(Swap)
    if not s.max_swapped:
        return []
    exhausted = w.max_cpu_kv is not None and w.max_cpu_kv >= c.settings.swap_full_pct
    climbing = w.max_cpu_kv is not None and w.first_cpu_kv is not None and w.max_cpu_kv > w.first_cpu_kv
    return [
        Finding(
            id=FindingId.SWAP_SPACE_EXHAUSTED if exhausted else FindingId.SWAP_SPACE_IN_USE,
            severity="critical" if exhausted else "warning",
            title="Swap space exhausted: preempted requests fill the CPU KV cache"
            if exhausted
            else "Requests swapped to CPU memory",
            evidence=(
                f"up to {s.max_swapped} requests swapped in {w.samples} stats samples; CPU KV cache usage "
                + (
                    f"from {w.first_cpu_kv:.1f}% to {w.max_cpu_kv:.1f}%"
                    if w.max_cpu_kv is not None and w.first_cpu_kv is not None
                    else "not shown"
                )
            ),
            where=_where(s),
            data={
                "max_swapped": s.max_swapped,
                "samples_swapped": w.samples,
                "first_cpu_kv_pct": w.first_cpu_kv,
                "max_cpu_kv_pct": w.max_cpu_kv,
                "climbing": climbing,
                "exhausted": exhausted,
                "swap_mode": "SWAP" in c.state(Modes).modes,
            },
        )
    ]


# ---------------------------------------------------------------- the rules

SWAP_SPACE = Rule(
    family="KV cache and memory",
    detect=swap_space,
    docs=(
        Doc(
            FindingId.SWAP_SPACE_IN_USE,
            "warning",
            Section.KV_PRESSURE,
            evidence=(
                "V0's `Swapped: N` above 0 in the stats lines (requests preempted to CPU memory),"
                " with how full the CPU KV cache got. Data: max_swapped, samples_swapped, "
                "first_cpu_kv_pct, max_cpu_kv_pct, climbing, swap_mode"
            ),
            advice=(
                "the KV plan below when a KV-pressure finding comes with it; otherwise a note (no"
                " flag known for it alone)"
            ),
            versions="V0",
        ),
        Doc(
            FindingId.SWAP_SPACE_EXHAUSTED,
            "critical",
            Section.KV_PRESSURE,
            evidence="as `swap_space_in_use`, with the CPU KV cache ≥ `swap_full_pct`",
            advice=(
                "a note: preemptions recompute instead; grow the GPU KV cache (the KV plan) or "
                "add replicas; a larger `--swap-space` only postpones it"
            ),
            versions="V0",
            note=(
                "the CPU swap space ran full: preemptions recompute instead; grow the GPU KV "
                "cache (see above) or add replicas; a larger --swap-space only postpones it"
            ),
        ),
    ),
    settings=("swap_full_pct",),
    needs=("stats",),
    states=(Swap, Modes),
)
