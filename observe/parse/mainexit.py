"""A cut traceback through the interpreter's launch frame: the main module raised an exception nothing caught.

``python -m vllm.entrypoints.openai.api_server`` (and any ``python -m`` launch of a vLLM server) runs the module
under ``runpy._run_module_as_main``; Python prints that frame ("File ".../runpy.py", line N, in
_run_module_as_main", "<frozen runpy>" from 3.11) only for an exception that reached the top of the main module:
the process exits. A paste cut right under it (the server's own frames and the exception line gone) still says
the launch died; where (start-up or serving) the excerpt does not tell, so the phase is "unknown", as for the
frames at the top of the API server's stack (``frames._server_top``). Pure: a frame line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

#: runpy's frame of ``python -m``: "/usr/lib/python3.10/runpy.py" or "<frozen runpy>" (Python 3.11+)
_MAIN_RE = re.compile(
    r'File "(?:[^"]*/runpy\.py|<frozen runpy>)", line \d+, in _run_module_as_main\b', re.ASCII
)
_CAUSE = (
    "the main module (python -m …) raised an exception nothing caught: the process exits (the traceback is cut "
    "under the interpreter's launch frame, the exception line with it)"
)


def died(text: str, run: RunState) -> Failure | None:
    """The launch's death a runpy ``_run_module_as_main`` frame tells (None after a requested stop)."""
    if run.requested or _MAIN_RE.search(text) is None:
        return None
    d = {"text": text[:300], "phase": "unknown", "frame": "_run_module_as_main", "cut": True, "cause": _CAUSE}
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", "_run_module_as_main"))
