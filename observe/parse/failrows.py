"""More rows of the error grammar (``failures.RULES`` takes them before its catch-all exception rows): words of
vLLM's, of a host's or of a device runtime's, each read narrowly by the module that knows it.

- AsyncEngineDeadError's loop-callback text (``deaths.LOOP_FINISHED``), relayed alone by a host's logger
  (Xinference's restful_api): the engine's death after it started.
- The Ascend runtime's (CANN's) report that one NPU could not be opened, in a vLLM ERROR record (``accel.device_open``):
  the worker's failed start.
- A record of V0's ``worker/model_runner_base.py`` (``dumpinput.v0_runner_base``) whose text is PyTorch's CUDA-error
  advice ("Compile with `TORCH_USE_CUDA_DSA` to enable device-side assertions."), the end of its "Failed to pickle
  inputs of failed execution: <CUDA error>" record, its head cut: the model step raised (a worker's exception in
  ``execute_model``, as "Writing input of failed execution to …").
- V1's dump of a failed step kept only behind its bracketed location, ``[dump_input.py:NN] Dumping input data for V1
  LLM engine (vX) with config: …`` (``dumpinput.bare_dump``): the engine's step failed while serving.
- vLLM's refusal of a model architecture nothing can take, and ModelRegistry's "Model architectures [...] are not
  supported for now." cut before its list (``modelarch``): the refused launch.
- V1's engine client's SIGUSR1 handler, "Got fatal signal from worker processes, shutting down" (``deaths.fatal_signal``):
  the engine's death, a crash once it served, else its failed start.
- The shell's "Segmentation fault (core dumped)" ("段错误 (核心已转储)") alone on a line (``shellsig``): the launched
  process's death, its failed start before any serving line; its "Killed" alone on a line after vLLM's lines
  (``shellsig.shell_killed``): the process SIGKILLed (most often the OOM killer).
- The last line of V1's engine core's exception record trimmed to ``[core.py:N] <Exc>: …`` (``trimmed``): the engine
  core raised, its phase unknown.

Pure: rows of (literal, pattern, reader), as in ``failures``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse import accel, deaths, dumpinput, modelarch, shellsig, trimmed
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState
from observe.parse.rules import Rule

__all__ = ["RULES", "row", "step_raised"]


def step_raised(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """V0 model_runner_base's records of a failed execution ("Writing input of failed execution to …", or the CUDA
    error's advice ending "Failed to pickle inputs of failed execution"): a forward pass raised."""
    d = {"worker": ctx.process, "method": "execute_model"}
    return Failure(FailureKind.WORKER_EXCEPTION, d, True, ("worker", None, "execute_model"))


def row(
    name: str, literal: str, pattern: str | None, read: Callable[..., Failure | None], **kw: Any
) -> Rule[Failure]:
    """A row of the error grammar, here and in ``failures`` (pattern None: the literal itself is the pattern)."""
    rx = re.compile(re.escape(literal) if pattern is None else pattern, re.ASCII)
    return Rule(name, (literal,), rx, read, group="failure", **kw)


RULES: tuple[Rule[Failure], ...] = (
    row("loop-finished-text", deaths.LOOP_FINISHED, None, deaths.engine_dead),
    row("cann-device-open", accel.CANN_OPEN_LITERAL, accel.CANN_OPEN.pattern, accel.device_open),
    row("failed-execution-cuda", "TORCH_USE_CUDA_DSA", None, step_raised, when=dumpinput.v0_runner_base),
    row("bare-dump-input", dumpinput.BARE_LITERAL, dumpinput.BARE_PATTERN, dumpinput.bare_dump),
    row("model-arch-refused", modelarch.LITERAL, modelarch.PATTERN, modelarch.arch_refused),
    row("model-arch-refusal-cut", modelarch.CUT_LITERAL, modelarch.CUT_PATTERN, modelarch.cut_refusal),
    *(row(f"core-record-tail-{w.lower()}", w, rx, trimmed.core_tail) for w, rx in trimmed.PATTERNS.items()),
    row("client-fatal-signal", deaths.FATAL_SIGNAL, None, deaths.fatal_signal),
    *(
        row(f"shell-segfault-{i}", lit, rx, shellsig.shell_segfault)
        for i, (lit, rx) in enumerate(shellsig.PATTERNS.items())
    ),
    row("shell-killed", shellsig.KILLED, shellsig.KILLED_PATTERN, shellsig.shell_killed),
)
