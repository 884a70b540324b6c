"""IPython's traceback, as a notebook (Jupyter, VS Code) prints an uncaught exception in a cell.

    ---------------------------------------------------------------------------
    OutOfMemoryError                          Traceback (most recent call last)
    File ~/…/site-packages/vllm/v1/worker/gpu_model_runner.py:2874, in GPUModelRunner._dummy_sampler_run(self, hidden_states)
       2873 try:
    -> 2874     ...

The header names the exception before any frame (Python's own print names it last), and a frame is
``File <path>:<line>, in <Class>.<function>(<args>)`` (IPython 8; Jupyter links the path: ``File
[/…/llm.py:214](url), in …``) or ``[/…/vllm/utils.py](url) in inner(*args, **kwargs)`` (IPython 7 in Colab),
the source around the call under it with ``---->`` / ``->`` at the line that raised. A paste cut under the
header still says what was raised:

- ``OutOfMemoryError`` is PyTorch's ``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError`` before 2.5),
  raised only by its caching allocator — an out-of-memory, its figures on the exception line the paste may
  have cut: held from the header (``header``), its phase from the frames, which (rewritten in Python's own
  shape, ``frame``) are read like any traceback's;
- any type, once a frame in vLLM's package follows (``Notebook``; a Jupyter link or Colab's IPython 7 frame,
  ``frame_match``): an exception out of vLLM, its message cut off (an ``OutOfMemoryError`` there the OOM);
  under ``LLM.__init__``, vLLM's offline entry point, the engine's start-up. So is the cell's own line that
  raised (IPython's ``---->`` arrow) when it calls ``LLM(…)`` (``_ENTRY_RE``) and the paste ends before any
  frame of vLLM's package (``Notebook.entry``): the exception came out of that constructor, its frames cut.

Pure: a line in, a Failure, a frame line or a phase out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState
from observe.parse.startup import OOM_PHASE_FRAMES

_HEADER_RE = re.compile(r"^(?P<type>[A-Za-z_][\w.]*)\s{2,}Traceback \(most recent call last\)", re.ASCII)
_FRAME_RE = re.compile(r"^File (?P<path>\S+):(?P<line>\d+), in (?:\w+\.)*(?P<fn>\w+)\(", re.ASCII)
#: the lines IPython prints inside a traceback besides its frames: a frame's source line, its line number first
#: ("   2873 try:", "-> 2874     x = f()", "----> 1 llm = LLM(…)"), Colab's "12 frames", the cell's own frame
_PIECE_RE = re.compile(r"^(?:(?:-*>\s*)?\d+\s|Cell In\[)", re.ASCII)
#: a frame in vLLM's package in any of IPython's shapes, a Jupyter link or Colab's IPython 7 form included
_VLLM_FRAME_RE = re.compile(
    r"^(?:File )?\[?(?P<path>[^\s\[\]()]*/vllm/[\w/]+\.py)(?::\d+)?\]?(?:\([^)\s]*\))?,? in (?P<func>[\w.<>]+)\(",
    re.ASCII,
)
#: vLLM's offline entry point: a failure under ``LLM.__init__`` is the engine's start-up
_START = ("LLM.__init__",)
#: the cell's line that raised (IPython's arrow, its line number) calling that entry point: ``----> 4 llm = LLM(…)``
_ENTRY_RE = re.compile(r"^-+>\s*\d+\s.*?(?<![\w.])(?:vllm\.)?LLM\(", re.ASCII)
#: what such a line must hold to be read at all (``frames.LITERALS``: a line with no literal is skipped)
LITERALS = ("LLM(",)


def _oom(typ: str) -> bool:
    """Whether the header's type is PyTorch's allocator's out-of-memory (``torch.cuda.`` or not)."""
    return typ.rsplit(".", 1)[-1] == "OutOfMemoryError"


def header(text: str) -> Failure | None:
    """The failure IPython's header names, when it names one without its message (an out-of-memory)."""
    m = _HEADER_RE.match(text)
    if m is None or not _oom(m.group("type")):
        return None
    d = {"device": None, "phase": None, "notebook": True, "cause": "the exception line is cut off"}
    return Failure(FailureKind.OOM, d, True, (FailureKind.OOM, None, None, None))


def bare_header(text: str, run: RunState) -> Failure | None:
    """IPython's header of any exception type but an out-of-memory (``header`` holds that one), read once vLLM's lines
    came in the stream and before it served: the failure it tells if it turns out to be the stream's last line (the
    paste ends under it, its frames and message cut off — ``reporting`` decides that at the end of the stream). A
    cell's output is the stream of what it ran; its uncaught exception right after vLLM's lines is that cell failing
    with vLLM in it. Where (the engine's start or a later call of the cell) the cut header does not say: unknown."""
    m = _HEADER_RE.match(text)
    if m is None or _oom(m.group("type")) or not run.vllm_seen or run.stats_seen or run.requested:
        return None
    typ = m.group("type")
    text = f"{typ} in a notebook cell right after vLLM's lines (its frames and message are cut off)"
    d = {"type": typ, "text": text, "phase": "unknown", "frame": "<cell>", "cut": True, "notebook": True}
    return Failure(FailureKind.EXCEPTION, d, False, ("exc", typ, "<cell>"))


def frame(text: str) -> str | None:
    """IPython's frame line in Python's own shape (``File "<path>", line N, in <function>``), if text is one."""
    m = _FRAME_RE.match(text)
    return None if m is None else f'  File "{m.group("path")}", line {m.group("line")}, in {m.group("fn")}'


def oom_frame(held: Failure, text: str) -> Failure | None:
    """An out-of-memory held under IPython's header, on a frame line of it: with the first frame of vLLM's
    package it names and the phase the frame names (None: text is no frame of IPython's)."""
    std, m = frame(text), frame_match(text)
    if std is None and m is None:
        return None
    d = dict(held.details)
    fn: str = m.group("func") if m is not None else str(std).rsplit(" in ", 1)[-1].strip()
    if m is not None:
        d.setdefault("frame", fn)  # the first frame of vLLM's package under the header
    phase = "startup" if fn in _START else OOM_PHASE_FRAMES.get(fn.rsplit(".", 1)[-1])
    if phase is not None:
        d["phase"] = phase
    return Failure(held.kind, d, held.fatal, held.key)


def frame_match(text: str) -> re.Match[str] | None:
    """A frame in vLLM's package as IPython prints it (its path and function), if text is one."""
    return _VLLM_FRAME_RE.match(text) if "/vllm/" in text else None


def entry_line(text: str) -> bool:
    """Whether text is a cell's raising line calling vLLM's ``LLM(…)`` (``_ENTRY_RE``)."""
    return _ENTRY_RE.match(text.strip()) is not None


def piece(text: str) -> bool:
    """Whether text is one of the lines IPython prints inside a traceback besides its frames (``_PIECE_RE``)."""
    return _PIECE_RE.match(text.strip()) is not None


class Notebook:
    """One stream's IPython traceback: the header's exception type, until a frame in vLLM's package tells
    (an out-of-memory's header is held from the header on, ``header``, so none reaches this)."""

    def __init__(self) -> None:
        self._type: str | None = None
        self._entry = False  # the cell's line that raised calls LLM(…) (``_ENTRY_RE``)

    def __repr__(self) -> str:
        # its state, as the parser's other parts show theirs (tests/test_scanc.py compares them)
        return f"Notebook(type={self._type!r}, entry={self._entry!r})"

    def header(self, text: str) -> None:
        h = _HEADER_RE.match(text)
        self._type = h.group("type") if h is not None else None
        self._entry = False

    def frame(self, text: str, run: RunState) -> Failure | None:
        """The failure the first vLLM frame under an IPython header tells (then none till the next header);
        the cell's raising line calling ``LLM(…)`` is kept for ``entry``."""
        if self._type is None or run.requested:
            return None
        f = frame_match(text)
        if f is None:
            self._entry = self._entry or _ENTRY_RE.match(text) is not None
            return None
        return self._told(f.group("func"), run.stats_seen)

    def entry(self, requested: bool) -> Failure | None:
        """At the end of the stream: the cell's raising line called ``LLM(…)`` and no vLLM frame followed."""
        if self._type is None or not self._entry or requested:
            return None
        return self._told(_START[0], False)

    def _told(self, func: str, stats_seen: bool) -> Failure:
        typ = str(self._type)
        self._type, self._entry = None, False
        phase = "startup" if func in _START else ("serving" if stats_seen else "unknown")
        text = f"{typ} out of {func}() in a notebook (its message is cut off)"
        d = {"type": typ, "text": text, "phase": phase, "frame": func, "cut": True}
        return Failure(FailureKind.EXCEPTION, d, False, ("exc", typ, func))
