"""FastChat's vLLM worker dying before it registered: its start-up, not an error of unknown phase.

FastChat's ``fastchat/serve/vllm_worker.py`` builds the vLLM engine first (``AsyncLLMEngine.from_engine_args``), then
its ``VLLMWorker``, whose ``__init__`` logs ``Loading the model [...] on worker <id>, worker type: vLLM worker...`` and
reads the engine (its tokenizer, its model config), then registers with the controller (``Register to controller``)
and only then ``uvicorn.run`` serves. A traceback through runpy's ``_run_module_as_main`` (the ``python -m`` launch
raising to the top: ``mainexit``) while that window is open — the announcement read, no registration, no uvicorn ready
line, no stats line — is the worker failing to come up: the failed start-up of the vLLM worker (``before_serving``).
Pure state per stream: lines in, a Failure rewritten or left.
"""

from __future__ import annotations

import re

from observe.parse.failtypes import Failure

__all__ = ["LITERALS", "Window"]

_LOADING_RE = re.compile(r"Loading the model \[.*\] on worker \w+, worker type: vLLM worker\.\.\.", re.ASCII)
_READY = ("Register to controller", "Uvicorn running on", "Application startup complete")
#: what a line must hold to be read here
LITERALS: tuple[str, ...] = ("worker type: vLLM worker", "Register to controller")
_CAUSE = (
    "FastChat's vLLM worker raised to the top of its python -m launch after announcing 'Loading the model … worker "
    "type: vLLM worker...' and before registering with the controller: the worker (VLLMWorker.__init__ reading the "
    "engine, or the launch around it) never came up (the exception line is cut off)"
)


class Window:
    """Whether FastChat's vLLM worker has announced itself and not yet registered or served, and the lines of the
    runpy frames read inside that window."""

    def __init__(self) -> None:
        self.open = False
        self._died: set[tuple[str, int]] = set()

    def note(self, text: str, where: tuple[str, int], stats_seen: bool) -> None:
        """A bare line (text, stripped; where: its source and line number)."""
        if _LOADING_RE.search(text) is not None:
            self.open = not stats_seen
        elif any(r in text for r in _READY):
            self.open = False
        elif self.open and "_run_module_as_main" in text:
            self._died.add(where)

    def startup(self, f: Failure | None, where: tuple[str, int]) -> Failure | None:
        """f, as the worker's failed start-up when it is runpy's frame read inside the window."""
        if f is None or where not in self._died or f.details.get("frame") != "_run_module_as_main":
            return f
        d = {**f.details, "phase": "startup", "before_serving": True, "cause": _CAUSE}
        return Failure(f.kind, d, f.fatal, f.key)
