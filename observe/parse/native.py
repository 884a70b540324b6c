"""A process's native crash, as the crash handlers loaded into a vLLM process print it (not vLLM records).

A signal that kills the process (a segfault in a kernel launch, NCCL's proxy, FlashInfer's planner, a KV swap)
ends it without a Python exception, so no traceback's exception line and no vLLM record tells it; what does is:

- Python's ``faulthandler`` (enabled by torch and Ray): ``Fatal Python error: Segmentation fault`` (or
  ``Aborted``, ``Bus error``, ``Floating point exception``, ``Illegal instruction``), then each thread's stack,
  most recent call first, as ``File "…", line N in f`` (no comma: ``frames`` reads these frames too);
- abseil's failure-signal handler, which Ray's and gRPC's processes install: ``*** SIGSEGV received at time=…
  on cpu N ***`` with its ``PC: @ …`` frames, also under Ray's ``logging.cc`` prefix (it prints the same line for
  SIGTERM, a stop someone asked for, not a fault: no crash, ``hosted.STOP_SIGNALS``);
- PyTorch's native stack dump (2.8 →): ``!!!!!!! Segfault encountered !!!!!!!`` with the C++ frames;
- UCX's error handler (loaded with NCCL's / NIXL's UCX transports): ``Caught signal 11 (Segmentation fault …)``, then
  ``==== backtrace (tid: N) ====`` and a frame a line, ``%2d 0x%016lx %s()  %s:%u`` (ucs/debug/debug.c
  ``UCS_DEBUG_BACKTRACE_LINE_FMT``, ``???`` for an unknown symbol). It prints that backtrace only on the way to the
  process's death (``ucs_handle_error``: a fatal signal, re-raised after it, or ``ucs_fatal``, which aborts), so one
  such frame under a process prefix, the head cut, is that process dying (``ucx_frame``; bare, it is anybody's).

``hosted`` reads the first two on a line under a process prefix (that process's death) and tells which signal
(``hosted.fatal_signal``); this reader takes them where no prefix is, and PyTorch's dump. The process is gone:
``engine_crashed`` (fatal), while serving once stats were seen, else at an unknown point (the frames under it tell
a start-up's: ``frames.cut_frame``). Any program's process crashes so, so the line alone is not vLLM's
(``frames.anybodys``): a vLLM frame in the log makes it vLLM's. Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState, serving_or
from observe.parse.hosted import fatal_signal

_TORCH_DUMP = "!!!!!!! Segfault encountered !!!!!!!"
#: what a line must hold for ``crash`` to read it beyond ``hosted.LITERALS`` (``triggers.TRIGGERS`` via
#: ``frames.LITERALS``)
LITERALS: tuple[str, ...] = (_TORCH_DUMP, ") [0x", "()  ")
#: a frame of UCX's backtrace (``UCS_DEBUG_BACKTRACE_LINE_FMT``): its number, address, symbol (``???``, ``??`` when
#: unknown) with ``()``, two spaces, and the file with its line (``???:0`` when unknown)
_UCX_FRAME_RE = re.compile(r"^\d{1,3} 0x[0-9a-f]{16} (?P<sym>[\w.:~<>]+|\?\?\??)\(\)  \S+:\d+$", re.ASCII)
_UCX_CAUSE = (
    "a process printed UCX's native backtrace (its error handler does so only on the way to the process's death: a "
    "fatal signal such as SIGSEGV, re-raised after it, or a UCX fatal error, which aborts): a native crash, the head "
    "naming the signal cut off — no Python exception is raised"
)
#: a frame of a native backtrace as glibc's backtrace_symbols prints it, ``<binary>(<symbol>+0x<offset>)
#: [0x<address>]``, behind tt-metal's ``--- `` (its TT_THROW exceptions carry the backtrace in their message)
_BT_FRAME_RE = re.compile(r"^(?:--- )?\S+\((?P<sym>[\w.:~<>]*)\+0x[0-9a-f]+\) \[0x[0-9a-f]+\]$", re.ASCII)
#: faulthandler's lines between the error and the frames (``Current thread 0x… (most recent call first):``,
#: ``Thread 0x…``, ``Stack (most recent call first):``) and after them (``Extension modules: …``): pieces of the
#: crash's report, which do not end it as a bare traceback's exception line would (``frames.RawTracebacks``)
_PIECE_RE = re.compile(r"(?:Current thread|Thread|Stack) .*\(most recent call first\):$|Extension modules: ")
#: the form of this module's failures (``frames.anybodys``: a native crash alone is anybody's)
FORM = "native_crash"


def piece(text: str) -> bool:
    """Whether text (a stripped line) is a piece of faulthandler's report around the stacks (``_PIECE_RE``)."""
    return _PIECE_RE.match(text) is not None


def crash(text: str, run: RunState) -> Failure | None:
    """The process's death by a signal a crash handler reports on text (after a requested stop: none)."""
    if run.requested:
        return None
    if (sig := fatal_signal(text)) is not None:
        by = "Python's faulthandler" if "Fatal Python error" in text else "the failure-signal handler"
    elif _TORCH_DUMP in text:
        sig, by = "SIGSEGV", "PyTorch's stack dump"
    else:
        return None
    d = {
        "form": FORM,
        "signal": sig,
        "phase": serving_or(run, "unknown"),
        "cause": f"a process died of {sig} ({by}): a native crash, in the frames under it (a CUDA kernel, NCCL, an "
        "attention backend) — no Python exception is raised",
    }
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed", "signal", sig))


def backtrace_frame(text: str) -> str | None:
    """The symbol of a native backtrace's frame (``_BT_FRAME_RE``; ``?`` when it has none), else None. In one of
    vLLM's ERROR records (V0 MQLLMEngine.start's ``logger.exception(repr(e))``, engine/multiprocessing/engine.py) it
    is a piece of an exception vLLM caught, logged with its native stack, the record cut before its head."""
    m = _BT_FRAME_RE.match(text)
    return None if m is None else m.group("sym") or "?"


def ucx_frame(text: str, run: RunState) -> Failure | None:
    """The process's death a frame of UCX's backtrace tells (text: a stripped line under a process prefix; after a
    requested stop: none)."""
    if run.requested or _UCX_FRAME_RE.match(text) is None:
        return None
    d = {
        "form": FORM,
        "signal": None,
        "phase": serving_or(run, "unknown"),
        "cause": _UCX_CAUSE,
    }
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed", "ucx_backtrace"))
