"""A vLLM process's traceback printed raw, cut above its header: a run of frames of vLLM's code (or its kernels')
behind the process's prefix, no ``Traceback (most recent call last):`` and no exception line — the middle of the
engine core's (or a worker's) uncaught exception, the paste cut at both ends.

Python prints a process's uncaught exception raw (multiprocessing's ``Process.run`` under ``_bootstrap``: "Process
EngineCore_DP0:", the header, the frames, the exception line), and vLLM's process prefix (``(EngineCore_DP0 pid=N)``,
``(VllmWorker TP0 pid=N)``: vllm/utils ``decorate_logs`` / ``_add_prefix`` on the process's stdout and stderr) is put
on every line of it. A process's raw output that opens on a frame line, not on that header, is such a traceback cut
above its head; the excerpt's first line may even start mid-prefix (``ngineCore_DP0 pid=N)   File "…"``). It is read
as that process's cut traceback, the phase unknown (its cause cut off): an engine_error, as a headed one cut before
its exception line already is (``frames.RawTracebacks``).

Narrowly: only while the process's raw output opened on frames (no header of its own before them), only behind a
process prefix (a pid; a bare paste's frames are ``frames``' and ``unread``'s), and only at the third frame of vLLM's
package or its kernels' (triton, flashinfer, vllm_flash_attn), one of them vLLM's own: one stray frame line is
nobody's failure. It tells at that third frame, never waiting for a next line (a live stream may not send one); once
per traceback; none after a stop was asked for, or once any line of that run told something else.

State per process (pid, rank); a line in, a Failure or None out.
"""

from __future__ import annotations

import re
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

__all__ = ["Headless"]

Who = tuple[int | None, int | None]

#: the excerpt's first line cut inside vLLM's process prefix: the prefix's tail, its pid, then a frame line
_CUT_PREFIX_RE = re.compile(r"^[A-Za-z0-9_ ]*? pid=(?P<pid>\d+)\)\s+(?P<frame>File \".*)$", re.ASCII)
_FRAME_RE = re.compile(r'^File "(?P<path>[^"]+)", line \d+, in (?P<func>\S+)', re.ASCII)
#: vLLM's own package (its vendored flash-attn included), and the kernels' packages it calls into
_VLLM_RE = re.compile(r"/vllm(?:_flash_attn)?/", re.ASCII)
_KERNELS_RE = re.compile(r"/(?:triton|flashinfer)/", re.ASCII)
#: frames of vLLM's or its kernels' code before the run is read (one of them vLLM's own)
FRAMES = 3
_CAUSE = (
    "the middle of {proc}'s traceback printed raw, its header and its exception line cut off "
    "(the innermost frame read: {func} in {path})"
)


class Headless:
    """Per process: whether its raw output opened on frames, and how many of vLLM's (or its kernels') were read."""

    def __init__(self) -> None:
        self._seen: set[Who] = set()  # processes whose raw output was read (a header or anything else)
        self._runs: dict[
            Who, tuple[int, int, str]
        ] = {}  # an open headless run: frames, vLLM's frames, its func

    def line(self, msg: str, ctx: Any, run: RunState, told: bool) -> Failure | None:
        """The failure this raw line tells as a headless traceback's third frame, if it is one."""
        text = msg.strip()
        who: Who = (ctx.pid, ctx.rank)
        if ctx.pid is None and ctx.rank is None and (m := _CUT_PREFIX_RE.match(text)) is not None:
            who, text = (int(m.group("pid")), None), m.group("frame")
        elif ctx.pid is None or not getattr(ctx, "process", None):
            return None  # a bare line or a rank prefix alone: not a vLLM process's raw output
        opened = who not in self._seen
        self._seen.add(who)
        if told or run.requested or "Traceback (most recent" in text:
            self._runs.pop(who, None)
            return None
        fm = _FRAME_RE.match(text)
        if opened:
            if fm is None:
                return None  # its raw output opened on something else: a traceback's head is there
            self._runs[who] = (0, 0, "")
        held = self._runs.get(who)
        if held is None or fm is None:
            return None  # no open run, or a source / caret line of it
        path, func = fm.group("path"), fm.group("func")
        own = _VLLM_RE.search(path) is not None
        if not own and _KERNELS_RE.search(path) is None:
            return None  # another package's frame (torch, the interpreter): neither counts nor ends the run
        n, n_own, first = held[0] + 1, held[1] + int(own), held[2] or (func if own else "")
        if n < FRAMES or n_own == 0:
            self._runs[who] = (n, n_own, first)
            return None
        del self._runs[who]  # once per traceback
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
