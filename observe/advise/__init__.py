"""Findings + engine config + capacity model → one coherent plan of vLLM flag changes. Pure.

`plan()` returns the recommendations (one value per flag; alternatives, any one of which has
the same effect, ride on the first) and the notes: a sentence for every warning or critical
finding no flag answers. levers live in start.py (the engine did not start or crashed) and
load.py (a server under load); notes.py closes the plan; plan.py holds the rules every lever
obeys; known.py is what observe knows of vLLM's flags by version.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from observe import cmdline
from observe.advise import load, notes, oom, rejected, sched, start
from observe.advise.known import supported as flag_supported
from observe.advise.plan import Plan
from observe.advise.units import parse_bytes
from observe.model import AdviceNote, EngineConfig, Finding, Recommendation
from observe.settings import Settings

__all__ = [
    "Advice",
    "AdviceNote",
    "Recommendation",
    "advise",
    "command_line",
    "flag_supported",
    "parse_bytes",
    "plan",
]


@dataclass
class Advice:
    recommendations: list[Recommendation] = field(default_factory=list)
    notes: list[AdviceNote] = field(default_factory=list)


_START = {
    "max_model_len_exceeds_kv_cache": start.max_model_len_does_not_fit,
    "max_model_len_exceeds_model": start.model_len_over_model,
    "gpu_memory_busy": start.memory_busy,
    "cuda_oom": oom.oom,
    "no_kv_cache_memory": start.no_kv_memory,
    "prompt_too_long": start.prompt_too_long,
}


def plan(
    cfg: EngineConfig,
    findings: Sequence[Finding],
    *,
    facts: dict | None = None,
    settings: Settings | None = None,
) -> Advice:
    """The plan for these findings; ``settings`` are the thresholds they were judged by (the
    advice's own KV lines move with them)."""
    by_id = {f.id: f for f in findings}
    p = Plan(cfg, facts or {}, settings=settings or Settings())
    # 1. the engine did not start (or rejected requests): make it start
    for fid, lever in _START.items():
        if fid in by_id:
            lever(p, by_id[fid])
    if "launch_rejected" in by_id:  # the value that passes vLLM's check (after the levers above)
        rejected.launch_rejected(p, by_id["launch_rejected"])
    # 2. KV pressure at run time: more KV capacity, else fewer concurrent sequences
    kv_ids = load.pressure_ids(p, by_id)
    if kv_ids:
        load.kv_pressure(p, kv_ids, oom="cuda_oom" in by_id)
    # 3. batch size: too many sequences hurts throughput; KV room but a capped queue wants more
    if "too_many_seqs" in by_id:
        load.too_many_seqs(p, by_id["too_many_seqs"])
    if "queue_seq_bound" in by_id and not kv_ids:
        load.queue_seq_bound(p, by_id["queue_seq_bound"])
    # 4. prefill vs decode balance
    load.prefill(p, by_id, kv_pressure=bool(kv_ids))
    # a queue no lever above answers: bound what waits (rejecting the excess is the last resort)
    queue: list[str] = [
        i for i in ("queue_memory_bound", "queue_seq_bound", "queue_prefill_bound") if i in by_id
    ]
    answered = {fid for r in p.recs.values() for fid in r.finding_ids}
    if queue and not answered & set(queue):
        sched.bound_queue(p, queue)
    # 5. context length nobody uses
    if "max_model_len_unused" in by_id:
        load.unused_context(p, by_id["max_model_len_unused"])
    # 6. never silent
    notes.close(p, findings)
    return Advice(recommendations=list(p.recs.values()), notes=p.notes)


def advise(
    cfg: EngineConfig,
    findings: Sequence[Finding],
    *,
    facts: dict | None = None,
    settings: Settings | None = None,
) -> list[Recommendation]:
    """The recommendations of `plan` (the notes left out)."""
    return plan(cfg, findings, facts=facts, settings=settings).recommendations


def command_line(cfg: EngineConfig, recs: Sequence[Recommendation], *, drop: Sequence[str] = ()) -> str:
    """The whole `vllm serve MODEL ...` command with the recommendations applied (shell-quoted);
    of a recommendation's alternatives only the first (itself) is applied. Flags in ``drop`` (a
    value vLLM rejected, see rejected.rejected_flags) are left out unless a recommendation sets them."""
    flags = dict(cfg.flags)
    for flag in drop:
        flags.pop(flag, None)
    for r in recs:
        flags[r.flag] = r.suggested
    model = cmdline.model_name(flags, cfg.model)
    flags.pop("--model-tag", None)
    return cmdline.render_command(str(model) if model else None, flags)
