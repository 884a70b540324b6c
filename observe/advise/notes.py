"""What to say about a warning or critical finding no flag change answers: never silence.

Each sentence says why no flag helps (or why the numbers to choose one are missing) and what
to do instead. Pure.
"""

from __future__ import annotations

from collections.abc import Sequence

from observe.advise.plan import Plan
from observe.model import Finding, severity_rank

# failures that explain an engine that did not start or crashed
_CAUSES = (
    "max_model_len_exceeds_kv_cache",
    "max_model_len_exceeds_model",
    "no_kv_cache_memory",
    "gpu_memory_busy",
    "cuda_oom",
    "config_rejected",
    "prompt_too_long",
)
_FAILURES = ("engine_startup_failed", "engine_error", "engine_crashed")

_TEXT: dict[str, str] = {
    "engine_stalled": (
        "no launch flag fixes a stalled engine loop: look for a stuck request, a saturated host CPU or "
        "frontend, or a blocking tokenizer; if it recurs on an idle host, upgrade vLLM"
    ),
    "engine_stuck": (
        "no launch flag fixes a hung engine: while it hangs, dump the stacks of the EngineCore process and "
        "its workers (py-spy dump --pid <pid>) to see what they wait on; check NCCL (NCCL_DEBUG=INFO, a "
        "peer GPU or rank that died) and shared memory (/dev/shm in containers: --shm-size or --ipc=host); "
        "then restart the engine. /health can answer 200 meanwhile: page on no progress (VLLMEngineStuck)"
    ),
    "kv_cache_saturated": (
        "the KV cache ran full but no request waited or was preempted: the memory is used, not short; no "
        "change needed until queues or preemptions appear (then grow the cache or add replicas)"
    ),
    "throughput_collapse": (
        "throughput fell with as many requests running, with no KV pressure seen: look outside the "
        "launch flags (a long request, host contention, thermal throttling) before changing them"
    ),
    "gpu_memory_utilization_too_high": (
        "the out-of-memory happened where lowering --gpu-memory-utilization does not help (loading the "
        "weights): see the fix for the out-of-memory above"
    ),
    "spec_decode_low_acceptance": (
        "few draft tokens are accepted: use a draft model closer to the target, or fewer speculative "
        "tokens (num_speculative_tokens in --speculative-config), or turn speculative decoding off"
    ),
    "swap_space_exhausted": (
        "the CPU swap space ran full: preemptions recompute instead; grow the GPU KV cache (see above) or "
        "add replicas; a larger --swap-space only postpones it"
    ),
    "silent_preemptions": (
        "requests leave the running batch for the queue with the KV cache full: the cache is too small "
        "for the load; grow it (see above) or add replicas"
    ),
}


def _failure_text(f: Finding, causes: Sequence[Finding]) -> str:
    root = f.data.get("root_cause") or f.data.get("exception")
    if isinstance(root, dict):  # {type, text, …} of detect.root_cause / crashes.innermost
        root = ": ".join(str(x) for x in (root.get("type"), root.get("text") or root.get("message")) if x)
    if f.id == "engine_crashed" and not causes:
        return (
            f"{f.data.get('cause') or 'the engine died'}: no launch flag restarts a killed or crashed engine; "
            "find who ended it (the kernel's OOM killer in dmesg, the container's memory limit, an operator's "
            "signal) or, if it crashed, its first exception above; the server must be restarted"
        )
    if causes:
        names = ", ".join(c.id for c in causes)
        return f"the failure is explained by {names}: its fix above makes the engine start"
    if root:
        return (
            f"the root cause is {str(root)[:200]}: no launch flag is known to fix it; check the model, "
            "its config and the vLLM version (upgrade, or report it with the full traceback)"
        )
    return (
        "the log shows the failure but not its cause: the first exception in the worker's traceback is "
        "the root cause; rerun and keep the whole log (VLLM_LOGGING_LEVEL=DEBUG) to find it"
    )


def close(p: Plan, findings: Sequence[Finding]) -> None:
    """Give every warning or critical finding nobody answered its sentence."""
    done = p.answered()
    causes = [f for f in findings if f.id in _CAUSES and f.id in done]
    for f in findings:
        if f.id in done or severity_rank(f.severity) < severity_rank("warning"):
            continue
        rejected = f.data.get("flag") if f.id == "launch_rejected" else None
        if f.id in _FAILURES:
            text = _failure_text(f, causes)
        elif rejected and p.taken(str(rejected)):
            text = f"vLLM refused {rejected} as given: the {rejected} change above is a value it accepts"
        else:
            text = _TEXT.get(f.id) or (
                f"observe knows no launch flag that fixes this ({f.title.lower()}): read the evidence; "
                "if the engine misbehaves with a healthy configuration, upgrade vLLM or report it"
            )
        hint = _hint(f)
        p.note([f.id], text + (f"; vLLM itself suggests: {hint}" if hint else ""))
        done.add(f.id)


def _hint(f: Finding) -> str | None:
    """vLLM's own hint that names a flag, when the detector kept one."""
    h = f.data.get("hints")
    if isinstance(h, (list, tuple)) and h:
        return "; ".join(str(x)[:200] for x in h[:2])
    if isinstance(h, str) and h:
        return h[:200]
    return None
