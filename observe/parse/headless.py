"""A vLLM process's traceback printed raw, cut above its header: a run of frames of vLLM's code (or its kernels')
behind the process's prefix, no ``Traceback (most recent call last):`` and no exception line — the middle of the
engine core's (or a worker's) uncaught exception, the paste cut at both ends.

Python prints a process's uncaught exception raw (multiprocessing's ``Process.run`` under ``_bootstrap``: "Process
EngineCore_DP0:", the header, the frames, the exception line), and vLLM's process prefix (``(EngineCore_DP0 pid=N)``,
``(VllmWorker TP0 pid=N)``: vllm/utils ``decorate_logs`` / ``_add_prefix`` on the process's stdout and stderr) is put
on every line of it. A process's raw frame lines with no header of its own before them are such a traceback cut above
its head; the excerpt's first line may even start mid-prefix (``ngineCore_DP0 pid=N)   File "…"``). It is read
as that process's cut traceback, the phase unknown (its cause cut off): an engine_error, as a headed one cut before
its exception line already is (``frames.RawTracebacks``).

Narrowly: only while the process's raw output showed no header of its own and told nothing, only behind a
process prefix (a pid; a bare paste's frames are ``frames``' and ``unread``'s), and only at the third frame of vLLM's
package or its kernels' (triton, flashinfer, vllm_flash_attn), one of them vLLM's own: one stray frame line is
nobody's failure. It tells at that third frame, never waiting for a next line (a live stream may not send one); once
per process; none after a stop was asked for, or once any raw line of that process told something (its reading is
that line's). Frame lines, headers and told lines only: the parser's prefilter may skip any other line.

State per process (pid, rank); a line in, a Failure or None out.
"""

from __future__ import annotations

import re
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState
from observe.parse.frames import vllm_frame

__all__ = ["Headless"]

Who = tuple[int | None, int | None]

#: the excerpt's first line cut inside vLLM's process prefix: the prefix's tail, its pid, then a frame line
_CUT_PREFIX_RE = re.compile(r"^[A-Za-z0-9_ ]*? pid=(?P<pid>\d+)\)\s+(?P<frame>File \".*)$", re.ASCII)
_FRAME_RE = re.compile(r'^File "(?P<path>[^"]+)", line \d+, in (?P<func>\S+)', re.ASCII)
#: vLLM's own package: ``frames.vllm_frame`` (its top folders, its platform plugins), and its vendored flash-attn
#: (``vllm/vllm_flash_attn``, its triton kernels); the kernels' packages it calls into, as installed. Never a folder
#: merely named vllm (a conda env's ``envs/vllm/``)
_FLASH_ATTN_RE = re.compile(r'^File "(?:[^"]*/)?vllm/vllm_flash_attn/[\w/]+\.py"', re.ASCII)
_KERNELS_RE = re.compile(r"/(?:site|dist)-packages/(?:triton|flashinfer)/", re.ASCII)
#: frames of vLLM's or its kernels' code before the run is read (one of them vLLM's own)
FRAMES = 3
_CAUSE = (
    "the middle of {proc}'s traceback printed raw, its header and its exception line cut off "
    "(the innermost frame read: {func} in {path})"
)


class Headless:
    """Per process: whether its raw traceback had a header or told something, and how many frames of vLLM's (or its
    kernels') were read."""

    def __init__(self) -> None:
        self._closed: set[Who] = set()  # processes whose raw traceback had its header, or told something
        # an open headless run per process: frames read, vLLM's own among them, the first of vLLM's functions
        self._runs: dict[Who, tuple[int, int, str]] = {}

    def line(self, msg: str, ctx: Any, run: RunState, told: bool) -> Failure | None:
        """The failure this raw line tells as a headless traceback's third frame, if it is one. Only its frame lines,
        a header and what was told count (the parser's prefilter may skip any other line)."""
        text = msg.strip()
        who: Who = (ctx.pid, ctx.rank)
        if ctx.pid is None and ctx.rank is None and (m := _CUT_PREFIX_RE.match(text)) is not None:
            who, text = (int(m.group("pid")), None), m.group("frame")
        elif ctx.pid is None or not getattr(ctx, "process", None):
            return None  # a bare line or a rank prefix alone: not a vLLM process's raw output
        if who in self._closed:
            return None
        if told or run.requested or "Traceback (most recent" in text:
            self._closed.add(who)  # a headed traceback (frames.RawTracebacks reads it), or one already read
            self._runs.pop(who, None)
            return None
        fm = _FRAME_RE.match(text)
        if fm is None:
            return None  # a source or caret line
        held = self._runs.setdefault(who, (0, 0, ""))
        path, func = fm.group("path"), fm.group("func")
        own = vllm_frame(text) is not None or _FLASH_ATTN_RE.match(text) is not None
        if not own and _KERNELS_RE.search(path) is None:
            return None  # another package's frame (torch, the interpreter): neither counts nor ends the run
        n, n_own, first = held[0] + 1, held[1] + int(own), held[2] or (func if own else "")
        if n < FRAMES or n_own == 0:
            self._runs[who] = (n, n_own, first)
            return None
        del self._runs[who]
        self._closed.add(who)  # once
        proc = getattr(ctx, "process", None) or f"the process (pid {who[0]})"
        d = {
            "text": text[:300],
            "phase": "unknown",
            "frame": first,
            "cut": True,
            "headless": True,
            "cause": _CAUSE.format(
                proc=proc, func=func, path=path.rsplit("/", 2)[-2] + "/" + path.rsplit("/", 1)[-1]
            ),
        }
        return Failure(FailureKind.ERROR_LINE, d, False, ("frame", first))
