"""vLLM's refusal of a speculative-decoding config that leaves its scheduler no token to schedule. Pure.

"max_num_scheduled_tokens is set to N, which does not allow any tokens to be scheduled" (0.26's wording; later
releases say "… set to N based on the speculative decoding settings, which does not allow …" and go on to name the
fix) is the ValueError of ``VllmConfig._set_max_num_scheduled_tokens`` (``vllm/config/vllm.py``), raised while the
engine's config is built — before any weight loads, a pydantic ValidationError under ``vllm serve``. In 0.26 the
scheduler's budget for one step, unless ``--max-num-scheduled-tokens`` sets it, is ``max_num_batched_tokens -
max_num_new_slots_for_drafting * max_num_seqs``: the slots a drafter appends to the batch per request (DFlash's
``num_speculative_tokens``, a parallel drafter's ``num_speculative_tokens - 1``) set aside for every sequence the batch
may hold, and the check refuses a budget of 0 or below. The levers are vLLM's own: a larger ``--max-num-batched-tokens``
(more than the slots set aside), fewer ``--max-num-seqs``, or fewer ``num_speculative_tokens`` in
``--speculative-config``; GPU memory plays no part. The bare reason (the reporter's quote) is read too; its siblings
— the WARNING "… This may lead to suboptimal performance" for a small positive budget — are not. After the engine
served, not read.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["LITERAL", "PATTERN", "no_tokens"]

LITERAL = "which does not allow any tokens to be scheduled"
PATTERN = (
    r"max_num_scheduled_tokens is set to (?P<n>-?\d+)(?: based on the speculative decoding settings)?, which does not "
    r"allow any tokens to be scheduled"
)


def no_tokens(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The refused launch (INVALID_CONFIG), with the budget vLLM computed (0 or below)."""
    if run.stats_seen:
        return None
    n = int(m.group("n"))
    d = {"source": "config", "reason": "scheduled_tokens", "text": m.group(0), "max_num_scheduled_tokens": n}
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "scheduled-tokens", n))
