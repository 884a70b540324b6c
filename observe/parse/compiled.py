"""A traceback through the model's compiled graph, printed raw by an engine process. Pure.

V1 compiles the model with torch.compile; each forward (the start-up's dummy runs, then every step) calls
inductor's compiled graph: ``torch/_inductor/output_code.py`` ``CompiledFxGraph.__call__`` → its
``current_callable`` → the generated module under ``/tmp/torchinductor_<user>/`` (``call``). vLLM catches nothing
around the forward (an exception ends the engine core: its fatal-error handler, or the process's own uncaught
exception), so such a frame under an engine process's prefix (``EngineCore_DP0``, a ``VllmWorker``) is the
engine's failure even when the paste is cut before the exception and shows no frame of vLLM's own. Bare (no
prefix), such a traceback is anybody's torch program: nothing is told.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import engine_from_process
from observe.parse.failtypes import Failure, RunState, serving_or

__all__ = ["forward"]

_GRAPH = re.compile(
    r'File "[^"]*(?:/torch/_inductor/output_code\.py", line \d+, in (?P<f1>__call__)'
    r'|/torchinductor_[^/"]+/\w+/\w+\.py", line \d+, in (?P<f2>call))\b',
    re.ASCII,
)
_CAUSE = (
    "the model's compiled graph (torch inductor) raised while the engine ran a forward pass, and vLLM catches "
    "nothing there: the engine process ends (its exception line is below, or cut off)"
)


def forward(text: str, run: RunState, process: str | None) -> Failure | None:
    """The failure a frame of the compiled graph tells under an engine process's prefix, else None."""
    if run.requested or not process or engine_from_process(process) is None:
        return None
    m = _GRAPH.search(text)
    if m is None:
        return None
    func = m.group("f1") or m.group("f2")
    d = {"text": text[:300], "phase": serving_or(run, "unknown"), "frame": func, "cut": True}
    d["cause"] = _CAUSE
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", "compiled_graph"))
