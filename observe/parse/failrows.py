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
- vLLM's refusal of a speculative-decoding config that leaves no token to schedule, "max_num_scheduled_tokens is set to
  N, which does not allow any tokens to be scheduled" (``schedbudget``), bare or behind its exception: the refused
  launch.
- The ``vllm`` console script's "ValueError: With `vllm serve`, you should provide the model as a positional argument …
  instead of via the `--model` option." (``servemodel``): the launch refused at its command line.
- V1's engine client's SIGUSR1 handler, "Got fatal signal from worker processes, shutting down" (``deaths.fatal_signal``):
  the engine's death, a crash once it served, else its failed start.
- The shell's "Segmentation fault (core dumped)" ("段错误 (核心已转储)") alone on a line (``shellsig``): the launched
  process's death, its failed start before any serving line; its "Killed" alone on a line after vLLM's lines
  (``shellsig.shell_killed``): the process SIGKILLed (most often the OOM killer).
- LMCache's own ERROR record "LMCacheEngine marked as init failed" (``lmcachelog``): the KV connector's start-up
  failed in a worker, an error of the engine at start-up (vLLM's connector then dies at the first request).
- The last line of V1's engine core's exception record trimmed to ``[core.py:N] <Exc>: …`` (``trimmed``): the engine
  core raised, its phase unknown.
- vLLM's refusal to render a chat with no template, "As of transformers v4.44, default chat template is no longer
  allowed …" (``chattemplate.no_template``): one request's (or one call's) refusal, never the engine's failure.
- A model's input schema refusing a request's precomputed embeddings, "image_embeds has rank 3 but expected 2"
  (``mmembeds.embeds_refused``): that request's input refused, bare or under the API server.
- Structured output's grammar refusing a request's token, xgrammar's "Failed to advance FSM for request …" and the
  scheduler's "Unexpected: grammar rejected tokens … Terminating request." (``grammar.request_ended``): that request
  ended with an error, the engine serving on.
- NixlConnector's "NIXL transfer failure: <type>[. <msg>] | Context: …" (``nixlfail.transfer_failed``): one request's
  (or one remote's requests') KV transfer lost, its blocks recomputed or that request failed, the engine serving on.
  0.11.x's handshake records ("Handshake failed for request …", "Handshake with … failed") and the "Remote NIXL agent
  engine ID mismatch" they carry (``nixlfail.handshake_failed``): the disaggregated transfer broken, the engine serving on.
- A 5xx answer and, as the next message, a multiproc worker's "Parent process exited, terminating worker", no stop asked
  for (``errexit.orphaned_after_5xx``): the engine core died while serving.
- The ROCm runtime's "Memory access fault by GPU node-N (Agent handle: …) on address …. Reason: …" (``hsafault``),
  bare or behind a process prefix: ROCr aborts the process after it, the engine dead.
- The PTX assembler's refusal of the GPU's architecture, "ptxas fatal   : Value 'sm_121a' is not defined for option
  'gpu-name'" (``ptxas``), bare, behind a process prefix or relayed in a record: the engine's kernels cannot be
  compiled (a CUDA toolchain older than the GPU), the engine core dies.
- V1's worker's KV budget below zero, "Available KV cache memory: -0.87 GiB" (``negative_kv``), bare or prefixed: no
  room for any KV cache, the start-up's end.
- Ray's placement group never filled, vLLM's "Cannot provide a placement group … within N seconds" (``raypg.gave_up``):
  the start failed waiting for devices Ray does not have.
- A TPU's HBM at start-up (``tpumem``): tpu-inference's "total_hbm_used_gb=… exceeds total_hbm_limit_cap_gb=… by …"
  (no room for the KV cache, its figures kept) and JAX's "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting
  to allocate …" (the device's out-of-memory, what was asked and what was free).

Pure: rows of (literal, pattern, reader), as in ``failures``.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse import (
    accel,
    chattemplate,
    deaths,
    dumpinput,
    errexit,
    grammar,
    hsafault,
    lmcachelog,
    mmembeds,
    modelarch,
    nixlfail,
    ptxas,
    raypg,
    schedbudget,
    servemodel,
    shellsig,
    tpumem,
    trimmed,
)
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState
from observe.parse.rules import Rule

__all__ = ["RULES", "row", "step_raised"]


def step_raised(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """V0 model_runner_base's records of a failed execution ("Writing input of failed execution to …", or the CUDA
    error's advice ending "Failed to pickle inputs of failed execution"): a forward pass raised."""
    d = {"worker": ctx.process, "method": "execute_model"}
    return Failure(FailureKind.WORKER_EXCEPTION, d, True, ("worker", None, "execute_model"))


#: gpu_worker.py determine_available_memory's line (V1, 0.8 →; vllm-ascend's and the other plugins' workers copy it)
#: with a figure below zero; "-0.00" is below zero too (the budget rounded), a zero is not read.
NEGATIVE_KV_LITERAL = "Available KV cache memory: -"
NEGATIVE_KV = r"Available KV cache memory: -(?P<g>\d+(?:\.\d+)?) GiB"


def negative_kv(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """The worker found no room for any KV cache: the budget (device memory x utilization, less the weights, the
    profile run's peak and the memory outside torch) is below zero. The engine core passes it to kv_cache_utils'
    check_enough_kv_cache_memory, which raises "No available memory for the cache blocks" for any budget <= 0 (the
    line is logged only for a model with a KV cache, the check's own condition): a failed start, the same failure as
    that error (one key, so the two lines are one finding)."""
    return Failure(
        FailureKind.NO_AVAILABLE_MEMORY, {"kv_available_gib": -float(m.group("g"))}, True, ("noavail",)
    )


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
    row("scheduled-tokens-none", schedbudget.LITERAL, schedbudget.PATTERN, schedbudget.no_tokens),
    *(row(f"core-record-tail-{w.lower()}", w, rx, trimmed.core_tail) for w, rx in trimmed.PATTERNS.items()),
    row("client-fatal-signal", deaths.FATAL_SIGNAL, None, deaths.fatal_signal),
    row("request-no-chat-template", chattemplate.LITERAL, chattemplate.PATTERN, chattemplate.no_template),
    row("request-mm-embeds-refused", mmembeds.LITERAL, mmembeds.PATTERN, mmembeds.embeds_refused),
    row("request-grammar-fsm", *grammar.FSM, grammar.request_ended),
    row("request-grammar-rejected", *grammar.REJECTED, grammar.request_ended),
    row("request-nixl-transfer-failed", nixlfail.LITERAL, nixlfail.PATTERN, nixlfail.transfer_failed),
    row("nixl-handshake-failed", *nixlfail.HANDSHAKE, nixlfail.handshake_record),
    row("nixl-engine-id-mismatch", *nixlfail.MISMATCH, nixlfail.handshake_failed),
    row("negative-kv-available", NEGATIVE_KV_LITERAL, NEGATIVE_KV, negative_kv),
    row("orphaned-workers-after-5xx", errexit.ORPHANED_LITERAL, None, errexit.orphaned_after_5xx),
    *(
        row(f"shell-segfault-{i}", lit, rx, shellsig.shell_segfault)
        for i, (lit, rx) in enumerate(shellsig.PATTERNS.items())
    ),
    row("lmcache-init-failed", lmcachelog.LITERAL, lmcachelog.PATTERN, lmcachelog.init_failed),
    row("shell-killed", shellsig.KILLED, shellsig.KILLED_PATTERN, shellsig.shell_killed),
    row("rocr-vm-fault", hsafault.LITERAL, hsafault.PATTERN, hsafault.vm_fault),
    row("ptxas-arch-unknown", ptxas.LITERAL, ptxas.PATTERN, ptxas.arch_unknown),
    row("serve-model-option", servemodel.LITERAL, servemodel.PATTERN, servemodel.model_option_refused),
    row("ray-placement-group-gave-up", raypg.GAVE_UP_LITERAL, raypg.GAVE_UP, raypg.gave_up),
    row("tpu-hbm-cap-exceeded", *tpumem.CAP, tpumem.hbm_cap),
    row("tpu-device-buffer-refused", *tpumem.BUFFER, tpumem.buffer_refused),
)
