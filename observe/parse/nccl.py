"""PyTorch's NCCL watchdog, whose records a vLLM worker prints raw (``[rankN]:[E… ProcessGroupNCCL.cpp:L]``).

The process group's watchdog thread (torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp, torch 2.1 → 2.9) ends the
process it runs in, with vLLM's worker in it (bare, under ``[rankN]:`` or a Ray worker's prefix), in the ways it
logs before it aborts:

- ``Watchdog caught collective operation timeout: WorkNCCL(SeqNum=N, OpType=OP, …, Timeout(ms)=T) ran for M
  milliseconds before timing out.``: one collective waited out its timeout (a rank stopped answering), and "To
  avoid data inconsistency, we are taking the entire process down." (``TORCH_NCCL_ASYNC_ERROR_HANDLING``). The
  first collective of the group (``SeqNum=1``, "last completed NCCL work: -1") is the start-up's;
- ``Process group watchdog thread terminated with exception: E``: the watchdog met a CUDA error (an illegal
  memory access, …) while polling the collectives, and the process is aborted with it;
- ``ProcessGroupNCCL's watchdog got stuck for N seconds …`` / ``Heartbeat monitor timed out! Process will be
  terminated …`` (torch 2.2 →): a collective hung, so the watchdog itself stopped answering.

Each is the worker's death: engine_crashed, its cause what the watchdog said. Pure: a message in, a Failure or
None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState, serving_or

#: what the parser must let through for these records (``triggers.TRIGGERS`` via ``frames.LITERALS``)
LITERALS = (
    "Watchdog caught collective operation timeout",
    "Process group watchdog thread terminated",
    "watchdog got stuck for",
    "Heartbeat monitor timed out",
)
_TIMEOUT_RE = re.compile(
    r"Watchdog caught collective operation timeout: WorkNCCL\(SeqNum=(?P<seq>\d+), OpType=(?P<op>\w+)"
    r".*?\) ran for (?P<ran>\d+) milliseconds",
    re.ASCII,
)
_EXC_RE = re.compile(r"Process group watchdog thread terminated with exception: (?P<what>.+)$")
#: what the watchdog says when a record carries no figures it reads: a hang (by its words), or a timeout's line
#: cut short
_HUNG = {
    "watchdog got stuck for": "PyTorch's NCCL watchdog terminated the process: a collective hung (a tensor-parallel "
    "rank waits for a peer that died or hangs)",
    "Heartbeat monitor timed out": "PyTorch's NCCL heartbeat monitor terminated the process: a collective hung (a "
    "tensor-parallel rank waits for a peer that died or hangs)",
    "": "PyTorch's NCCL watchdog terminated the process: a collective timed out (a tensor-parallel rank waited for "
    "a peer that died or hangs)",
}


def watchdog(text: str, run: RunState) -> Failure | None:
    """The worker's death a watchdog record tells (nothing after a requested stop: its aborts are the stop's)."""
    if run.requested or not any(lit in text for lit in LITERALS):
        return None
    d: dict[str, object] = {"form": "nccl_watchdog"}
    if (t := _TIMEOUT_RE.search(text)) is not None:
        seq, secs = int(t.group("seq")), int(t.group("ran")) / 1000
        first = seq == 1
        d.update(
            collective=t.group("op"),
            seq=seq,
            waited_s=secs,
            phase="startup" if first else serving_or(run, "unknown"),
            cause=f"NCCL's watchdog took the worker down: {'the first ' if first else ''}collective "
            f"{t.group('op')} (#{seq}) waited {secs:.0f} s for a rank that never joined it"
            + (" — the start-up's first collective: a rank that hung or never came up" if first else ""),
        )
    elif (e := _EXC_RE.search(text)) is not None:
        what = e.group("what").strip()
        d.update(
            phase=serving_or(run, "unknown"),
            cause=f"NCCL's watchdog aborted the worker on {what[:200]}",
        )
    else:
        cause = next(c for lit, c in _HUNG.items() if lit in text)  # "" is in every text
        d.update(phase=serving_or(run, "unknown"), cause=cause)
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed",))
