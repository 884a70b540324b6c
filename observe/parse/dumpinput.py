"""vLLM's dump of a failed step: its ERROR records mean the engine was serving.

V1's engine core wraps every step's model execution (``step``, ``step_with_batch_queue``: ``EngineCore.execute_model``
in 0.9.2, ``execute_model_with_error_logging`` in 0.10 / 0.11, ``log_error_detail`` in 0.32, ``v1/engine/core.py``) and,
when it raises, calls ``dump_engine_exception`` (``logging_utils/dump_input.py``),
which logs "Dumping input data for V1 LLM engine (vX) with config: …", "Dumping scheduler output for model execution:
…" and "Dumping scheduler stats: …" at ERROR, then re-raises. Nothing else calls it, and a scheduler output exists only
once the engine core is built and scheduling requests: a record of the dump is a step that failed while serving,
whatever the run showed before it (an excerpt often starts there).

V0's model runner wraps its ``execute_model`` the same way (``dump_input_when_exception``, worker/model_runner_base.py
0.6 → 0.10): when it raises, it logs "Writing input of failed execution to …" (INFO), and, when pickling the inputs
fails too, "Failed to pickle inputs of failed execution: <error>" (WARNING; a CUDA error's text runs on over the
record's lines, PyTorch's advice "Compile with `TORCH_USE_CUDA_DSA` …" last), then re-raises "Error in model
execution: …". Those are the file's only records: any record of it is a model step that raised.

A paste can lose the first record's level, timestamp and process prefix and keep only its bracketed location:
``[dump_input.py:NN] Dumping input data for V1 LLM engine (vX) with config: …`` alone on a line (``bare_dump``). The
bracketed file name followed by that record's own words is vLLM's alone: the same failed step while serving, read as
the engine's error (phase serving). Only that opening; any other bracketed location or text stays unread.

Pure: a message (or a record's envelope) in, a bool (or a failure) out.
"""

from __future__ import annotations

import re
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

#: the three records ``_dump_engine_exception`` logs (dump_input.py, read in 0.9.2's wheel and 0.32)
DUMPS = (
    "Dumping input data for V1 LLM engine",
    "Dumping scheduler output for model execution",
    "Dumping scheduler stats",
)


#: the first record's opening behind its bracketed location only ("[dump_input.py:72] " or, 0.11 →,
#: "[logging_utils/dump_input.py:69] "), the version in its parentheses
BARE_LITERAL = DUMPS[0]
BARE_PATTERN = r"^\[(?:logging_utils/)?dump_input\.py:\d+\] Dumping input data for V1 LLM engine \(v[^()\s]+\) with config: "
_CAUSE = (
    "the first record of V1's dump of a failed step (logging_utils/dump_input.py, logged only when the engine core's "
    "model execution raised while serving, then re-raised), its level, timestamp and process prefix cut off"
)


#: the openings of every record dump_input.py logs (0.9.2 → 0.32: the three dumps and, when preparing them raised,
#: "Error preparing object to dump"), all inside ``_dump_engine_exception``; a record cut to its first word keeps one
_DUMP_OPENINGS = ("Dumping", "Error preparing object to dump")


def failed_step(text: str, logger_file: str | None = None) -> bool:
    """Whether text (an ERROR record's message) is one of the dump's records: a step that failed while serving. By its
    words alone, or, cut ("Dumping" and nothing after), by its logger's file too: dump_input.py logs only inside
    ``dump_engine_exception``, which only the engine core's failed model execution calls."""
    if text.startswith(DUMPS):
        return True
    return (logger_file or "").rsplit("/", 1)[-1] == "dump_input.py" and text.startswith(_DUMP_OPENINGS)


def v0_runner_base(ctx: Any) -> bool:
    """Whether a record (its envelope) is V0's model_runner_base.py's: a model step that raised (the records above)."""
    return getattr(ctx, "logger_file", None) == "model_runner_base.py"


def bare_dump(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The dump's first record kept only behind its bracketed location (a bare line: a record with vLLM's prefix is
    read by its message, ``failures.error_line``): the engine's step failed while serving."""
    if not ctx.bare or run.requested:
        return None
    text = msg.strip().split("] ", 1)[1]
    d = {"text": text[:300], "phase": "serving", "cause": _CAUSE}
    return Failure(FailureKind.ERROR_LINE, d, False, ("errline", text[:120]))
