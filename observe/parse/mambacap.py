"""V1's start-up check of ``max_num_seqs`` against a hybrid (Mamba / linear-attention) model's state cache. Pure.

"max_num_seqs (N) exceeds available Mamba cache blocks (M). Each decode sequence requires one Mamba cache block,
so CUDA graph capture cannot proceed. Please lower max_num_seqs to at most M or increase gpu_memory_utilization."
is a ValueError of ``CompilationConfig`` (``vllm/config/compilation.py``), raised through the GPU model runner's
``_check_and_update_cudagraph_mode`` while the worker initializes its KV cache: after the weights are loaded and
the KV cache profiled, before any CUDA graph is captured or a request is taken (vLLM PR #38270, March 2026, which
replaced #34571's silent capping of the capture sizes; the profiling pass skips it). Each decode sequence needs
one Mamba state block and the pool holds M, so the launch is refused by vLLM's own config check: N is the
``--max-num-seqs`` in force, ``--max-num-seqs`` M (vLLM's bound) passes it, and so does more KV / Mamba memory
(``--gpu-memory-utilization`` up, as vLLM says). A multiprocess executor's engine core re-raises it wrapped,
"RuntimeError: Worker failed with error '<the message>', please check the stack trace above for the root cause";
its numbers are read here, before the quoted text is redacted (no user content: the check's own words).
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["LITERAL", "PATTERN", "seqs_refused"]

LITERAL = "exceeds available Mamba cache blocks ("
PATTERN = r"\bmax_num_seqs \((?P<seqs>\d+)\) exceeds available Mamba cache blocks \((?P<blocks>\d+)\)"


def seqs_refused(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    seqs, blocks = int(m.group("seqs")), int(m.group("blocks"))
    if seqs <= blocks:  # vLLM raises only when max_num_seqs is above the pool: not this check's words
        return None
    d = {
        "source": "config",
        "flag": "--max-num-seqs",
        "value": seqs,
        "max_num_seqs": seqs,
        "mamba_blocks": blocks,
        "text": m.group(0),
    }
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "mamba-blocks", seqs, blocks))
