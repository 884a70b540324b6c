"""V1's "EngineCore hit an exception" over its busy loop's frames: a crash while serving, not a failed start.

vLLM 0.8's ``run_engine_core`` (v1/engine/core.py, 0.8.0 → 0.8.4; read in the 0.8.4 wheel) wraps both the core's
construction (``EngineCoreProc(...)``: loading, profiling, the KV cache, capture) and its ``run_busy_loop()`` in one
``try``, and its ``except Exception`` logs ``"EngineCore hit an exception: %s"`` with the traceback either way.
``run_busy_loop`` runs only once the core is built and has answered the client's start-up handshake, so when that
line's frames show ``run_busy_loop`` (or ``_process_engine_step`` under it) the core died while serving. The
parser reads those frames under the line's header (``parse.frames.read_under_header``). So it did when the line
came after the engine had served (a stats line, a request added: the parser's phase "serving"), whatever frames
the paste kept (a Ray compiled graph's, a cut traceback).

Pure: errors in, a verdict out.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from observe.failures.failing import NEAR_LINES
from observe.failures.kinds import FailureKind

#: the busy loop's frames (core.py 0.8 → 0.32)
BUSY_FRAMES = ("run_busy_loop", "_process_engine_step")
TITLE = "The engine core raised in its busy loop (serving)"
EVIDENCE = (
    "; its frames are the busy loop (run_busy_loop), which runs only after the core's start-up: the engine "
    "core died while serving; the traceback's exception line (when the paste has it) is the cause"
)


SERVED_EVIDENCE = (
    "; the engine had served before it (a stats line or a request earlier in this log), and the core's start-up "
    "ends before it serves: the engine core died while serving; the traceback's exception line (when the paste has "
    "it) is the cause"
)


def crash_while_serving(e: Any, errors: Sequence[Any]) -> str | None:
    """Why e, V1's "EngineCore hit an exception", is a crash while serving (the evidence's tail: its traceback,
    the frames after it from the same source, is the busy loop's; or the engine had served before it), else None."""
    if e.kind != FailureKind.ENGINE_CORE_FAILED or "EngineCore hit an exception" not in e.message:
        return None
    if any(
        x.kind == FailureKind.ERROR_LINE
        and x.details.get("frame") in BUSY_FRAMES
        and x.env.source == e.env.source
        and 0 < x.env.lineno - e.env.lineno <= NEAR_LINES
        for x in errors
    ):
        return EVIDENCE
    return SERVED_EVIDENCE if e.details.get("phase") == "serving" else None
