"""The scheduler flags of current vLLM as levers: each only where the engine's release has it.

- ``--long-prefill-token-threshold``: a long prompt takes at most this many tokens of a step, so
  running decodes are not stalled behind it (inter-token latency high with long prompts; V1);
- ``--async-scheduling``: schedules the next step while the GPU runs this one; it pays where the host's
  per-step work is a large share of a small decode batch (off by default in 0.10-0.13);
- ``--performance-mode``: vLLM's preset, ``interactivity`` for latency;
- ``--max-num-queued-reqs``: bounds the requests in flight (running + waiting); vLLM rejects the rest
  at once (HTTP 503) instead of letting the queue grow without limit. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping

from observe.advise.plan import Plan
from observe.findingids import FindingId
from observe.model import Finding, Recommendation

SMALL_BATCH = 32  # decode batches this small are where host overhead per step shows


def long_prefill(p: Plan, batched: int | None) -> Recommendation | None:
    prompt = p.facts.prompt_tokens_mean
    if p.cfg.engine != "v1" or not prompt or not batched:
        return None
    cur, _ = p.current("--long-prefill-token-threshold")
    threshold = max(256, int(batched) // 4 // 256 * 256)
    if prompt <= threshold or (cur and int(cur) <= threshold):
        return None
    return p.make(
        "--long-prefill-token-threshold",
        threshold,
        f"prompts average {prompt:,.0f} tokens: one long prefill fills a step and stalls the running decodes",
        [FindingId.ITL_HIGH],
        effect=f"a prompt takes at most {threshold:,} of the {int(batched):,} tokens of a step: decodes keep "
        "their share; long prompts take more steps to prefill (their TTFT rises), short ones do not",
    )


def async_scheduling(p: Plan) -> Recommendation | None:
    running = p.facts.max_running
    cfg = p.cfg
    if cfg.engine != "v1" or (cfg.device or "GPU").upper() == "CPU" or not running or running > SMALL_BATCH:
        return None
    if int(cfg.pipeline_parallel_size or 1) > 1 or cfg.flags.get("--speculative-config"):
        return None  # vLLM turns it off for pipeline parallelism and most speculative decoding
    cur, _ = p.current("--async-scheduling")
    if cur is not False:
        return None  # on, or vLLM's own choice (auto) in force: nothing to turn on
    return p.make(
        "--async-scheduling",
        True,
        f"at most {int(running)} requests ran: in a batch this small the host's scheduling work is a large "
        "share of each step",
        [FindingId.ITL_HIGH],
        effect="the next step is scheduled while the GPU runs this one: shorter gaps between tokens",
    )


def performance_mode(p: Plan, want: str, fids: list[str], why: str) -> Recommendation | None:
    cur, _ = p.current("--performance-mode")
    if cur is None or str(cur) == want:
        return None  # the preset in force is unknown or already the one
    return p.make("--performance-mode", want, why, fids, effect=f"vLLM's {want} preset instead of {cur}")


def queue_bound(p: Plan, by_id: Mapping[str, Finding], answers: tuple[str, ...]) -> None:
    """A queue (of ``answers``) no lever before this one answers: bound what waits (rejecting the
    excess is the last resort). A lever of rules.batch."""
    queue: list[str] = [i for i in answers if i in by_id]
    answered = {fid for r in p.recs.values() for fid in r.finding_ids}
    if queue and not answered & set(queue):
        bound_queue(p, queue)


def bound_queue(p: Plan, fids: list[str]) -> None:
    """The queue still growing at the last sample: arrivals outpace the server; bound what waits."""
    first, last = p.facts.waiting_first, p.facts.waiting_last
    running = p.facts.max_running
    if first is None or last is None or not running or last <= first or last < (p.facts.max_waiting or 0):
        return
    cur, _ = p.current("--max-num-queued-reqs")
    bound = int(running) * 2  # what runs, and one batch more waiting
    if cur is not None and int(cur) <= bound:
        return
    p.add(
        "--max-num-queued-reqs",
        bound,
        f"the queue grew from {int(first)} to {int(last)} waiting and was still growing at the last sample: "
        "requests arrive faster than the server finishes them, and no flag above makes it keep up",
        fids,
        effect=f"at most {bound} requests in flight ({int(running)} running + one batch waiting); the rest "
        "get HTTP 503 at once (retry or route elsewhere) instead of an unbounded wait",
    )
