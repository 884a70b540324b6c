"""vLLM's dump of a failed step: its ERROR records mean the engine was serving.

V1's engine core wraps every step's model execution (``step``, ``step_with_batch_queue``: ``EngineCore.execute_model``
in 0.9.2, ``execute_model_with_error_logging`` in 0.10 / 0.11, ``log_error_detail`` in 0.32, ``v1/engine/core.py``) and,
when it raises, calls ``dump_engine_exception`` (``logging_utils/dump_input.py``),
which logs "Dumping input data for V1 LLM engine (vX) with config: …", "Dumping scheduler output for model execution:
…" and "Dumping scheduler stats: …" at ERROR, then re-raises. Nothing else calls it, and a scheduler output exists only
once the engine core is built and scheduling requests: a record of the dump is a step that failed while serving,
whatever the run showed before it (an excerpt often starts there).

Pure: a message in, a bool out.
"""

from __future__ import annotations

#: the three records ``_dump_engine_exception`` logs (dump_input.py, read in 0.9.2's wheel and 0.32)
DUMPS = (
    "Dumping input data for V1 LLM engine",
    "Dumping scheduler output for model execution",
    "Dumping scheduler stats",
)


def failed_step(text: str) -> bool:
    """Whether text (an ERROR record's message) is one of the dump's records: a step that failed while serving."""
    return text.startswith(DUMPS)
