"""A model runner's ``execute_model`` frame in V1's engine core record: the engine core's step raised while serving.

V1's engine core (``vllm/v1/engine/core.py``, the only vLLM file of that name; its logger writes ``[core.py:N]``) logs
the traceback that kills it on every line of one ERROR record: "EngineCore hit an exception: <traceback>" from
``run_engine_core`` in 0.8.x, ``logger.exception("EngineCore encountered a fatal error.")`` from 0.8.5 on, and
"EngineCore failed to start." for a death in its construction. A model runner's ``execute_model`` (V1's
``v1/worker/gpu_model_runner.py``, a platform plugin's or a speculator plugin's subclass: vllm-ascend's
``model_runner_v1.py``, ArcticInference's ``vllm/model_runner.py``) runs only on a scheduled batch — ``EngineCore.step``
→ the executor's ``execute_model`` → the worker's → the runner's, 0.8 → 0.32 — while the start-up's profiling, warm-up
and graph capture run ``_dummy_run`` / ``_dummy_sampler_run`` / ``capture_model`` instead. So such a frame in that
record, its header and exception line cut off, is the engine core dying while serving (phase "serving", never a failed
start). Not V0's ``vllm/worker/model_runner.py``, whose ``execute_model`` ``profile_run`` also calls at start-up; not
any other logger's record (the API server's request tracebacks, a worker's own record). Pure: a line in, a Failure or
None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

__all__ = ["CORE_LOGGER", "frame"]

#: the engine core's logger file, as vLLM's prefix names it
CORE_LOGGER = "core.py"
#: a model runner's execute_model frame: any ``*model_runner*.py`` but V0's ``vllm/worker/`` ones
_RUNNER_STEP_RE = re.compile(
    r'File "(?![^"]*/vllm/worker/)[^"]*/\w*model_runner\w*\.py", line \d+, in execute_model\b', re.ASCII
)


def frame(text: str, run: RunState, logger: str | None) -> Failure | None:
    """The engine core's step raising while serving, when text (a frame line, stripped) is a model runner's
    ``execute_model`` in the engine core's record (logger: the record's logger file; after a requested stop: none)."""
    if logger != CORE_LOGGER or run.requested or "execute_model" not in text:
        return None
    if _RUNNER_STEP_RE.search(text) is None:
        return None
    d = {"text": text[:300], "phase": "serving", "frame": "execute_model", "cut": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", "execute_model"))
