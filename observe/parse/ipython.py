"""IPython's traceback, as a notebook (Jupyter, VS Code) prints an uncaught exception in a cell.

    ---------------------------------------------------------------------------
    OutOfMemoryError                          Traceback (most recent call last)
    File ~/…/site-packages/vllm/v1/worker/gpu_model_runner.py:2874, in GPUModelRunner._dummy_sampler_run(self, hidden_states)
       2873 try:
    -> 2874     ...

The header names the exception before any frame (Python's own print names it last), and a frame is
``File <path>:<line>, in <Class>.<function>(<args>)``. A paste cut under the header still says what
was raised: ``OutOfMemoryError`` is PyTorch's ``torch.OutOfMemoryError`` (``torch.cuda.OutOfMemoryError``
before 2.5), raised only by its caching allocator — an out-of-memory, its figures on the exception line
the paste may have cut. Its frames, rewritten in Python's own shape, are read like any traceback's.

Pure: a line in, a Failure, a frame line or a phase out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failures import Failure
from observe.parse.startup import OOM_PHASE_FRAMES

_HEADER_RE = re.compile(r"^(?P<exc>[A-Z]\w*)\s{2,}Traceback \(most recent call last\)", re.ASCII)
_FRAME_RE = re.compile(r"^File (?P<path>\S+):(?P<line>\d+), in (?:\w+\.)*(?P<fn>\w+)\(", re.ASCII)
#: a frame's source line ("   2873 try:", "-> 2874     x = f()"): the line number IPython prints before it
_SOURCE_RE = re.compile(r"^(?:-+>)?\s*\d+\s", re.ASCII)
#: the exceptions the header alone tells: PyTorch's allocator's out-of-memory
_OOM_NAMES = ("OutOfMemoryError",)


def header(text: str) -> Failure | None:
    """The failure IPython's header names, when it names one without its message (an out-of-memory)."""
    m = _HEADER_RE.match(text)
    if m is None or m.group("exc") not in _OOM_NAMES:
        return None
    d = {"device": None, "phase": None, "notebook": True, "cause": "the exception line is cut off"}
    return Failure(FailureKind.OOM, d, True, (FailureKind.OOM, None, None, None))


def frame(text: str) -> str | None:
    """IPython's frame line in Python's own shape (``File "<path>", line N, in <function>``), if text is one."""
    m = _FRAME_RE.match(text)
    return None if m is None else f'  File "{m.group("path")}", line {m.group("line")}, in {m.group("fn")}'


def source(text: str) -> bool:
    """Whether text is the source line IPython prints under a frame (its line number first), or the frame of
    the notebook's own cell ("Cell In[3], line 1")."""
    return _SOURCE_RE.match(text) is not None or text.lstrip().startswith("Cell In[")


def oom_phase(held: Failure, std_frame: str) -> Failure | None:
    """An out-of-memory held under IPython's header with the phase its frame names (None: no phase)."""
    fn = std_frame.rsplit(" in ", 1)[-1].strip()
    phase = OOM_PHASE_FRAMES.get(fn)
    if held.kind != FailureKind.OOM or not held.details.get("notebook") or phase is None:
        return None
    return Failure(held.kind, {**held.details, "phase": phase}, held.fatal, held.key)
