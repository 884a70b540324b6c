"""The shell's report that the command it ran was killed by a segmentation fault, alone on a line.

When a foreground command dies of a signal, bash prints the signal's description (``strsignal``, in the locale's
words: glibc's "Segmentation fault", "段错误" in zh_CN) and, when a core was written, its own "(core dumped)" ("(核心已转储)"
in its zh_CN catalog): ``Segmentation fault (core dumped)``, ``段错误 (核心已转储)``. Launched as ``vllm serve …`` or
``python -m vllm.entrypoints…``, the command is vLLM's server, and no Python exception or vLLM record tells its
death (SIGSEGV ends the process at once; faulthandler's "Fatal Python error" is ``native``'s). Read narrowly: a line
that is only that word, optionally with the core-dump note — not a script's "line N: PID Segmentation fault … cmd",
not a word inside other text. Before any serving line it is the launch's failed start (the process died being built);
after one, the engine's death while serving. Any program's process crashes so: the line alone is anybody's
(``native.FORM``, ``frames.anybodys``); the log's vLLM lines make it the server's. Pure: a row for ``failrows``.

Its SIGKILL sibling: bash's "Killed" (strsignal(SIGKILL)) alone on a line, read only once vLLM's lines came in the
stream (``RunState.vllm_seen``: the killed command is then vLLM's), never after a stop asked for. SIGKILL is never
caught, so nothing else of vLLM's tells it: most often the kernel's OOM killer (host RAM or the container's memory
limit ran out: dmesg's Out of memory lines), else a ``kill -9``; vLLM's own fatal-signal handler (V1's
client, "Got fatal signal from worker processes") kills its process tree so too, after the failure it read. Before
any serving line, the launch's failed start in the phase the start-up lines reached (the diagnosis refines it:
loading the weights, …); after one, the engine's death while serving.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState
from observe.parse.native import FORM

__all__ = ["KILLED", "KILLED_PATTERN", "PATTERNS", "shell_killed", "shell_segfault"]

#: the line in each locale read, by its literal (English; Chinese, glibc's and bash's zh_CN catalogs)
PATTERNS: dict[str, str] = {
    "Segmentation fault": r"^\s*Segmentation fault(?: \(core dumped\))?\s*$",
    "段错误": r"^\s*段错误(?: \(核心已转储\))?\s*$",
}
_CAUSE = (
    "the shell reported the command it ran killed by SIGSEGV ('{text}', alone on its line): the launched process "
    "died of a native crash, no Python exception raised"
)


def shell_segfault(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The shell's segfault line (a bare line only; after a requested stop: none): the launch's failed start, or the
    engine's death once it served."""
    if not ctx.bare or run.requested:
        return None
    text = msg.strip()
    cause = _CAUSE.format(text=text)
    d: dict[str, object]
    if run.stats_seen:
        d = {"form": FORM, "signal": "SIGSEGV", "phase": "serving", "cause": cause}
        return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed", "signal", "SIGSEGV"))
    d = {"form": FORM, "text": text, "phase": "startup", "cause": cause, "before_serving": True}
    return Failure(FailureKind.ERROR_LINE, d, True, ("shell", "segfault"))


#: bash's word for a foreground command killed by SIGKILL, alone on its line
KILLED = "Killed"
KILLED_PATTERN = r"^\s*Killed\s*$"
_KILLED_CAUSE = (
    "the shell reported the command killed by SIGKILL ('Killed', alone on its line): nothing in the process can catch "
    "it, so no exception tells why — most often the kernel's OOM killer (host RAM or the container's memory limit, "
    "not GPU memory), else a kill -9 (or vLLM's own fatal-signal handler after the failure above it)"
)
_KILLED_FIX = (
    "check the kernel log (dmesg's Out of memory lines name the killed process) or the container's memory limit; if host RAM ran "
    "out, give the host or container more memory (or swap) or load a smaller model per process — GPU memory flags "
    "do not change host RAM"
)


def shell_killed(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The shell's 'Killed' line (a bare line, once vLLM's lines were read; after a requested stop: none): the
    launch's failed start, or the engine's death by SIGKILL once it served."""
    if not ctx.bare or not run.vllm_seen or run.requested:
        return None
    d: dict[str, object]
    if run.stats_seen:
        d = {"form": FORM, "signal": "SIGKILL", "phase": "serving", "cause": _KILLED_CAUSE}
        return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed", "signal", "SIGKILL"))
    d = {"form": FORM, "text": KILLED, "phase": "startup", "cause": _KILLED_CAUSE, "fix": _KILLED_FIX}
    return Failure(FailureKind.ERROR_LINE, d | {"before_serving": True}, True, ("shell", "killed"))
