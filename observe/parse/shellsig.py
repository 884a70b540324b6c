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
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState
from observe.parse.native import FORM

__all__ = ["PATTERNS", "shell_segfault"]

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
