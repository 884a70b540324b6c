"""The fallback for a traceback no rule read: its frames in vLLM's own package are still a failure.

Each blind set of issue 32 found failing logs read as healthy because their traceback had a shape no
rule knew yet (cut mid-way, frames under a wrapper's logger, another program's sentence around it).
Whatever the shape, a frame of vLLM's own package (``File ".../vllm/..."``, ``frames.vllm_frame``) in an
ERROR / CRITICAL record or a raw line (no level: a process or rank prefix, or bare) is a traceback
through vLLM's code. When no rule told anything of the stream's failure lines, the last such frame is
reported as a traceback cut off: an ``error_line`` (``cut``, ``unread``) with the phase the frame tables
give (``PHASE_FRAMES``, ``SERVING_FRAMES``), else "unknown"; the catch-all (``failures.failing``) counts it
only when nothing else in the run is a failure, and says what decides the cause.

Not a failure: a requested stop (the parser's own ``requested``), and a traceback of Ctrl-C, ``sys.exit``,
a task cancelled or a client gone (``_STOPS``): frames under those tell nothing. A request vLLM refused
(a 4xx) logs its own ERROR record, which a rule reads, so the stream was told.

Pure: lines in, at most one Failure out at the end of the stream.
"""

from __future__ import annotations

from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse import frames
from observe.parse.failures import Failure

Held = tuple[Failure, str, Any]  # a failure, its line and that line's ctx
#: exception names whose traceback is a stop or a client's, not the engine's failure (asyncio's and
#: concurrent.futures' CancelledError, starlette's ClientDisconnect, uvicorn's / vLLM's ClientDisconnected)
_STOPS = ("KeyboardInterrupt", "SystemExit", "CancelledError", "ClientDisconnect", "GeneratorExit")


class Unread:
    """One stream's last vLLM frame that no rule read, and whether anything else was told or stopped."""

    def __init__(self) -> None:
        self._last: tuple[str, str, Any] | None = None  # function, line, ctx
        self._told = self._stopped = False

    def note(self, f: Failure | None, msg: str, ctx: Any, failure_line: bool) -> None:
        """A line the failure rules saw (failure_line: an ERROR / CRITICAL record or a raw line), and
        what they made of it (f)."""
        if f is not None:
            self._told = True
        elif failure_line:
            if any(s in msg for s in _STOPS):
                self._stopped = True
            elif (m := frames.vllm_frame(msg)) is not None:
                self._last = (m.group("func"), msg, ctx)

    def release(self, requested: bool, held: list[Held]) -> list[Held]:
        """End of stream: what the raw tracebacks held (``frames.RawTracebacks.release``), else the unread
        traceback's failure, if there is one."""
        if held or self._last is None or self._told or self._stopped or requested:
            return held
        func, msg, ctx = self._last
        phase = frames.PHASE_FRAMES.get(func) or frames.SERVING_FRAMES.get(func) or "unknown"
        d = {"text": msg.strip()[:300], "phase": phase, "frame": func, "cut": True, "unread": True}
        return [(Failure(FailureKind.ERROR_LINE, d, False, ("unread", func)), msg, ctx)]
