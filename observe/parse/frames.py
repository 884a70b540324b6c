"""A traceback cut at both ends: worker ERROR records that are only frames, no header, no exception.

A paste often starts inside a worker's traceback (the ``Traceback (most recent call last)`` header
above it left out) and stops before its exception line. Its frames still name where the engine was
when it raised: a function of vLLM's start-up on the stack is the phase. Each such frame of an ERROR
record read without its header is an ``error_line`` (``frame``: the function, ``cut``: True) — the
catch-all reports the failure with the phase from the innermost one, and says the cause is cut off.
A traceback whose header was read gives no such event (its exception line tells). Frames of request
handling (tokenizing, validating a request's input) name no start-up function: nothing is reported.

Pure: a message in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failurekinds import FailureKind
from observe.parse.failures import Failure, RunState

#: vLLM's start-up functions, as they show in frames (``File "…", line N, in f`` or the call under
#: it) → the phase (the names of V0 worker.py / model_runner.py / parallel_state.py / pynccl.py and
#: the V1 gpu_worker.py / gpu_model_runner.py, 0.4 → 0.32)
PHASE_FRAMES: dict[str, str] = {
    "load_model": "loading_weights",
    "load_weights": "loading_weights",
    "profile_run": "profiling",
    "determine_num_available_blocks": "profiling",
    "determine_available_memory": "profiling",
    "initialize_cache": "kv_cache_init",
    "initialize_from_config": "kv_cache_init",
    "capture_model": "cuda_graph_capture",
    "ncclCommInitRank": "startup",
    "init_model_parallel_group": "startup",
    "initialize_model_parallel": "startup",
    "init_distributed_environment": "startup",
    "init_worker_distributed_environment": "startup",
    "init_device": "startup",
}
_FRAME_RE = re.compile(r"\b(" + "|".join(PHASE_FRAMES) + r")\b", re.ASCII)


def cut_frame(msg: str, run: RunState) -> Failure | None:
    """A frame (or the source line under it) of a headless traceback naming a start-up function."""
    text = msg.strip()
    if not text or not msg[:1].isspace():
        return None  # a frame line is indented; anything else is the record's own message
    m = _FRAME_RE.search(text)
    if m is None:
        return None
    func = m.group(1)
    d = {"text": text[:300], "phase": PHASE_FRAMES[func], "frame": func, "cut": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", func))
