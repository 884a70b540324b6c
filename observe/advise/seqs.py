"""Levers for --max-num-seqs under load: a queue bound by it (raised to the demand measured, or in
geometric steps where the demand or the KV room is not measured, bounded by what the KV cache holds,
carrying the KV growth a step needs; beside a full KV cache, carried by the KV growth the KV plan
sized) and throughput that falls with more
running sequences (lowered to the peak, never beside such a queue). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from observe.advise.load import (
    _admission_flag,
    _bytes_effect,
    _demand,
    _growth_bytes,
    _req,
    _req_words,
    _util_factor,
)
from observe.advise.plan import Plan
from observe.advise.start import _is_gpu
from observe.advise.units import fmt_bytes, parse_bytes
from observe.findingids import FindingId
from observe.flags import known
from observe.model import Finding, Recommendation


def seq_bound(p: Plan, by_id: Mapping[str, Finding], answers: tuple[str, ...]) -> None:
    """A queue bound by --max-num-seqs, answered only without KV pressure (a lever of rules.batch)."""
    if FindingId.QUEUE_SEQ_BOUND not in by_id:
        return
    if not p.kv_ids:
        queue_seq_bound(p, by_id[FindingId.QUEUE_SEQ_BOUND])
    elif not _seqs_with_kv(p, by_id[FindingId.QUEUE_SEQ_BOUND]):
        p.note(
            [FindingId.QUEUE_SEQ_BOUND],
            "requests also waited with the KV cache full in this window: the KV plan comes first; raise "
            "--max-num-seqs once the cache has room",
        )


def _seqs_with_kv(p: Plan, f: Finding) -> bool:
    """Requests waited both for KV and for a --max-num-seqs slot: the KV growth the plan sized for the
    demand seen carries the --max-num-seqs step that uses it (a geometric step, bounded by what the
    grown cache holds), else the grown cache idles behind the old cap (issue 31: 12M → 51M at 16
    sequences, +1.6 %). False where the plan grows no KV, or the grown cache holds no step."""
    kv = p.recs.get("--kv-cache-memory-bytes")
    cur = p.cfg.max_num_seqs or f.data.get("max_num_seqs")
    growth, req, tokens = _growth_bytes(p), _req(p), p.cfg.kv_cache_tokens
    if kv is None or not cur or p.taken(_admission_flag(p)) or not (growth and req and tokens):
        return False
    cur = int(cur)
    fit = int(tokens * growth * p.settings.seq_bound_kv_share // req)
    new = min(_seq_step(p, cur, _demand(p), fit), fit)
    if new < cur * p.settings.seq_step_min_factor:
        return False
    seqs = p.make(
        "--max-num-seqs",
        new,
        f"coupled: {_demand(p)} requests wanted to run at once and {cur} ran at the cap; the grown KV cache "
        f"holds ~{fit} requests of {_req_words(p)}",
        [f.id],
        effect=f"admits {new} at once instead of {cur}: the grown cache is used",
    )
    if seqs is None:
        return False
    budget, _ = p.current("--max-num-batched-tokens")
    tie = None
    if budget is not None and int(budget) < new:  # vLLM refuses max_num_batched_tokens < max_num_seqs
        tie = p.make(
            "--max-num-batched-tokens",
            new,
            f"coupled with --max-num-seqs {new}: vLLM refuses to start with max_num_batched_tokens "
            f"({int(budget):,}) < max_num_seqs ({new:,})",
            [f.id],
        )
    p.recs[kv.flag] = replace(kv, coupled=(*kv.coupled, seqs, *((tie,) if tie else ())))
    return True


def too_many_seqs(p: Plan, f: Finding) -> None:
    best = int(f.data.get("best_running") or 0)
    if best > 0:
        tps = f.data.get("best_tps")
        p.add(
            "--max-num-seqs",
            best,
            f"throughput peaked at {best} running sequences and falls beyond",
            [f.id],
            effect=f"keeps the batch where generation peaked ({tps:,.0f} tokens/s)" if tps else None,
        )


#: the KV-pressure findings whose plan (rules.kv.KV_PLAN, ranked before this lever) also answers falling throughput
_PREEMPTING = {str(FindingId.PREEMPTIONS), str(FindingId.KV_CACHE_SATURATED)}


def fewer_seqs(p: Plan, by_id: Mapping[str, Finding], answers: tuple[str, ...]) -> None:
    """Throughput peaked at fewer running sequences: lower --max-num-seqs, unless requests also wait
    for a slot with KV room (then the two findings pull apart, and the queue wins: a cap lowered
    beside "bound by --max-num-seqs" would contradict it), or unless the cache preempted and the KV plan
    already changed a flag for it (the recompute of the preempted is what a fuller batch costs there: one
    change, measured, before a second)."""
    f = by_id.get(FindingId.TOO_MANY_SEQS)
    if f is None:
        return
    grown = [r.flag for r in p.recs.values() if _PREEMPTING & set(r.finding_ids)]
    if grown and FindingId.PREEMPTIONS in by_id:
        p.note(
            [f.id],
            "throughput fell with more running sequences while the KV cache preempted them (each preempted "
            f"request is computed again): the KV change above ({', '.join(grown)}) answers both, and a second "
            "change beside it would hide which helped; measure after it, and lower --max-num-seqs only if "
            "throughput still falls as Running rises",
        )
        return
    if FindingId.QUEUE_SEQ_BOUND in by_id:
        p.note(
            [f.id],
            "throughput fell with more running sequences, but requests also waited for a --max-num-seqs "
            "slot while the KV cache had room: --max-num-seqs is not lowered against that queue",
        )
        return
    too_many_seqs(p, f)


def _seq_step(p: Plan, cur: int, demand: int, fit: int | None = None) -> int:
    """The next --max-num-seqs: the demand seen, at least ×seq_step_min_factor (a smaller step is lost
    in the noise: never 4 → 5). Where the demand is measured (the most running + waiting of one stats
    sample) and so is the KV room (`fit`: requests of the measured length the cache holds), the step
    is that demand whatever its factor, which the caller bounds by `fit` or carries with the KV growth
    it needs (issue 31: ×4 from 4 left 16 running where 48 wanted to, and the trial budget had no
    room for a second step); else at most ×seq_step_max_factor (geometric steps)."""
    lo = int(round(cur * p.settings.seq_step_min_factor))
    if _demand_measured(p) and fit is not None:
        return max(lo, demand)
    hi = int(round(cur * p.settings.seq_step_max_factor))
    return max(lo, min(demand, hi))


def _demand_measured(p: Plan) -> bool:
    """The demand is the most in the server in one stats sample (not two maxima added, a count the
    server may never have held)."""
    return p.facts.max_in_flight is not None


def _more_kv_for(p: Plan, new: int, fids: list[str]) -> Recommendation | None:
    """The KV growth that lets `new` requests of the measured length run at once (the seq_bound_kv_share
    of the grown cache holds them): --kv-cache-memory-bytes (in force, or the KV memory the log states)
    where the release has it, else --gpu-memory-utilization on a GPU; priced by the capacity model."""
    req, tokens = _req(p), p.cfg.kv_cache_tokens
    if not (req and tokens):
        return None
    factor = new * req / (tokens * p.settings.seq_bound_kv_share)
    if factor <= 1.0:
        return None
    why = f"coupled: {new} requests of {_req_words(p)} need ~{factor:.1f}× this KV cache ({tokens:,} tokens)"
    kvb = p.cfg.flags.get("--kv-cache-memory-bytes")
    cur_b = parse_bytes(kvb) if kvb is not None else None
    if cur_b is None and p.cfg.available_kv_gib:
        cur_b = int(p.cfg.available_kv_gib * 2**30)
    if cur_b and known.supported("--kv-cache-memory-bytes", p.cfg):
        want = fmt_bytes(int(cur_b * factor * 1.05))
        return p.make(
            "--kv-cache-memory-bytes",
            want,
            why,
            fids,
            effect=_bytes_effect(p, cur_b, parse_bytes(want) or cur_b),
        )
    util = _util_factor(p)
    if _is_gpu(p) and util is not None and util >= factor:
        top = p.settings.max_gpu_util
        return p.make(
            "--gpu-memory-utilization", top, why, fids, effect=p.effect("--gpu-memory-utilization", top)
        )
    return None


def queue_seq_bound(p: Plan, f: Finding) -> None:
    """Requests wait while the KV cache has room: admit what the queue calls for (the demand measured
    in one stats sample where the KV room per request is measured too, else a geometric step of
    ×seq_step_min_factor to ×seq_step_max_factor), bounded by what the KV cache holds at the measured
    length; where the cache is what limits that step, the step carries the KV growth it needs."""
    cfg = p.cfg
    cur = cfg.max_num_seqs or f.data.get("max_num_seqs")
    if not cur:
        return
    cur = int(cur)
    req, tokens, demand = _req(p), cfg.kv_cache_tokens, _demand(p)
    fit = int(tokens * p.settings.seq_bound_kv_share // req) if (tokens and req) else None
    new = _seq_step(p, cur, demand, fit)
    why = f"{demand} requests wanted to run at once (running + waiting) while the KV cache had room"
    effect = f"admits {new} at once instead of {cur}: the queue seen starts sooner"
    coupled: Recommendation | None = None
    if fit is not None and fit < new:
        # the cache is what bounds the step: the whole step with the KV growth it needs (the memory
        # for it priced by the capacity model), else as many as the cache holds where that step is
        # one the noise can resolve (issue 31: 4 → 8 of a queue of 60 left it far from the best)
        coupled = _more_kv_for(p, new, [f.id])
        if coupled is None and fit >= cur * p.settings.seq_step_min_factor:
            new = fit
            effect = f"admits {new} at once instead of {cur}: as many as the KV cache holds"
        elif coupled is None:
            p.note(
                [f.id],
                f"requests wait for a --max-num-seqs slot, but the KV cache holds only ~{fit} requests of "
                f"{_req_words(p)}: a step from {cur} to {fit} is lost in the noise; more sequences need a "
                "larger KV cache (more memory for it, or replicas)",
            )
            return
    held = f"; the KV cache holds ~{fit} requests of {_req_words(p)}" if fit is not None else ""
    r = p.make(
        "--max-num-seqs",
        new,
        why,
        [f.id],
        effect=effect
        + (held if coupled is None else f"{held} now, {new} with the coupled KV growth")
        + ("" if fit is not None else " (KV room per request not measured: watch KV usage after the change)"),
    )
    if r is not None and not p.taken(r.flag):
        p.recs[r.flag] = replace(r, coupled=(coupled,)) if coupled is not None else r
