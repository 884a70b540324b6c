"""NeMo-RL's vLLM generation worker failing to push new weights into its running engine (a frame of its own code).

NeMo-RL's ``VllmGenerationWorker`` / ``VllmAsyncGenerationWorker`` (``nemo_rl/models/generation/vllm/
vllm_worker.py``, ``vllm_worker_async.py``) refits its engine between training steps: ``update_weights_via_ipc_zmq
(_async)`` and ``update_weights_from_collective(_async)`` call ``self.llm.collective_rpc("update_weights_…")`` into
vLLM's workers, and on an exception print its traceback (``traceback.print_exc()``) and return False, which fails the
step. The engine was built and had served before (a refit follows a generation step), so a frame of one of those
methods, its traceback cut before vLLM's own frames, is the weight sync failing after the start-up: phase "serving",
never a failed start. Pure: a frame line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

__all__ = ["LITERALS", "weight_sync"]

#: what the frame line holds (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = ("nemo_rl/models/generation/vllm/",)
_FRAME_RE = re.compile(
    r'File "[^"]*/nemo_rl/models/generation/vllm/vllm_worker(?:_async)?\.py", line \d+, '
    r"in (?P<func>update_weights_(?:via_ipc_zmq|from_collective)(?:_async)?)\b",
    re.ASCII,
)
_CAUSE = (
    "NeMo-RL's vLLM generation worker raised in {func}(): its collective_rpc pushing the trainer's new weights into "
    "the running engine's workers failed, after the start-up (the exception line is below it, or cut off)"
)


def weight_sync(text: str, run: RunState) -> Failure | None:
    """A frame (stripped) of NeMo-RL's weight-update method of its vLLM worker: the refit failed while serving
    (after a requested stop: none)."""
    if run.requested or LITERALS[0] not in text or (m := _FRAME_RE.search(text)) is None:
        return None
    func = m.group("func")
    d = {
        "text": text[:300],
        "phase": "serving",
        "frame": func,
        "cut": True,
        "cause": _CAUSE.format(func=func),
    }
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", func))
