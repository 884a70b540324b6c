"""vllm-cli's word that the vLLM server it launched died while starting: its Status panel's failed line.

vllm-cli (a terminal UI that launches ``vllm serve`` as a child process and follows its start-up) draws a rich panel
titled "Status" while it waits for the server's ready line (``ui/server_control.py`` ``start_server_with_config``).
Each turn of that loop first asks whether the child is still running; when it is not, the panel becomes
"✗ Server process terminated unexpectedly" and the start-up is marked failed (``startup_failed = True``); the loop
runs only until a ready line ("Uvicorn running on", "Application startup complete", …) was seen. So the line, with
vllm-cli's ✗ mark, is the vLLM server process exiting before it served: a failed start, its cause in the server's own
log (vllm-cli's log file), not on the panel. Another program's "server process terminated unexpectedly" (without
vllm-cli's mark) is not read. Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.parse.failtypes import Failure, RunState
from observe.parse.hosted import start_failed

#: the panel's line (its box border, when drawn, around it: "│ ✗ Server process terminated unexpectedly   │")
_TERMINATED = "✗ Server process terminated unexpectedly"
_PANEL_RE = re.compile(r"^(?:│\s*)?" + re.escape(_TERMINATED) + r"\s*(?:│)?$")
#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS`` via ``frames.LITERALS``)
LITERALS: tuple[str, ...] = ("Server process terminated unexpectedly",)
_CAUSE = (
    "vllm-cli's start-up monitor found the vLLM server process gone before its ready line ('✗ Server process "
    "terminated unexpectedly' on its Status panel): the server exited while starting — its own log (vllm-cli's log "
    "file for the server) tells why"
)


def death(text: str, run: RunState) -> Failure | None:
    """vllm-cli's failed start-up, when text (a stripped raw line) is its Status panel's line (after a requested stop:
    none)."""
    if run.requested or _PANEL_RE.match(text) is None:
        return None
    shown = f"vllm-cli: {_TERMINATED} (its Status panel while the server started)"  # the line without the box
    return start_failed(shown, _CAUSE, ("vllm-cli", "terminated"))
