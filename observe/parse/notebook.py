"""A traceback as Jupyter / IPython prints it, through vLLM's own code (an offline ``LLM(...)`` in a notebook).

IPython's verbose traceback (IPython.core.ultratb, 7 → 8, as Jupyter and Colab show it) has its own shape: the
header puts the exception's type first (``OutOfMemoryError                          Traceback (most recent call
last)``), a frame is ``File /…/vllm/entrypoints/llm.py:214, in LLM.__init__(self, …)`` (IPython 8; Jupyter links
the path: ``File [/…/llm.py:214](url), in …``) or ``[/…/vllm/utils.py](url) in inner(*args, **kwargs)`` (IPython 7
in Colab), and the source around the call is printed under it with ``---->`` / ``->`` at the line that raised. The
exception's message comes last, and a paste often stops before it. So the type read off the header and a frame in
vLLM's package tell, even with the message cut off: an ``OutOfMemoryError`` is the out-of-memory, any other type
an exception out of vLLM (its message, when it comes, explains it). Pure: lines in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failures import Failure, RunState

_HEADER_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)", re.ASCII)
_FRAME_RE = re.compile(
    r"^(?:File )?\[?(?P<path>[^\s\[\]()]*/vllm/[\w/]+\.py)(?::\d+)?\]?(?:\([^)\s]*\))?,? in (?P<func>[\w.<>]+)\(",
    re.ASCII,
)
#: the lines IPython prints around a frame's source: the arrow at the line that raised, the cell's own frame
_PIECE_RE = re.compile(r"^(?:-*> ?\d+ |Cell In\[\d+\]|\d+ frames$)", re.ASCII)
#: vLLM's offline entry point: a failure under ``LLM.__init__`` is the engine's start-up
_START = ("LLM.__init__",)


def frame_match(text: str) -> re.Match[str] | None:
    """A frame in vLLM's package as IPython prints it (its path and function), if text is one."""
    return _FRAME_RE.match(text) if "/vllm/" in text else None


def piece(text: str) -> bool:
    """Whether text is one of the lines IPython prints inside a traceback besides its frames."""
    return _PIECE_RE.match(text) is not None


class Notebook:
    """One stream's IPython traceback: the header's exception type, until a frame in vLLM's package tells."""

    def __init__(self) -> None:
        self._type: str | None = None

    def header(self, text: str) -> None:
        h = _HEADER_RE.match(text)
        self._type = h.group("type") if h is not None else None

    def frame(self, text: str, run: RunState) -> Failure | None:
        """The failure the first vLLM frame under an IPython header tells (then none till the next header)."""
        if self._type is None or run.requested:
            return None
        f = frame_match(text)
        if f is None:
            return None
        typ, func = self._type, f.group("func")
        self._type = None
        phase = "startup" if func in _START else ("serving" if run.stats_seen else "unknown")
        if typ.rsplit(".", 1)[-1] == "OutOfMemoryError":
            d = {"device": None, "frame": func, "notebook": True, "phase": phase}
            return Failure(FailureKind.OOM, d, True, (FailureKind.OOM, None, None, None))
        text = f"{typ} out of {func}() in a notebook (its message is cut off)"
        d = {"type": typ, "text": text, "phase": phase, "frame": func, "cut": True}
        return Failure(FailureKind.EXCEPTION, d, False, ("exc", typ, func))
