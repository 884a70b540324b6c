"""The ROCm runtime's report of a GPU memory access fault, which it prints as it aborts the process.

ROCr (the HSA runtime under HIP, ROCm/ROCR-Runtime ``src/core/runtime/runtime.cpp`` ``Runtime::VMFaultHandler``)
handles the driver's VM-fault event for a GPU: a kernel read or wrote an address its page tables do not map (or
with the wrong rights, or hit an ECC error). It prints, to stderr, "Memory access fault by GPU node-%u (Agent
handle: %p) on address %p%s. Reason: %s." (older releases: without the agent handle; the address may be followed
by "(may not be exact address)", the reason "Page not present or supervisor privilege", "Write access to a
read-only page", …, "Unknown"), and then calls ``std::abort()``: the process dies of SIGABRT, no Python exception
is raised, no vLLM record follows from it. In a vLLM worker (multiproc's or Ray's: behind its process prefix or
bare, as a container's stderr shows it) that is the worker, and with it the engine, gone.

Read narrowly: the line opening with those words (bare or behind a process prefix), never the words inside other
text. The process is gone: ``engine_crashed`` (fatal), in phase serving once a stats line was read, else at a point
the log does not show (a start-up's profiling runs the same kernels; the lines around it may tell, as for
``native``'s crashes). Any HIP program faults so, so the line alone is anybody's (``native.FORM``,
``frames.anybodys``); the log's vLLM lines make it the engine's. It is no memory budget (nothing to do with
--gpu-memory-utilization): a kernel's bad address. Pure: a row for ``failrows``.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState, serving_or
from observe.parse.native import FORM

__all__ = ["LITERAL", "PATTERN", "vm_fault"]

#: VMFaultHandler's words
LITERAL = "Memory access fault by GPU node-"
#: the whole line's head as ROCr prints it: node, agent handle (newer releases), address ("(nil)": glibc's %p of 0),
#: the imprecise note, then the reason
PATTERN = (
    r"^\s*Memory access fault by GPU node-(?P<node>\d+) (?:\(Agent handle: 0x[0-9a-fA-F]+\) )?on address "
    r"(?:0x[0-9a-fA-F]+|\(nil\))(?:\(may not be exact address\))?\. Reason: (?P<reason>[^.]*)"
)
_CAUSE = (
    "the ROCm runtime reported a GPU memory access fault on GPU node-{node} (reason: {reason}) and aborted the "
    "process (ROCr's VMFaultHandler calls abort(): SIGABRT, no Python exception): a kernel touched an address the "
    "GPU's page tables do not map — a kernel's bug (a custom or AITER kernel, an attention backend) or a bad index "
    "or shape fed to it, not a memory budget"
)


def vm_fault(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """ROCr's GPU memory access fault (bare or behind a process prefix, not in a logger's record; after a requested
    stop: none): the process aborted, the engine dead."""
    if ctx.level is not None or run.requested:
        return None
    reason = m.group("reason").strip() or "Unknown"
    d: dict[str, object] = {
        "form": FORM,
        "signal": "SIGABRT",
        "phase": serving_or(run, "unknown"),
        "gpu_node": int(m.group("node")),
        "cause": _CAUSE.format(node=m.group("node"), reason=reason),
    }
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed", "hsa_vm_fault"))
