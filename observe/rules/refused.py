"""The launch vLLM refused: argparse, pydantic's validation of a config, a config check's ValueError, the
GPU too old for the quantization method or the dtype — one finding quoting vLLM's reason, with the value
that passes the check where one does. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from observe.advise import rejected
from observe.failures.kinds import FailureKind, kinds_feeding
from observe.findingids import FindingId
from observe.model import Finding
from observe.quote import quote
from observe.rules.base import Doc, Rule, Section, on
from observe.rules.context import Context

#: vLLM's own build refusing a GPU below its floor (setup.py, 0.1 → 0.4's build for the GPUs of the machine: "GPUs with
#: compute capability below 7.0 are not supported."): its kernels are built for 7.0 and newer only, so a log holding it
#: says this vLLM has none for a 6.x GPU (then float16 starts nothing either); without it, a build for the GPU may
#: (advise.rejected._bf16)
BUILD_FLOOR = "compute capability below 7.0 are not supported"

#: the kinds launch_rejected() reads: vLLM's validation of the arguments and the config
_REJECTED_KINDS = kinds_feeding(FindingId.LAUNCH_REJECTED)


_CONFIG_FLAG_WORDS = (
    "max_model_len",
    "max_num_batched_tokens",
    "max_num_seqs",
    "gpu_memory_utilization",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "kv_cache_dtype",
    "block_size",
    "quantization",
    "dtype",
    "num_speculative_tokens",
    "enable_chunked_prefill",
)


def _reason(text: str) -> str:
    """vLLM's own reason from a pydantic error line: without "Value error, " and pydantic's trailer."""
    t = text.strip()
    t = t.removeprefix("Value error, ")
    return quote(re.sub(r"\s*\[type=[^\]]*\]?\s*$", "", t), 500)


def _gpu_too_old(bad: Sequence[Any]) -> str | None:
    """The title of vLLM's quantization capability check (parse.failures ``quant-capability``), if it is one."""
    x = next((e.details for e in bad if e.details.get("reason") == "gpu_capability"), None)
    if x is None:
        return None
    need, have = (
        f"{x[k] // 10}.{x[k] % 10}" if x.get(k) else "none" for k in ("min_capability", "capability")
    )
    have = "below it; the line that says is cut off" if x.get("cut") else have
    q = x.get("quantization")
    what = f"{q} quantization" if q else f"{x['dtype']} (the model's dtype)"
    return f"{what} needs GPU compute capability {need} (this GPU: {have})"


#: what a refusal with no flag judged, by its reason (parse.euroeval: vLLM could not read the repository's config)
_WHAT = {
    "config_format": "no model config it can read",
    # the ``vllm`` console script's refusal of ``vllm serve --model X`` (parse.servemodel)
    "model_option": "`vllm serve` takes the model as its positional argument, not --model",
}


def launch_rejected(c: Context) -> list[Finding]:
    """vLLM refused the launch while validating its arguments (argparse) or its config (pydantic
    ValidationError, a ValueError of a config check). Data: flag (the offending flag, None when the
    excerpt does not name one), value (the rejected value, when given), text, source ("argparse" |
    "pydantic" | "config"), reason ("unrecognized" | "required" | "gpu_capability": the GPU is too old for
    the quantization method or the dtype | "model_option": `vllm serve --model X`, the model not positional |
    "config_format": no model config vLLM can read | None); the bfloat16 check adds dtype and capability (×10, or None) and
    build_floor (True when the log holds vLLM's build refusing GPUs below 7.0, ``BUILD_FLOOR``), the
    "max_num_batched_tokens (B) is smaller than max_model_len (L)" check max_num_batched_tokens and max_model_len,
    the "max_num_scheduled_tokens is set to N" check max_num_scheduled_tokens, the "max_num_seqs (N) exceeds available
    Mamba cache blocks (M)" check max_num_seqs and mamba_blocks."""
    s = c.summary
    bad = [e for e in s.errors if e.kind in _REJECTED_KINDS]
    if not bad:
        return []
    d: dict[str, Any] = {"flag": None, "value": None, "text": None, "source": None, "reason": None}
    for e in bad:
        x = e.details
        if e.kind == FailureKind.MAX_POSITION_EXCEEDED:
            d["flag"] = d["flag"] or "--max-model-len"
            d["value"] = d["value"] if d["value"] is not None else x.get("max_model_len")
            if d["text"] is None or d.get("_header"):
                d["text"], d["_header"] = _reason(e.message), False
            d["source"] = d["source"] or "config"
            continue
        d["source"] = d["source"] or x.get("source")
        if x.get("text") and (d["text"] is None or d.get("_header")):
            d["text"], d["_header"] = _reason(str(x["text"])), False  # vLLM's reason beats pydantic's header
        elif d["text"] is None:
            d["text"], d["_header"] = quote(e.message, 500), True
        d["flag"] = d["flag"] or x.get("flag")
        d["reason"] = d["reason"] or x.get("reason")
        if x.get("fix") and not d.get("fix"):  # what the refusal's reader knows fixes it (parse.euroeval)
            d["fix"] = x["fix"]
        if d["value"] is None:
            d["value"] = x.get("value", x.get("max_num_batched_tokens"))
        if x.get("max_num_batched_tokens") is not None and x.get("max_model_len") is not None:
            # the batched-tokens check's numbers, for the advice when the quoted text does not hold them
            d["max_num_batched_tokens"], d["max_model_len"] = x["max_num_batched_tokens"], x["max_model_len"]
        if x.get("mamba_blocks") is not None:  # the hybrid model's state-cache check (parse.mambacap)
            d["max_num_seqs"], d["mamba_blocks"] = x["max_num_seqs"], x["mamba_blocks"]
        if (
            x.get("max_num_scheduled_tokens") is not None
        ):  # the speculative budget's check (parse.schedbudget)
            d["max_num_scheduled_tokens"] = x["max_num_scheduled_tokens"]
    d.pop("_header", None)
    g: dict[str, Any] = next((e.details for e in bad if e.details.get("reason") == "gpu_capability"), {})
    d.update({k: g.get(k) for k in ("dtype", "capability") if g.get("dtype")})  # the bfloat16 check's
    if g.get("dtype") and any(BUILD_FLOOR in e.message for e in s.errors):
        d["build_floor"] = True  # the log holds vLLM's build refusing GPUs below 7.0
    if d["flag"] is None and d["text"] and d["reason"] != "gpu_capability":  # the GPU's, no flag's
        hits = [(d["text"].find(w), w) for w in _CONFIG_FLAG_WORDS if w in d["text"]]
        word = min(hits)[1] if hits else None  # the first flag the reason names is the one it judges
        d["flag"] = "--" + word.replace("_", "-") if word else None
        if word and d["value"] is None:
            m = re.search(re.escape(word) + r"\s*\((\d+(?:\.\d+)?)\)", d["text"])
            d["value"] = (float(m.group(1)) if "." in m.group(1) else int(m.group(1))) if m else None
    e0 = bad[0]
    return [
        Finding(
            id=FindingId.LAUNCH_REJECTED,
            severity="critical",
            title="vLLM rejected the launch: "
            + (
                f"{d['flag']} is invalid"
                if d["flag"]
                else _gpu_too_old(bad) or _WHAT.get(d["reason"], "invalid arguments")
            ),
            evidence=quote(d["text"] or e0.message, 500),
            start=e0.env.ts,
            end=e0.env.ts,
            where=f"{e0.env.source}:{e0.env.lineno}",
            data=d,
        )
    ]


# ---------------------------------------------------------------- the rules


LAUNCH_REJECTED = Rule(
    family="startup and failures",
    detect=launch_rejected,
    docs=(
        Doc(
            FindingId.LAUNCH_REJECTED,
            "critical",
            Section.NOT_STARTED,
            evidence=(
                "vLLM refused its arguments or config (argparse; pydantic `N validation error for"
                " XConfig` with vLLM's `Value error, …` reason; a config check's ValueError) — "
                "the evidence quotes vLLM's reason"
            ),
            advice=(
                "the value that passes the check it names: `max_num_batched_tokens (N) must be "
                "greater than or equal to max_num_seqs (M)` → `--max-num-batched-tokens` M (or "
                "`--max-num-seqs` N); `max_num_batched_tokens (N) is smaller than max_model_len "
                "(L)` → `--max-num-batched-tokens` L (or `--enable-chunked-prefill`, or `--max-"
                "model-len` N); `max_num_scheduled_tokens is set to N, which does not allow any tokens to be "
                "scheduled` (speculative decoding's drafting slots set aside) → `--max-num-batched-tokens` raised by "
                "the slots set aside when its value in force is shown, else a note (raise it by at least 1 − N, or "
                "lower `--max-num-seqs` or num_speculative_tokens); `max_num_seqs (N) exceeds available Mamba cache "
                "blocks (M)` (a hybrid model's state cache, one block per decode sequence) → `--max-num-seqs` M, or "
                "more memory (`--gpu-memory-utilization` up); `vllm serve` refusing `--model` → a note: the model as "
                "the positional argument (`vllm serve <model> …`); otherwise a note quoting the reason. The command to paste never "
                "repeats the rejected value (left out when no lever sets it)"
            ),
        ),
    ),
    needs=("errors",),
    levers=(on(FindingId.LAUNCH_REJECTED, 20, rejected.launch_rejected),),
)
