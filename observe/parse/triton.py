"""A vLLM engine's failed start that only Triton Inference Server's vLLM backend tells, on its own glog lines.

Triton's vLLM backend (triton-inference-server/vllm_backend, ``src/model.py``) builds the engine in a thread
(``_run_llm_engine``: ``async with build_async_engine_client_from_engine_args(…)``) and passes an exception raised
before the engine exists back to ``_init_engine``, which logs ``"[vllm] Failed to start engine: <traceback>"`` at
ERROR and re-raises it; Triton's Python stub then says ``Failed to initialize Python stub: <the exception>``. What
reaches the log is glog's (``E1216 02:12:49.624646 179 model.py:248] "[vllm] Failed to start engine: …"``), not a
vLLM record: the engine never started (the backend's call may not even match this vLLM's signature). The cause is
the stub's exception line, or the vLLM traceback above it. Triton's model lifecycle then gives up on the model:
``E… model_lifecycle.cc:<n>] failed to load '<model>' version <v>: <status>`` (``src/model_lifecycle.cc``, logged
when the backend's model instance could not be created — the vLLM backend's ``initialize`` raised): the model, and its
engine, never served, whether or not the backend's own line above was kept.

While serving, the backend's ``generate`` catches what one request raised and logs ``"[vllm] Error generating
stream: <exception>"`` (``log_error``; ``log_info`` in older forks), answering that request with an error: one
request's failure — unless the exception is the engine's own (its Ray workers' ``execute_method`` failing, a Ray
system error, the engine dead, a CUDA error), which every request then meets: the engine fails while serving.
Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

import re
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

_FAILED_START = "[vllm] Failed to start engine"
_STREAM_ERROR = "[vllm] Error generating stream:"
#: Triton's model lifecycle (``src/model_lifecycle.cc``) when a model's load failed
_LOAD_FAILED = re.compile(r"\bmodel_lifecycle\.cc:\d+\] failed to load '")
#: an engine's own failure, as a request's exception names it (any other is that request's error)
_ENGINE_SIDE = ("RayWorkerWrapper.execute_method", "RaySystemError", "EngineDeadError", "CUDA error")
#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (_FAILED_START, _STREAM_ERROR, "] failed to load '")
_SAYS = (
    "Triton's vLLM backend: [vllm] Failed to start engine (its exception: the Python stub's line, or above)"
)
_CAUSE = (
    "Triton's vLLM backend could not start the engine ('[vllm] Failed to start engine'): the exception raised "
    "before the engine existed is on Triton's 'Failed to initialize Python stub' line or in vLLM's traceback "
    "above it (a backend whose call does not match this vLLM's signature fails so too)"
)

_LOAD_SAYS = "Triton: failed to load the model (model_lifecycle; its backend's exception follows on the line)"
_LOAD_CAUSE = (
    "Triton could not load the model: creating its backend's instance raised (the vLLM backend's initialize: "
    "its exception is on the line and in the 'At:' frames below) — the engine never served"
)

_STREAM_CAUSE = (
    "Triton's vLLM backend failed a request with the engine's own error ({side}): requests fail while it lasts "
    "(Ray's workers, or the engine, cannot run the step)"
)


def death(text: str, run: RunState) -> Failure | None:
    """The failed start, or the engine's failure while serving, Triton's vLLM backend tells on a raw line
    (after a requested stop: none)."""
    if run.requested:
        return None
    if _STREAM_ERROR in text:
        side = next((s for s in _ENGINE_SIDE if s in text), None)
        if side is None:
            return None  # one request's error, answered as such
        d: dict[str, Any] = {"text": text[:300], "phase": "serving", "cause": _STREAM_CAUSE.format(side=side)}
        return Failure(FailureKind.ERROR_LINE, d, False, ("triton", _STREAM_ERROR))
    if _LOAD_FAILED.search(text) is not None:
        d = {"text": _LOAD_SAYS, "phase": "startup", "cause": _LOAD_CAUSE, "before_serving": True}
        return Failure(FailureKind.ERROR_LINE, d, False, ("triton", "failed to load"))
    if _FAILED_START not in text:
        return None
    # the line's own quoted text is redacted; before_serving: the backend says the engine was never built
    d = {"text": _SAYS, "phase": "startup", "cause": _CAUSE, "before_serving": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("triton", _FAILED_START))
