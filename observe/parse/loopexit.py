"""A traceback through the event loop's own ``run_forever``: what left the loop is a stop (KeyboardInterrupt,
SystemExit), never a failure of the task it ran, so a paste cut there is no failure of the server.

uvloop (``uvloop/loop.pyx``: ``Handle._run`` and ``TimerHandle._run`` in ``cbhandles.pyx`` re-raise only
``KeyboardInterrupt`` and ``SystemExit``, any other exception of a callback or task step goes to
``call_exception_handler``; ``_on_idle`` stores what was re-raised with ``_stop(ex)`` and ``_run`` raises it after
the loop stops, so it passes ``run_forever``) and asyncio (``events.Handle._run``, Python 3.8 →, the same two
re-raised) both let only those out of the loop. An exception of the task ``run_until_complete`` waits for
(``vllm serve``'s ``run_server`` failing to start) leaves through ``return future.result()`` instead: its frames go
from ``run_until_complete`` into the coroutine (``uvloop/__init__.py``'s ``wrapper``), never into ``run_forever``.
vLLM's API server turns SIGTERM during its start-up into ``KeyboardInterrupt("terminated")`` (api_server.py
``run_server``'s ``signal_handler``, 0.6 → 0.32), which prints this very stack. Pure: a frame line in, a bool out.
"""

from __future__ import annotations

import re

#: uvloop's Cython frame (``File "uvloop/loop.pyx", line N, in uvloop.loop.Loop.run_forever``) and asyncio's
#: (``File ".../asyncio/base_events.py", line N, in run_forever``)
_RUN_FOREVER_RE = re.compile(
    r'File "(?:uvloop/loop\.pyx", line \d+, in uvloop\.loop\.Loop\.|[^"]*/asyncio/base_events\.py", line \d+, in )'
    r"run_forever$",
    re.ASCII,
)
#: what a line must hold for ``escaped`` to read it (``frames.LITERALS``)
LITERALS: tuple[str, ...] = ("run_forever",)


def escaped(text: str) -> bool:
    """Whether text (a traceback line, stripped) is the event loop's ``run_forever`` frame: what the traceback
    ends in left the loop, a KeyboardInterrupt or SystemExit."""
    return "run_forever" in text and _RUN_FOREVER_RE.match(text) is not None
