"""The PTX assembler refusing the GPU's architecture: the toolchain that compiles the engine's kernels does not know it.

Triton compiles each kernel to PTX and runs ``ptxas`` on it (``triton/backends/nvidia/compiler.py`` ``make_cubin``:
``ptxas -lineinfo -v --gpu-name=sm_NNN[a] … -o ….o``; the binary is the one bundled in Triton's wheel unless
``TRITON_PTXAS_PATH`` names another; Triton 3.5 → runs a second bundled ``ptxas-blackwell`` for sm_100 and above,
``TRITON_PTXAS_BLACKWELL_PATH``). A ptxas older than the GPU does not know its architecture and stops on its option
parsing with "ptxas fatal   : Value 'sm_121a' is not defined for option 'gpu-name'" (its own words, one line, the
padding as it prints it); Triton raises PTXASError ("Internal Triton PTX codegen error", its stderr and the repro
command). vLLM's Triton kernels and torch.compile's inductor compile through it, at start-up (profiling, graph
capture) or at the first call of a kernel: the engine core dies of it. A new GPU in an older CUDA container (a DGX
Spark GB10's sm_121a, Jetson Thor's sm_110a under CUDA 12.x) is the usual case (triton-lang/triton#8539; vLLM's
troubleshooting page, vllm-project/vllm#31338).

Read narrowly: the line opening with ptxas's words (``ptxas`` or ``ptxas-blackwell``, bare, behind a process prefix
or as the message of a record relaying the exception), the value an ``sm_`` architecture, the option ``gpu-name``;
never the words inside other text. An engine error (``engine_error``), fatal: phase serving once a stats line was
read, the start-up's failure while the weights load or the engine profiles, else unknown (a lone line tells neither).
The line alone is anybody's (any CUDA build prints it: ``native.FORM``, ``frames.anybodys``). No launch flag helps:
the fix is a ptxas that knows the architecture (a newer CUDA toolkit or container, or ``TRITON_PTXAS_PATH``), never
memory. Pure: a row for ``failrows``.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState, serving_or
from observe.parse.native import FORM

__all__ = ["LITERAL", "PATTERN", "arch_unknown"]

#: ptxas's option parser's words (the literal keeps every other line off the regex)
LITERAL = "is not defined for option 'gpu-name'"
#: the whole line as ptxas prints it ("ptxas fatal   : ", a paste may squeeze the padding), Triton's second binary's
#: name ("ptxas-blackwell"), the architecture it refused
PATTERN = r"^\s*(?P<tool>ptxas(?:-blackwell)?) fatal\s*: Value '(?P<arch>sm_\d+[a-z]?)' is not defined for option 'gpu-name'"
_CAUSE = (
    "the PTX assembler ({tool}) refused the GPU's architecture {arch}: the CUDA toolchain that compiles the engine's "
    "kernels (Triton's JIT, torch.compile's inductor) is older than the GPU, so no kernel can be built for it"
)
_FIX = (
    "give the engine a ptxas that knows {arch}: a CUDA toolkit (or container image) new enough for this GPU, and point "
    "Triton at its ptxas ({env}=/usr/local/cuda/bin/ptxas; otherwise Triton runs the ptxas bundled in its wheel); no "
    "vLLM flag helps, since vLLM's own Triton kernels are compiled by the same ptxas whatever the flags, and memory "
    "flags (--gpu-memory-utilization) do not touch the toolchain"
)


def arch_unknown(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """ptxas's refusal of the GPU's architecture (after a requested stop: none): the engine's kernels cannot be
    compiled, the engine core dies."""
    if run.requested:
        return None
    tool, arch = m.group("tool"), m.group("arch")
    env = "TRITON_PTXAS_BLACKWELL_PATH" if tool.endswith("blackwell") else "TRITON_PTXAS_PATH"
    phase = serving_or(run, "startup" if run.loading else "unknown")
    d: dict[str, object] = {
        "form": FORM,
        "text": msg.strip()[:300],
        "phase": phase,
        "arch": arch,
        "cause": _CAUSE.format(tool=tool, arch=arch),
        "fix": _FIX.format(arch=arch, env=env),
    }
    if phase == "startup":
        d["before_serving"] = True
    return Failure(FailureKind.ERROR_LINE, d, True, ("ptxas", arch))
