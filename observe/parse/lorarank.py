"""vLLM's check of a LoRA adapter's rank against ``--max-lora-rank``. Pure.

"LoRA rank R is greater than max_lora_rank M." is one wording in every release that has LoRA: V0's
``WorkerLoRAManager._load_lora`` (``vllm/lora/worker_manager.py``, read in the 0.3.0 and 0.4.3 wheels) and
``PEFTHelper.validate_legal`` (``vllm/lora/peft_helper.py``, 0.32, where other refusals of the same adapter
may stand before it in one ValueError). vLLM sizes its LoRA buffers by ``max_lora_rank`` at start-up and
refuses a bigger adapter when it loads it: with ``--lora-modules`` while the server starts, which is a
launch vLLM's own check refused (``--max-lora-rank`` ≥ R passes it). An adapter loaded once the engine has
served (a request naming it, ``/v1/load_lora_adapter``) is not a launch refusal: left to the other rows.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["PATTERN", "rank_refused"]

PATTERN = r"LoRA rank (?P<rank>\d+) is greater than max_lora_rank (?P<max>\d+)\b"


def rank_refused(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    if run.stats_seen or run.shutdown:
        return None
    rank, cap = int(m.group("rank")), int(m.group("max"))
    d = {"source": "config", "flag": "--max-lora-rank", "value": cap, "lora_rank": rank, "text": m.group(0)}
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "lora-rank", rank, cap))
