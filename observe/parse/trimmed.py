"""The tail of V1's engine core's exception record, its level and timestamp trimmed away: ``[core.py:N] <Exc>: …``.

vLLM's logger (``LEVEL MM-DD hh:mm:ss [file.py:N] message``, 2025-02 →) repeats its prefix on every line of a
multi-line record (``NewLineFormatter``), so the traceback ``run_engine_core`` (``vllm/v1/engine/core.py``) logs as the
engine core dies ("EngineCore hit an exception: …", 0.8.x; "EngineCore failed to start." / "EngineCore encountered a
fatal error.", 0.8.5 →) ends in ``… [core.py:N] <Exception>: <message>``. A paste that kept only the bracketed
location (the level and timestamp cut off) still says whose record it is: a line opening with ``[core.py:N] `` then an
exception line (an ``…Error`` or ``…Exception``: a stop's KeyboardInterrupt or SystemExit is no failure), and nothing
before the bracket, is the engine core's error — critical, its phase unknown (the line
alone says neither start-up nor serving). Only that file and an exception line after it: any other ``[file.py:N]``
and any other text stay unread (many programs' loggers print a bracketed location). Pure: a row for ``failrows``.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["PATTERNS", "core_tail"]

#: the bracketed location at the line's start, then a Python exception line (``Name: message``), by the literal its
#: row needs: the exception's own word, which the failure rules hold already ("[core.py:" as a literal would send every
#: line of the engine core's logger to the failure rules: ``scan`` keeps lines with no failure literal off them)
PATTERNS: dict[str, str] = {
    word: r"^\[core\.py:\d+\] (?P<exc>[A-Za-z_][\w.]*" + word + r"): \S" for word in ("Error", "Exception")
}
_CAUSE = (
    "the last line of V1's engine core's exception record (vllm/v1/engine/core.py logs the traceback as the engine "
    "core dies), its level and timestamp cut off: the engine core raised {exc} (its traceback is cut off)"
)


def core_tail(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The engine core's exception record's last line, trimmed to ``[core.py:N] <Exc>: …`` (a bare line only: a line
    with vLLM's full prefix is read by its message; after a requested stop: none)."""
    if not ctx.bare or run.requested:
        return None
    text = msg.strip().split("] ", 1)[1]
    d = {"text": text[:300], "phase": "unknown", "cause": _CAUSE.format(exc=m.group("exc"))}
    return Failure(FailureKind.ERROR_LINE, d, False, ("errline", text[:120]))
