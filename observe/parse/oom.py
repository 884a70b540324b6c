"""The numbers of a CUDA / HIP out-of-memory message: PyTorch's OutOfMemoryError text in every release's
wording ("Tried to allocate …", "GPU 0 has a total capacity of …", "… is allocated by PyTorch") → the
details of the OOM failure (sizes in GiB), and the phase vLLM's own re-raise names."""

from __future__ import annotations

import re
from typing import Any

_A = re.ASCII

_SIZE = r"\d{1,12}(?:\.\d{1,6})? (?:[KMGT]i?B|bytes)"  # PyTorch prints "0 bytes" below 1 KiB
_OOM_FIELDS = (
    ("tried_to_allocate", re.compile(r"Tried to allocate (" + _SIZE + r")", _A)),
    ("gpu", re.compile(r"\bGPU (\d+)(?: has|;)", _A)),
    (
        "total_capacity",
        re.compile(r"(" + _SIZE + r") total capacity|total capac?i?ty of (" + _SIZE + r")", _A),
    ),
    ("free", re.compile(r"of which (" + _SIZE + r") is free|(" + _SIZE + r") free;", _A)),
    (
        "process_in_use",
        re.compile(r"this process has (" + _SIZE + r") memory in use|has (" + _SIZE + r") memory in use", _A),
    ),
    (
        "allocated_by_pytorch",
        re.compile(r"(" + _SIZE + r") is allocated by PyTorch|(" + _SIZE + r") already allocated", _A),
    ),
    ("reserved_unallocated", re.compile(r"(" + _SIZE + r") is reserved by PyTorch but unallocated", _A)),
    ("reserved_by_pytorch", re.compile(r"(" + _SIZE + r") reserved in total by PyTorch", _A)),
)


_THIS_PROCESS = re.compile(r"this process has (" + _SIZE + r") memory in use", _A)
_OTHER_PROCESS = re.compile(r"\bProcess \d+ has " + _SIZE + r" memory in use", _A)


#: PyTorch's OutOfMemoryError message opening a text (torch.OutOfMemoryError's "CUDA out of memory. Tried to allocate
#: …", "HIP out of memory. Tried to allocate …" on ROCm builds): a message of its own, never a wrapper's words
_OOM_HEAD = re.compile(r"(?:CUDA|HIP|XPU|NPU|MPS) out of memory\. Tried to allocate \d", _A)


def is_oom_head(text: str) -> bool:
    """Whether text (what a line holds ahead of a vLLM record's prefix) is PyTorch's out-of-memory message: a paste
    flattened onto one line (its line breaks lost) put it there, so it is read as its own message, not peeled as a
    wrapper's prefix."""
    return _OOM_HEAD.search(text) is not None


#: a size's unit (its first letter; "b" or none: bytes) → GiB, binary units (PyTorch's and JAX's)
_SCALE = {"": 2.0**-30, "b": 2.0**-30, "K": 2.0**-20, "M": 2.0**-10, "G": 1.0, "T": 1024.0}


def size_gib(num: float, unit: str) -> float | None:
    """A device-memory size in GiB: num in the unit whose first letter is unit's ("MiB", "M", "bytes", "")."""
    scale = _SCALE.get(unit[:1])
    return None if scale is None else round(num * scale, 6)


def _gib(size: str | None) -> float | None:
    """'20.00 MiB' → GiB as float (binary units; PyTorch prints binary units)."""
    if not size:
        return None
    num, _, unit = size.partition(" ")
    try:
        v = float(num)
    except ValueError:
        return None
    return size_gib(v, unit)


def oom_details(device: str | None, msg: str) -> dict[str, Any]:
    """The figures the message holds (the missing ones are absent), and the phase where vLLM names it."""
    d: dict[str, Any] = {"device": device}
    for name, rx in _OOM_FIELDS:
        # "this process" first: PyTorch lists other processes before it ("Process 3888866 has 71.11 GiB memory in
        # use. Including non-PyTorch memory, this process has 8.08 GiB memory in use."); without that clause
        # (2.1.0's wording) a "Process N has" is the only figure, and may be this one
        fm = _THIS_PROCESS.search(msg) if name == "process_in_use" else None
        if name == "process_in_use" and fm is None and len(_OTHER_PROCESS.findall(msg)) > 1:
            continue  # several PIDs NVML sees from outside the container, none marked as this one: unknown
        fm = fm or rx.search(msg)
        if fm is None:
            continue
        val = next(g for g in fm.groups() if g is not None)
        if name == "gpu":
            d["gpu"] = int(val)
        elif name == "total_capacity":
            d["total_capacity_gib"] = _gib(val)
        elif name in ("tried_to_allocate", "free"):
            d[name] = val
            d[name + "_gib"] = _gib(val)
        else:
            d[name + "_gib"] = _gib(val)
    if (
        "cumem_allocator" in msg
    ):  # vLLM's sleep-mode allocator ("CUDA Error: %s at %s:%d", csrc/cumem_allocator.cpp)
        d["allocator"] = "cumem"
    if "warming up sampler" in msg or "Failed to create" in msg:  # 0.11 linear.py: creating the weights
        d["phase"] = "sampler_warmup" if "sampler" in msg else "loading_weights"
    return d
