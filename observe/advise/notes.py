"""What to say about a warning or critical finding no flag change answers: never silence.

Each sentence says why no flag helps (or why the numbers to choose one are missing) and what
to do instead. The sentences are the rules' (``Doc.note``, observe/rules/); this module says them,
and words the failures (``Doc.role`` "failure") by what caused them ("cause"). Pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from observe.advise.plan import Plan
from observe.findingids import FindingId
from observe.model import Finding, severity_rank

if TYPE_CHECKING:
    from observe.rules.base import Doc


#: where vLLM sizes the KV cache (V0 worker methods and frames, 0.4 → 0.10; V1's engine core): a failure
#: there whose exception is cut off is one of two refusals, or (V0 initialize_cache from 0.4.3) the
#: allocation or graph capture it also runs
_KV_SIZING = ("initialize_cache", "determine_num_available_blocks", "_initialize_kv_caches")


def _kv_sizing_text(f: Finding, kv_tokens: int | None) -> str | None:
    where = f.data.get("method") or f.data.get("frame")
    if where not in _KV_SIZING:
        return None
    cap = f" (the log shows {kv_tokens:,} tokens of KV cache)" if kv_tokens else ""
    return (
        f"the engine failed in the KV-cache sizing step ({where}), its exception cut off: vLLM refuses "
        "the launch there when no memory is left for the cache blocks or when --max-model-len exceeds "
        f"what the cache holds{cap}, and V0's initialize_cache also allocates the cache and captures CUDA "
        "graphs; the traceback's last line decides which (keep the whole log), and --max-model-len "
        "against the KV tokens tells the second"
    )


def _failure_text(f: Finding, causes: Sequence[Finding], kv_tokens: int | None = None) -> str:
    root = f.data.get("root_cause") or f.data.get("exception")
    fix = f.data.get("fix")
    if isinstance(root, dict):  # {type, text, …} of failing.root_cause / failing.innermost
        fix = fix or root.get("fix")
        root = ": ".join(str(x) for x in (root.get("type"), root.get("text") or root.get("message")) if x)
    if f.id == FindingId.ENGINE_CRASHED and not causes:
        return (
            f"{f.data.get('cause') or 'the engine died'}: no launch flag restarts a killed or crashed engine; "
            "find who ended it (the kernel's OOM killer in dmesg, the container's memory limit, an operator's "
            "signal) or, if it crashed, its first exception above; the server must be restarted"
        )
    if causes:
        names = ", ".join(c.id for c in causes)
        dead = f.id == FindingId.ENGINE_CRASHED or f.data.get("phase") == "serving"  # it had started
        return f"the failure is explained by {names}: its fix above " + (
            "keeps the engine from dying of it" if dead else "makes the engine start"
        )
    if (not root or "cut off" in str(root)) and (kv := _kv_sizing_text(f, kv_tokens)):
        return kv  # the cause is cut off, but the step names the two refusals it can be
    if root and fix:  # the line's reader knows what fixes it (no launch flag: the host's setting)
        return f"the root cause is {str(root)[:200]}: {fix}"
    if root:
        return (
            f"the root cause is {str(root)[:200]}: no launch flag is known to fix it; check the model, "
            "its config and the vLLM version (upgrade, or report it with the full traceback)"
        )
    return (
        "the log shows the failure but not its cause: the first exception in the worker's traceback is "
        "the root cause; rerun and keep the whole log (VLLM_LOGGING_LEVEL=DEBUG) to find it"
    )


def close(p: Plan, findings: Sequence[Finding], docs: Mapping[str, Doc]) -> None:
    """Give every warning or critical finding nobody answered its sentence (``docs``: the rules'
    documentation by finding id)."""
    done = p.answered()
    role = {fid: d.role for fid, d in docs.items()}
    causes = [f for f in findings if role.get(f.id) == "cause" and f.id in done]
    for f in findings:
        if f.id in done or severity_rank(f.severity) < severity_rank("warning"):
            continue
        rejected = f.data.get("flag") if f.id == FindingId.LAUNCH_REJECTED else None
        if role.get(f.id) == "failure":
            text = _failure_text(f, causes, p.cfg.kv_cache_tokens)
        elif rejected and p.taken(str(rejected)):
            text = f"vLLM refused {rejected} as given: the {rejected} change above is a value it accepts"
        else:
            note = docs[f.id].note if f.id in docs else None
            text = note or (
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
