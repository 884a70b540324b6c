"""Levers for a server under load: KV pressure, prefill vs decode, unused context (--max-num-seqs
for a queue or a throughput peak: advise.seqs).

The KV cache is grown only when it was near full (or no load was seen and vLLM's own figure
says it holds fewer than two requests); --max-num-seqs is capped only under KV pressure. Pure.
"""

from __future__ import annotations

import math
from collections.abc import Mapping

from observe.advise import sched
from observe.advise.plan import Plan
from observe.advise.start import _fp8, _is_gpu
from observe.advise.units import fmt_bytes, parse_bytes, pow2_at_least
from observe.capacity import defaults
from observe.findingids import FindingId
from observe.flags import known
from observe.metrics import names
from observe.model import Finding, Recommendation


def _req(p: Plan) -> int | None:
    t = p.facts.request_tokens
    return int(round(t)) if t else None


def _req_words(p: Plan) -> str:
    """'~N tokens (where measured)': the request length the advice sized from, and its source."""
    req, src = _req(p), p.facts.request_tokens_source
    return f"~{req:,} tokens" + (f" ({src})" if src else "") if req else "unknown length"


def _demand(p: Plan) -> int:
    """Requests that wanted to run at once: the most running + waiting of one stats sample. The two
    maxima apart may be samples apart (the queue peaks while few run, the batch fills once it
    drained): their sum is a count the server never held, used only where the samples are not known."""
    f = p.facts
    if f.max_in_flight is not None:
        return int(f.max_in_flight)
    return int((f.max_running or 0) + (f.max_waiting or 0))


def kv_plan(p: Plan, by_id: Mapping[str, Finding], answers: tuple[str, ...]) -> None:
    """The KV plan (rules.kv.KV_PLAN): more KV capacity, else fewer concurrent sequences, for the
    KV-pressure findings (``answers``) that call for it; ``p.kv_ids`` keeps them (later levers ask)."""
    p.kv_ids = pressure_ids(p, by_id, answers)
    if p.kv_ids:
        kv_pressure(p, p.kv_ids, oom=FindingId.CUDA_OOM in by_id)


def prefill_balance(p: Plan, by_id: Mapping[str, Finding], answers: tuple[str, ...]) -> None:
    """Prefill vs decode (rules.latency.PREFILL: slow first tokens, a queue with KV room, high
    inter-token latency), left alone under KV pressure."""
    prefill(p, by_id, kv_pressure=bool(p.kv_ids))


def pressure_ids(p: Plan, by_id: Mapping[str, Finding], answers: tuple[str, ...]) -> list[str]:
    """The KV-pressure findings (of ``answers``) that call for more KV capacity ([] = none does)."""
    ids = [i for i in answers if i in by_id]
    if not ids:
        return []
    strong = {FindingId.PREEMPTIONS, FindingId.QUEUE_MEMORY_BOUND, FindingId.PREEMPTIONS_LIKELY} & set(ids)
    pre = by_id.get(FindingId.PREEMPTIONS)
    total = pre.data.get("total") if pre is not None else None
    if isinstance(total, int) and total < p.settings.preemption_pattern:
        strong.discard(FindingId.PREEMPTIONS)  # one preemption: slow, not a pattern worth a flag change
        p.note(
            [FindingId.PREEMPTIONS],
            f"{total} preemption{'s' if total != 1 else ''} seen: slow (a request's KV cache recomputed), not a "
            "pattern worth a flag change; grow the KV cache if they recur"
            + (
                f" (V0 warns only at the 1st, 51st, … preemption: {names.NUM_PREEMPTIONS_TOTAL} in a /metrics "
                "snapshot gives the full count)"
                if pre is not None and pre.data.get("warnings")
                else ""
            ),
        )
    sat = by_id.get(FindingId.KV_CACHE_SATURATED)
    if sat is not None and (sat.data.get("queued") or sat.severity == "critical"):  # full, requests waiting
        strong.add(FindingId.KV_CACHE_SATURATED)
    elif FindingId.KV_CACHE_SATURATED in by_id and _kv_climbing(p) and not _nothing_waited(p, by_id):
        strong.add(FindingId.KV_CACHE_SATURATED)  # not full yet, but it will be: preemption follows
    if FindingId.LOW_MAX_CONCURRENCY in ids and not strong:
        # vLLM's figure is at the full --max-model-len: it calls for more cache only when the cache
        # was near full under the load seen (or no load was seen at all)
        max_kv = p.facts.max_kv_pct
        if max_kv is not None and max_kv < p.settings.kv_high_pct:
            p.note(
                [FindingId.LOW_MAX_CONCURRENCY],
                f"vLLM counts concurrency at the full --max-model-len, but the requests seen filled at most "
                f"{max_kv:.0f}% of the KV cache: no change needed for this load; lower --max-model-len if "
                "no request needs it, or grow the cache before longer requests arrive",
            )
            return []
        strong.add(FindingId.LOW_MAX_CONCURRENCY)
    return [i for i in ids if i in strong]


def _nothing_waited(p: Plan, by_id: Mapping[str, Finding]) -> bool:
    """The stats lines say no request ever waited (a waiting count read, 0 in every sample), nothing reports a
    preemption, and the batch that filled the cache is leaving (the last sample runs fewer requests than the most
    seen): the fill is not the running requests' decodes growing into a full cache, so it costs nothing (every
    request admitted), no lever; the rule's note says so. The same running requests decoding at the ceiling
    (Running steady while KV climbs past kv_high_pct) keep the plan: their next blocks have nowhere to go, and
    preemption follows (tests/data/corpus 005: 16 running, 92.1 % → 94.9 %)."""
    f = p.facts
    preempted = {FindingId.PREEMPTIONS, FindingId.PREEMPTIONS_LIKELY} & set(by_id)
    if f.max_waiting is None or f.max_waiting != 0 or preempted:
        return False
    return f.running_last is not None and f.max_running is not None and f.running_last < f.max_running


def _kv_climbing(p: Plan) -> bool:
    """KV usage at or above Settings.kv_high_pct and higher at the last sample than at the first."""
    first, last = p.facts.kv_pct_first, p.facts.kv_pct_last
    return first is not None and last is not None and last >= p.settings.kv_high_pct and last > first


def kv_pressure(p: Plan, kv_ids: list[str], oom: bool) -> None:
    cfg = p.cfg
    gpu = _is_gpu(p)
    req, demand, tokens = _req(p), _demand(p), cfg.kv_cache_tokens
    need = demand * req / tokens if (req and demand and tokens) else None  # growth the load calls for
    grown = False
    kvb = cfg.flags.get("--kv-cache-memory-bytes")
    if kvb is not None and known.supported("--kv-cache-memory-bytes", cfg):
        cur_b = parse_bytes(kvb)
        mc, low = cfg.max_concurrency, p.settings.low_concurrency
        if cur_b and kv_ids == [FindingId.LOW_MAX_CONCURRENCY] and mc:
            # no load seen, only vLLM's concurrency at the full length: the bytes that hold low_concurrency requests
            new_b = math.ceil(cur_b * low / mc)
            why = (
                f"the KV cache holds {mc:.2f} requests of the full length; room for {low:g} (if the GPU has the "
                "memory free: the flag sets the cache whatever --gpu-memory-utilization says)"
            )
        else:
            new_b = _kv_bytes_needed(p, cur_b) if cur_b else 0
            why = (
                "the KV cache is full and requests wait or are preempted; give it room for the observed load"
            )
        if cur_b:
            grown = p.add(
                "--kv-cache-memory-bytes",
                fmt_bytes(new_b),
                why,
                kv_ids,
                effect=_bytes_effect(p, cur_b, parse_bytes(fmt_bytes(new_b)) or new_b),
            )
    util_rec = None
    if not grown and gpu and not oom:
        cur = cfg.gpu_memory_utilization
        if cur is None:  # unset: the release's default (1.0 from 0.34 with the extensible KV cache)
            cur = known.assumed("--gpu-memory-utilization", cfg)
        top = p.settings.max_gpu_util
        if cur is None or cur < top - 1e-9:
            util_rec = p.make(
                "--gpu-memory-utilization",
                top,
                f"more of the GPU for the KV cache ({top:g} still leaves headroom for activations)",
                kv_ids,
                effect=p.effect("--gpu-memory-utilization", top),
            )
    fp8_rec = None
    if gpu and cfg.kv_cache_dtype in (None, "auto") and known.supported("--kv-cache-dtype", cfg):
        v = _fp8(p)
        fp8_rec = p.make(
            "--kv-cache-dtype",
            v,
            "an fp8 KV cache holds twice the tokens in the same memory (small accuracy cost; check your evals)",
            kv_ids,
            effect=p.effect("--kv-cache-dtype", v)
            or (f"KV cache {tokens:,} → ~{tokens * 2:,} tokens" if tokens else "about twice the KV tokens"),
        )
    util_factor = _util_factor(p) if util_rec else None
    if need is not None and util_rec and util_factor is not None and util_factor >= need:
        p.add_any_of([util_rec, fp8_rec if need <= 2.0 else None])  # either alone holds the load
        grown = True
    elif need is not None and fp8_rec and need <= 2.0:
        p.add_any_of([fp8_rec])
        grown = True
    elif need is None and not grown:
        # the log does not say how much the load needs: any one lever grows the cache, or a cap at
        # what the full cache held stops the thrash without growing it
        first = p.add_any_of([util_rec, fp8_rec, _cap_at_full_cache(p, kv_ids)])
        grown = first is not None and (util_rec is not None or fp8_rec is not None)
    else:
        for r in (util_rec, fp8_rec):
            if r is not None and not p.taken(r.flag):
                p.recs[r.flag] = r
                grown = True
    if need is not None and tokens:
        most = (util_factor or 1.0) * (2.0 if fp8_rec else 1.0) * (_growth_bytes(p) or 1.0)
        if most < need and (util_factor is not None or not util_rec):
            p.note(
                kv_ids,
                f"the load seen ({demand} requests of {_req_words(p)} = {demand * (req or 0):,} tokens) needs "
                f"{need:.1f}× this KV cache ({tokens:,} tokens); the flags above give at most {most:.1f}×: "
                "add replicas, or more GPUs per replica (a larger --tensor-parallel-size)",
            )
    if not grown and "--kv-cache-memory-bytes" not in p.recs and gpu:
        p.note(
            kv_ids,
            f"the KV cache is already as large as flags make it on this GPU (utilization ≥ {p.settings.max_gpu_util:g}, fp8 or "
            "out of memory): add replicas or more GPUs per replica (a larger --tensor-parallel-size)",
        )
    _fit_max_num_seqs(p, kv_ids, _growth(p))


def _admission_flag(p: Plan) -> str:
    """--max-num-active-seqs caps admission without shrinking the CUDA graphs captured for
    --max-num-seqs; releases that have it get it, the others --max-num-seqs."""
    return "--max-num-active-seqs" if known.supported("--max-num-active-seqs", p.cfg) else "--max-num-seqs"


def _cap_at_full_cache(p: Plan, fids: list[str]) -> Recommendation | None:
    """Without request lengths: admit no more than the full cache held. With preemption the running
    count overshoots; in-flight sequences hold at least half their final length on average, so half of
    it fits at full length. None where nothing waits beyond the cap."""
    running, kv = p.facts.max_running, p.facts.max_kv_pct
    if not running or kv is None or kv < p.settings.kv_full_pct:
        return None
    preempting = bool({FindingId.PREEMPTIONS, FindingId.PREEMPTIONS_LIKELY} & set(fids))
    cap = int(running // 2) if preempting else int(running)
    cur = p.cfg.max_num_seqs
    if cap < 1 or cap >= _demand(p) or (cur is not None and cap >= int(cur)):
        return None
    why = (
        f"the KV cache was full ({kv:.0f}%) at {int(running)} running with preemption: at full length about "
        f"half of them fit (in-flight sequences hold at least half their final length)"
        if preempting
        else f"the KV cache was full ({kv:.0f}%) at {int(running)} running while {_demand(p) - int(running)} waited"
    )
    return p.make(
        _admission_flag(p),
        cap,
        why + "; admit no more than that",
        fids,
        effect=f"at most {cap} running: the rest wait instead of being preempted and recomputed; the queue "
        f"stays (the levers before this one shorten it); raise the cap while KV stays below {p.settings.kv_high_pct:g}%",
    )


def _util_factor(p: Plan) -> float | None:
    """How many times --gpu-memory-utilization Settings.max_gpu_util multiplies the KV cache (None: unknown)."""
    cfg = p.cfg
    cur = cfg.gpu_memory_utilization
    if cur is None:
        cur = known.assumed("--gpu-memory-utilization", cfg)
    total, avail = cfg.total_gpu_memory_gib, cfg.available_kv_gib
    if cur is None or not total or not avail:
        return None
    return (avail + (p.settings.max_gpu_util - cur) * total) / avail


def _growth_bytes(p: Plan) -> float | None:
    r = p.recs.get("--kv-cache-memory-bytes")
    if r is None:
        return None
    old, new = parse_bytes(r.current), parse_bytes(r.suggested)
    return new / old if old and new else None


def _growth(p: Plan) -> float | None:
    """How much the planned changes multiply the KV cache's tokens (None: by an unknown factor)."""
    g = 1.0
    if "--kv-cache-memory-bytes" in p.recs:
        b = _growth_bytes(p)
        if b is None:
            return None
        g *= b
    if "--kv-cache-dtype" in p.recs:
        g *= 2.0
    if "--gpu-memory-utilization" in p.recs:
        f = _util_factor(p)
        if f is None:
            return None  # depends on memory the log does not state; do not cap against the old size
        if p.recs["--gpu-memory-utilization"].alternatives:
            return f  # the plan applies one of the alternatives: size for the first
        g *= f
    return g


def _fit_max_num_seqs(p: Plan, fids: list[str], growth: float | None) -> None:
    """Under KV pressure, admit no more requests than the (grown) cache holds."""
    flag = _admission_flag(p)
    if p.taken(flag) or growth is None:
        return
    req, tokens = _req(p), p.cfg.kv_cache_tokens
    if not (req and tokens):
        return
    tokens = int(tokens * growth)
    fit = int(tokens // req)
    cur = p.cfg.max_num_seqs or p.facts.max_running
    demand = _demand(p)
    if growth > 1.0 and demand and fit >= demand:
        return  # the grown cache holds every request seen at once: a cap would only cost throughput
    if fit >= 1 and (cur is None or fit < cur):
        p.add(
            flag,
            fit,
            f"{tokens:,} KV tokens hold {fit} requests of {_req_words(p)}: admit no more than fit, so "
            "none is preempted and recomputed",
            fids,
            effect=f"at most {fit} running; the rest wait instead of being preempted",
        )


def _kv_bytes_needed(p: Plan, cur_bytes: int) -> int:
    """Size the KV cache for the concurrency seen: running+waiting × their length, with 25% slack."""
    req, peak, tokens = _req(p), _demand(p), p.cfg.kv_cache_tokens
    if tokens and req and peak:
        want = int(cur_bytes / tokens * req * peak * 1.25)
        return max(want, cur_bytes * 2)
    return cur_bytes * 4


def _bytes_effect(p: Plan, cur_b: int, new_b: int) -> str | None:
    cfg, tokens = p.cfg, p.cfg.kv_cache_tokens
    if not tokens:
        return None
    bs = cfg.block_size or defaults.block_size(cfg.version, engine=cfg.engine)
    new_tokens = int(tokens * new_b / cur_b) // bs * bs
    out = f"KV cache {tokens:,} → ~{new_tokens:,} tokens ({cur_b / 2**20:,.0f} → {new_b / 2**20:,.0f} MiB)"
    req = _req(p)
    if req:
        out += f"; requests of {_req_words(p)} held at once: {tokens // req} → {new_tokens // req}"
    return out


# ---------------------------------------------------------------- batch size and scheduling


def _batched_tokens(p: Plan) -> tuple[int | None, bool]:
    v = p.cfg.max_num_batched_tokens
    if v:
        return int(v), False
    d, _ = p.current("--max-num-batched-tokens")
    return (int(d), True) if d else (None, False)


def _prefill_budget(p: Plan, cur: int) -> tuple[int, str]:
    """How many prompt tokens a step should take when first tokens wait behind prefill chunks, and
    what that budget prefills in one step (for the advice's words).

    The queue seen (running + waiting at its peak) × the mean prompt is what one step would need to
    start every queued prompt at once; at least double the budget (a smaller step is lost in the
    noise), at most vLLM's own default for this release and hardware when that is above `cur` (the
    budget vLLM balances against inter-token latency) else double, and never past vLLM's own bound,
    `--max-num-seqs` × `--max-model-len` (it warns beyond). Without a queue seen, one whole
    `--max-model-len` prompt a step is the most a step needs. 256-token steps."""
    prompt, demand = p.facts.prompt_tokens_mean, _demand(p)
    seqs, _ = p.current("--max-num-seqs")
    mml = p.cfg.max_model_len
    if prompt and demand:
        want = int(demand * prompt)
        what = f"the prompts of the {demand} requests seen at once (~{prompt:,.0f} tokens each)"
    elif prompt:
        want = int(prompt)
        what = f"a mean prompt of {prompt:,.0f} tokens"
    else:
        want, what = 0, ""
    default = p.default("--max-num-batched-tokens")
    ceiling = max(2 * cur, int(default) if default and int(default) > cur else 0)
    new = min(max(2 * cur, -(-want // 256) * 256), ceiling)
    if want and cur >= want:
        return cur, what
    if mml and not (prompt and demand) and new > max(cur, int(mml)):
        # no queue seen: one whole prompt a step is the most a step is known to need
        return max(cur, int(mml)), f"a whole --max-model-len prompt ({int(mml):,} tokens)"
    if seqs and mml:
        new = min(new, max(cur, int(seqs) * int(mml)))
    if not what:
        what = f"{new:,} prompt tokens"
    elif new < want:
        what = f"{new / want:.0%} of {what}"
    return new, what


def prefill(p: Plan, by_id: Mapping[str, Finding], kv_pressure: bool) -> None:
    """Prefill vs decode balance. Under KV pressure a slow first token is the queue waiting for KV
    blocks, not prefill chunking: leave --max-num-batched-tokens alone."""
    if kv_pressure:
        return
    cur, _ = _batched_tokens(p)
    slow_first = [i for i in (FindingId.TTFT_SPIKES, FindingId.QUEUE_PREFILL_BOUND) if i in by_id]
    if slow_first and FindingId.ITL_HIGH not in by_id:
        if cur:
            new, whole = _prefill_budget(p, int(cur))
            if new < int(cur) * 1.25:
                # a step already takes what the queue brought (or a whole --max-model-len prompt):
                # a few more tokens a step change nothing measurable (never a +1)
                p.note(
                    slow_first,
                    f"--max-num-batched-tokens ({int(cur):,}) already prefills {whole} in one step, so the "
                    "slow first tokens are not prefill chunking: they waited in the queue (see the KV and "
                    "queue findings) or for a stalled engine",
                )
                return
            p.add(
                "--max-num-batched-tokens",
                new,
                "prompts queue behind small prefill chunks: take more prompt tokens per step",
                slow_first,
                effect=f"up to {new:,} prompt tokens a step instead of {cur:,} ({whole} in one step): queued "
                "prompts start sooner; "
                "the cost is inter-token latency: a step that carries a full chunk takes longer for the "
                "running requests (watch ITL p95)",
            )
        elif p.cfg.flags_damaged:  # the values may be in the part of the args line that was lost
            p.note(
                slow_first,
                "the log's non-default args line was cut, so --max-num-batched-tokens and --max-num-seqs in "
                "force are unknown (not taken as vLLM's defaults): read them from the launch command; first "
                "tokens that wait while the KV cache has room wait for one of them",
            )
        elif FindingId.TTFT_SPIKES in by_id:
            p.note(
                [FindingId.TTFT_SPIKES],
                "prompts queue behind prefill chunks: raise --max-num-batched-tokens (its value is not in the "
                "log; double it), at some inter-token-latency cost",
            )
    elif FindingId.ITL_HIGH in by_id and FindingId.TTFT_SPIKES not in by_id:
        # any one of these shortens the gaps between tokens; the most specific first
        halve = None
        seqs, _ = p.current("--max-num-seqs")
        floor = max(512, int(seqs) if seqs else 0)  # vLLM refuses a budget under --max-num-seqs
        if cur and cur > floor:
            new = max(floor, cur // 2)
            halve = p.make(
                "--max-num-batched-tokens",
                new,
                "smaller prefill chunks stall running decodes less (lower inter-token latency)",
                [FindingId.ITL_HIGH],
                effect=f"at most {new:,} tokens a step instead of {cur:,}: decode steps shorter; prompts take "
                "more steps to prefill (TTFT rises)",
            )
        p.add_any_of(
            [
                sched.async_scheduling(p),
                sched.long_prefill(p, cur),
                halve,
                sched.performance_mode(
                    p,
                    "interactivity",
                    [FindingId.ITL_HIGH],
                    "inter-token latency is what is too high: vLLM's latency preset",
                ),
            ]
        )


def _over(cum: list[tuple[float, float]], x: float) -> tuple[float, float]:
    """(at least, at most) how many of a cumulative histogram's observations are above x."""
    n = cum[-1][1]
    at_least = next((n - c for le, c in cum if le >= x), 0.0)
    at_most = next((n - c for le, c in reversed(cum) if le <= x), n)
    return max(0.0, at_least), max(0.0, at_most)


def rejected(p: Plan, limit: int) -> tuple[int, int, int] | None:
    """(at least, at most, of) the requests in the /metrics histograms longer than `limit` tokens.
    The histograms give prompt and generation lengths apart: a request is longer than the limit when
    its prompt or its output alone is (at least), and only when one of them is over half of it (at most)."""
    b = p.facts.length_buckets
    if not b or not b.get("prompt") or not b.get("generation"):
        return None
    n = int(b["prompt"][-1][1])
    if n <= 0:
        return None
    lo = max(_over(b["prompt"], limit)[0], _over(b["generation"], limit)[0])
    hi = min(n, _over(b["prompt"], limit / 2)[1] + _over(b["generation"], limit / 2)[1])
    return int(lo), int(max(lo, hi)), n


def _rejected_words(counts: tuple[int, int, int] | None, limit: int) -> str:
    if counts is None:
        return f"a request over {limit:,} tokens would be rejected"
    lo, hi, n = counts
    if hi == 0:
        return f"0 of {n:,} requests seen were longer than {limit:,} tokens"
    if lo == hi:
        return f"{lo:,} of {n:,} requests seen were longer than {limit:,} tokens and would be rejected"
    return (
        f"between {lo:,} and {hi:,} of {n:,} requests seen were longer than {limit:,} tokens and would be "
        "rejected (/metrics gives prompt and output lengths apart)"
    )


def unused_context(p: Plan, f: Finding) -> None:
    """A --max-model-len cut that keeps every request seen, with how many would be rejected."""
    cfg = p.cfg
    used = int(f.data.get("max_tokens_per_request") or 0)
    if not used or not cfg.max_model_len:
        return
    new = pow2_at_least(used * 1.25)
    counts = rejected(p, new)
    while counts is not None and counts[0] > 0 and new < cfg.max_model_len:
        new *= 2  # some requests seen were longer: the cut must keep them
        counts = rejected(p, new)
    if new >= cfg.max_model_len:
        return
    effect = p.effect("--max-model-len", new)
    keep = (
        f"the requests seen (~{used:,} tokens, {f.data.get('length_source') or 'measured'}) "
        f"fit with 25% room; {_rejected_words(counts, new)}"
    )
    p.add(
        "--max-model-len",
        new,
        f"the requests seen used ~{used:,} tokens, far below the limit",
        [f.id],
        effect=keep + (f"; {effect}" if effect else ""),
    )
