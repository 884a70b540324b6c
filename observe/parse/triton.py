"""A vLLM engine's failed start that only Triton Inference Server's vLLM backend tells, on its own glog lines.

Triton's vLLM backend (triton-inference-server/vllm_backend, ``src/model.py``) builds the engine in a thread
(``_run_llm_engine``: ``async with build_async_engine_client_from_engine_args(…)``) and passes an exception raised
before the engine exists back to ``_init_engine``, which logs ``"[vllm] Failed to start engine: <traceback>"`` at
ERROR and re-raises it; Triton's Python stub then says ``Failed to initialize Python stub: <the exception>``. What
reaches the log is glog's (``E1216 02:12:49.624646 179 model.py:248] "[vllm] Failed to start engine: …"``), not a
vLLM record: the engine never started (the backend's call may not even match this vLLM's signature). The cause is
the stub's exception line, or the vLLM traceback above it. Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

_FAILED_START = "[vllm] Failed to start engine"
#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (_FAILED_START,)
_SAYS = (
    "Triton's vLLM backend: [vllm] Failed to start engine (its exception: the Python stub's line, or above)"
)
_CAUSE = (
    "Triton's vLLM backend could not start the engine ('[vllm] Failed to start engine'): the exception raised "
    "before the engine existed is on Triton's 'Failed to initialize Python stub' line or in vLLM's traceback "
    "above it (a backend whose call does not match this vLLM's signature fails so too)"
)


def death(text: str, run: RunState) -> Failure | None:
    """The failed start Triton's vLLM backend tells on a raw line (after a requested stop: none)."""
    if _FAILED_START not in text or run.requested:
        return None
    # the line's own quoted text is redacted; before_serving: the backend says the engine was never built
    d: dict[str, Any] = {"text": _SAYS, "phase": "startup", "cause": _CAUSE, "before_serving": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("triton", _FAILED_START))
