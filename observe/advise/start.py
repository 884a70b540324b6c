"""Levers for an engine that did not start or crashed: each answer in the numbers the log gave.

A `--max-model-len` that does not fit gets its levers side by side (any one makes it start):
lower the length, raise `--gpu-memory-utilization`, an fp8 KV cache, more GPUs. Out-of-memory
errors get the levers of the phase they happened in (oom.py). Pure.
"""

from __future__ import annotations

import math
import re
from dataclasses import replace
from typing import Any

from observe.advise.plan import Plan
from observe.advise.units import ceil_to, fmt_bytes, parse_bytes, round_down
from observe.capacity import defaults
from observe.model import Finding
from observe.versions import parse_version


def _num(d: dict, *keys: str) -> float | None:
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0:
            return float(v)
    return None


def _is_gpu(p: Plan) -> bool:
    return (p.cfg.device or "GPU").upper() != "CPU"


def _fp8(p: Plan) -> str:
    """The fp8 KV-cache value this vLLM accepts."""
    from observe.flags import known

    return "fp8" if known.valid_value("--kv-cache-dtype", "fp8", p.cfg) else "fp8_e5m2"


_V0_LAST = "0.10.2"  # the newest release that still had V0 (capacity.defaults)
_GIB_FIGURE = {
    "need": re.compile(r"\((\d+(?:\.(\d+))?) GiB KV cache is needed"),
    "have": re.compile(r"available KV cache memory \((\d+(?:\.(\d+))?) GiB\)"),
}


def _decimals(f: Finding, which: str) -> int:
    """How many decimals the message printed that GiB figure with (2 when the evidence lacks it)."""
    m = _GIB_FIGURE[which].search(f.evidence or "")
    return len(m.group(2) or "") if m else 2


def _half_unit(f: Finding, which: str) -> float:
    """The most a printed figure can be off by its rounding: half its last digit."""
    return 0.5 * 10.0 ** -_decimals(f, which)


def max_model_len_does_not_fit(p: Plan, f: Finding) -> None:
    """The longest request does not fit the KV cache: any one lever that makes one request fit."""
    cfg, d = p.cfg, f.data
    want = int(_num(d, "max_model_len") or cfg.max_model_len or 0)
    tokens = _num(d, "max_model_len_fits", "estimated_max_model_len", "kv_tokens", "kv_cache_tokens")
    need_gib = _num(d, "kv_needed_gib", "needed_gib")
    have_gib = _num(d, "kv_available_gib", "available_gib")
    rounded = ""
    from_ratio = d.get("fits_from") == "ratio" or tokens is None
    if from_ratio and need_gib and have_gib and want:
        # the KV bytes per token are the same for every length; the message rounds its GiB figures,
        # so the exact ratio can land a few blocks above what fits: take the worst case of the rounding
        m_need, m_have = _half_unit(f, "need"), _half_unit(f, "have")
        exact = want * have_gib / need_gib
        tokens = want * max(have_gib - m_have, 0.0) / (need_gib + m_need)
        if int(tokens) < int(exact):
            rounded = (
                f" (rounded down from {int(exact):,}: the message's {need_gib:g} GiB needed and {have_gib:g} GiB "
                f"available are rounded to ±{m_need:g} / ±{m_have:g} GiB; the exact ratio of rounded figures may not fit)"
            )
    if tokens and not want:  # the KV tokens shown, the length asked not (a cut log): the largest that fits
        _fit_unknown_len(p, f, int(tokens))
        return
    if not tokens or not want:
        p.note(
            [f.id],
            "the log does not say how many tokens the KV cache holds: lower --max-model-len (vLLM "
            "prints the largest length that fits in its error), raise --gpu-memory-utilization, or "
            "give the model more GPUs (--tensor-parallel-size)",
        )
        return
    factor = want / tokens  # how many times the cache must grow for one request of `want`
    bs = int(cfg.block_size or defaults.block_size(cfg.version, engine=cfg.engine))
    fits = round_down(int(tokens), bs) if tokens >= bs else int(tokens)
    opts: list[Any] = []
    lost = f"; requests longer than {fits:,} tokens are rejected"
    opts.append(
        p.make(
            "--max-model-len",
            fits,
            f"the KV cache holds {int(tokens):,} tokens, less than one request of {want:,}",
            [f.id],
            effect=f"the engine starts: one request of up to {fits:,} tokens fits the {int(tokens):,}-token KV cache"
            + rounded
            + lost,
        )
    )
    kvb = (
        parse_bytes(cfg.flags.get("--kv-cache-memory-bytes"))
        if cfg.flags.get("--kv-cache-memory-bytes")
        else None
    )
    if kvb:  # the user's own KV budget is the limit (--gpu-memory-utilization does not apply to it)
        new_b = int(kvb * factor * 1.05)
        opts.insert(
            0,
            p.make(
                "--kv-cache-memory-bytes",
                fmt_bytes(new_b),
                f"--kv-cache-memory-bytes {kvb:,} B holds {int(tokens):,} tokens, less than one request of {want:,}",
                [f.id],
                effect=f"the engine starts: ~{int(tokens * new_b / kvb):,} KV tokens ≥ {want:,}",
            ),
        )
    total = cfg.total_gpu_memory_gib or _num(d, "total_gpu_memory_gib", "total_gib")
    from observe.flags import known

    util, util_is_default = cfg.gpu_memory_utilization, False
    if util is None:
        util = known.assumed("--gpu-memory-utilization", cfg)
        util_is_default = util is not None
    if _is_gpu(p) and not kvb and total and have_gib is not None and need_gib and util:
        u = ceil_to(util + (need_gib - have_gib) * 1.02 / total, 0.01)
        if u <= p.settings.max_gpu_util:
            opts.append(
                p.make(
                    "--gpu-memory-utilization",
                    u,
                    f"{need_gib - have_gib:.2f} GiB more KV memory holds one request of {want:,} tokens",
                    [f.id],
                    effect=f"the engine starts: KV memory {have_gib:.2f} → ~{need_gib * 1.02:.2f} GiB of "
                    f"{total:.1f} GiB (≥ {want:,} tokens)"
                    + (" from vLLM's default utilization" if util_is_default else ""),
                )
            )
    dtype = str(cfg.kv_cache_dtype or "auto").lower()
    if _is_gpu(p) and dtype in ("auto", "bfloat16", "float16", "half") and factor <= 2.0:
        v = _fp8(p)
        opts.append(
            p.make(
                "--kv-cache-dtype",
                v,
                "an fp8 KV cache holds twice the tokens in the same memory (small accuracy cost; check your evals)",
                [f.id],
                effect=f"the engine starts: ~{int(tokens * 2):,} KV tokens ≥ {want:,}",
            )
        )
    tp = int(cfg.tensor_parallel_size or 1)
    pp = int(cfg.pipeline_parallel_size or 1)
    if _is_gpu(p):
        k = 2 ** math.ceil(math.log2(max(factor, 1.0001)))
        if pp > 1:  # the stage with the least room decides: more stages, or a partition that spares it
            opts.append(
                p.make(
                    "--pipeline-parallel-size",
                    pp * k,
                    f"{pp * k} pipeline stages hold 1/{k} of the layers each (and their share of every "
                    "request's KV cache)",
                    [f.id],
                    effect=f"the engine starts on {tp * pp * k} GPUs ({tp} per stage): at least "
                    f"~{int(tokens * k):,} KV tokens ≥ {want:,} on the tightest stage",
                )
            )
            p.note(
                [f.id],
                f"with {pp} pipeline stages the stage with the least free memory sets the limit: "
                "VLLM_PP_LAYER_PARTITION (e.g. '16,32') moves layers off the smaller GPU without adding any",
            )
        if tp * k <= 16:
            opts.append(
                p.make(
                    "--tensor-parallel-size",
                    tp * k,
                    f"{k}× the GPUs split the weights and the KV heads: each GPU holds its share of a request",
                    [f.id],
                    effect=f"the engine starts on {tp * k * pp} GPUs"
                    + (f" ({tp * k} per stage × {pp} stages)" if pp > 1 else "")
                    + f": at least ~{int(tokens * k):,} KV tokens ≥ {want:,} "
                    "(more where the weights freed per GPU go to the cache; needs the KV heads divisible by it)",
                )
            )
    if p.add_any_of(opts) is None:
        p.note([f.id], f"one request of {want:,} tokens needs {factor:.1f}× the KV cache this engine has")


def _fit_unknown_len(p: Plan, f: Finding, tokens: int) -> None:
    """The KV cache's tokens known, the --max-model-len in force not (the log does not show it; unset, it is
    the model's own context length): the largest length that fits, rounded down to the block size."""
    bs = int(p.cfg.block_size or defaults.block_size(p.cfg.version, engine=p.cfg.engine))
    fits = round_down(tokens, bs) if tokens >= bs else tokens
    p.add(
        "--max-model-len",
        fits,
        f"the KV cache holds {tokens:,} tokens and vLLM refuses a --max-model-len above that (the log does not "
        "show the value in force: the model's own context length when the flag is unset)",
        [f.id],
        effect=f"the engine starts: one request of up to {fits:,} tokens fits the KV cache; requests longer are "
        "rejected (to keep the length: raise --gpu-memory-utilization or add GPUs, --tensor-parallel-size)",
    )


def model_len_over_model(p: Plan, f: Finding) -> None:
    n = _num(f.data, "derived_max_model_len", "max_position_embeddings")
    src = str(f.data.get("derived_from") or "")
    key = src if src and src != "None" else "its context length"
    asked = _num(f.data, "max_model_len")
    r = (
        p.make(
            "--max-model-len",
            int(n),
            f"vLLM's message names the model's limit: {int(n):,} ({key} in its config.json) is the longest "
            "context it supports",
            [f.id],
            effect=f"the engine starts with a {int(n):,}-token context",
        )
        if n
        else None
    )
    if r is not None and r.current is None and asked:  # the value refused, as the message names it
        r = replace(r, current=int(asked), current_is_default=False)
    if p.add_any_of([r]) is not None:
        return
    p.note(
        [f.id],
        "--max-model-len is above the model's context: set it at most to the model's "
        "max_position_embeddings, or use a model (or RoPE scaling) with a longer context",
    )


#: the share of a TPU worker's HBM (tpu-inference's cap) the advice leaves above what is in use, for the KV cache
HBM_KV_ROOM = 0.01


def _hbm_fit(p: Plan, f: Finding) -> bool:
    """tpu-inference's refusal with its figures (parse.tpumem): the utilization whose cap holds what is in use plus
    HBM_KV_ROOM of the devices for the KV cache, when one at most 0.99 does; else the model does not fit."""
    used, limit, cur = (f.data.get(k) for k in ("hbm_used_gib", "hbm_limit_gib", "gpu_memory_utilization"))
    if not (isinstance(used, float) and isinstance(limit, float) and isinstance(cur, float) and limit > 0):
        return False
    target = ceil_to(used / limit + HBM_KV_ROOM, 0.01)
    if target <= 0.99 and target > cur:
        return p.add(
            "--gpu-memory-utilization",
            target,
            "the weights and what the engine holds after loading them exceed the HBM cap the utilization sets",
            [f.id],
            effect=f"the cap becomes {target * limit:.1f} of the devices' {limit:.1f} GiB, "
            f"{target * limit - used:.1f} GiB above the {used:.1f} GiB in use, for the KV cache",
        )
    p.note(
        [f.id],
        f"the engine holds {used:.1f} of the devices' {limit:.1f} GiB HBM after loading the weights "
        f"({used / limit:.0%}): no --gpu-memory-utilization leaves room for a KV cache; more chips "
        "(--tensor-parallel-size), a quantized checkpoint or a smaller model",
    )
    return True


def _vllms_own(p: Plan, f: Finding) -> bool:
    """vLLM named the utilization itself ("… increase --gpu-memory-utilization to 0.5799", gpu_worker.py from 0.21:
    the value that keeps the KV cache it had before CUDA-graph memory was profiled): that value, where it is above
    the value in force (or that is unknown)."""
    hint = f.data.get("utilization_hint")
    cur, _ = p.current("--gpu-memory-utilization")
    if not isinstance(hint, float) or not 0 < hint <= 1 or (cur is not None and hint <= float(cur)):
        return False
    new = min(1.0, ceil_to(hint, 0.01))
    return p.add(
        "--gpu-memory-utilization",
        new,
        "vLLM's own figure: the utilization that gives the KV cache room again now that CUDA-graph memory is profiled",
        [f.id],
        effect=f"vLLM's budget grows to {new:.0%} of the GPU (its message names {hint:g})",
    )


def _above_default(p: Plan, f: Finding) -> bool:
    """The release's default in force (the flag not given, the release known): a first step above it, to
    Settings.max_gpu_util, with the other levers named should it not suffice."""
    cur, is_default = p.current("--gpu-memory-utilization")
    top = p.settings.max_gpu_util
    if not is_default or cur is None or float(cur) >= top - 1e-9:
        return False
    weights = p.cfg.weights_gib
    added = p.add(
        "--gpu-memory-utilization",
        top,
        "after the weights and the profile run nothing was left for the KV cache at vLLM's default",
        [f.id],
        effect=f"first step: {top - float(cur):.0%} more of the GPU for the KV cache"
        + (f" (the weights take {weights:.2f} GiB)" if weights else ""),
    )
    if added:
        p.note(
            [f.id],
            "if the start still finds no room for the KV cache, the weights leave too little of this GPU: a "
            "quantized checkpoint, more GPUs (--tensor-parallel-size), --cpu-offload-gb, or a shorter "
            "--max-model-len / --max-num-batched-tokens (a smaller profile pass)",
        )
    return added


def no_kv_memory(p: Plan, f: Finding) -> None:
    if _hbm_fit(p, f) or _vllms_own(p, f):
        return
    cfg = p.cfg
    cur = cfg.gpu_memory_utilization
    # vLLM's default for the release (0.92 from 0.20); a V0 engine of an unknown release had 0.9 (every V0
    # release's: 0.2.0 → 0.10), and a release not known at all (no version, or an untagged source build) the lowest
    # default any release has — never the newest release's 1.0
    version = cfg.version if parse_version(cfg.version) else (_V0_LAST if cfg.engine == "v0" else None)
    target = defaults.gpu_memory_utilization(version) if version else defaults.lowest_gpu_memory_utilization()
    if (
        cur is not None
        and cur < target
        and p.add(
            "--gpu-memory-utilization",
            target,
            "after the weights and activations nothing was left for the KV cache",
            [f.id],
            effect=f"{target - cur:.0%} more of the GPU for the KV cache",
        )
    ):
        return
    if _above_default(p, f):
        return
    p.note(
        [f.id],
        "after the weights and the profile run nothing was left for the KV cache, and the log gives "
        "no memory figures to size a fix: raise --gpu-memory-utilization if it is below vLLM's default, lower "
        "--max-model-len / --max-num-batched-tokens (a smaller profile pass), or give the model more "
        "GPUs (--tensor-parallel-size) or a quantized checkpoint",
    )


def memory_busy(p: Plan, f: Finding) -> None:
    """Free memory below what --gpu-memory-utilization asks for: other processes hold the GPU. When
    they hold most of it, free the GPU; a utilization sized to the rest only where the weights are
    known to fit it (otherwise the engine fails one step later, loading them)."""
    from observe.advise.oom import OTHERS_SHARE

    free, total = _num(f.data, "free_gib"), _num(f.data, "total_gib")
    if free and total:
        u = round(max(0.05, free / total - 0.02), 2)
        weights = p.cfg.weights_gib
        mostly_held = free < (1.0 - OTHERS_SHARE) * total
        fits = weights is not None and u * total >= weights * 1.25
        if mostly_held:
            p.note(
                [f.id],
                f"other processes hold {total - free:.1f} of this GPU's {total:.1f} GiB: free the GPU first "
                "(nvidia-smi shows who holds it: a leftover vLLM, another job) or use one nothing else holds"
                + (
                    ""
                    if fits
                    else f"; the {u * total:.1f} GiB left would hold this model only if its weights, "
                    "activations and some KV cache fit in it"
                ),
            )
        if (not mostly_held or fits) and p.add(
            "--gpu-memory-utilization",
            u,
            "other processes hold device memory; ask only for what is free",
            [f.id],
            effect=f"vLLM asks for {u * total:.1f} of the {free:.1f} GiB free"
            + (f" (the weights take {weights:.1f} GiB)" if weights else ""),
        ):
            return
        if mostly_held:
            return
    p.note(
        [f.id],
        "other processes hold GPU memory: stop them, or lower --gpu-memory-utilization to the free share",
    )


def prompt_too_long(p: Plan, f: Finding) -> None:
    cfg, d = p.cfg, f.data
    prompt, limit = _num(d, "prompt_tokens"), _num(d, "limit", "max_model_len")
    if not prompt:
        p.note(
            [f.id], "prompts were rejected as too long: raise --max-model-len, or truncate them client-side"
        )
        return
    bs = 1024
    new = int(-(-prompt // bs) * bs)
    kv = cfg.kv_cache_tokens
    if kv and kv < new:
        p.note(
            [f.id],
            f"a {int(prompt):,}-token prompt needs --max-model-len ≥ {new:,} but the KV cache holds "
            f"{kv:,} tokens: truncate prompts client-side, or grow the cache first (more GPUs, fp8)",
        )
        return
    lim = f" (limit {int(limit):,})" if limit else ""
    p.add(
        "--max-model-len",
        new,
        f"prompts of {int(prompt):,} tokens were rejected{lim}",
        [f.id],
        effect=f"accepts prompts of up to {new:,} tokens, if the model's context (max_position_embeddings) "
        "allows it and the KV cache holds one such request",
    )
    mnbt = cfg.max_num_batched_tokens
    chunked = cfg.flags.get("--enable-chunked-prefill")
    if cfg.engine == "v0" and chunked is not True and mnbt and int(mnbt) < new:
        p.add(
            "--max-num-batched-tokens",
            new,
            "without chunked prefill a prompt must fit one batch",
            [f.id],
            effect=f"a whole {new:,}-token prompt fits one prefill step",
        )
    p.note([f.id], "or truncate prompts client-side to the current limit")


#: a context length a model's name states ("-128k", "-1048k", "-1M"): the last such part of its name
_NAMED_CONTEXT_RE = re.compile(r"(?:^|[-_.])(\d+(?:\.\d+)?)([kKmM])(?=$|[-_.])", re.ASCII)


def named_context(model: str | None) -> tuple[int, str] | None:
    """The context length the model's name states (tokens, as written: 1048k → 1,048,000), if any."""
    if not model:
        return None
    found = list(_NAMED_CONTEXT_RE.finditer(model.rstrip("/").rsplit("/", 1)[-1]))
    if not found:
        return None
    m = found[-1]
    unit = 1000 if m.group(2) in "kK" else 1_000_000
    return int(float(m.group(1)) * unit), m.group(0).lstrip("-_.")


def long_context_start(p: Plan, f: Finding) -> None:
    """A start-up failure after the weights loaded, its cause cut off, of a model whose name states a context
    over Settings.long_context_len tokens while the command sets no --max-model-len: vLLM took the model's own
    length, and the steps that failed are the ones it sizes (V0's profile pass runs max(max_model_len, 2048)
    tokens a step without chunked prefill, config.py 0.2 → 0.5; the KV cache must hold one such request)."""
    cfg, d, first = p.cfg, f.data, p.settings.long_context_len
    named = named_context(cfg.model)
    if (
        named is None
        or named[0] <= first
        or cfg.weights_gib is None
        or d.get("phase") in ("loading", "serving", "shutdown")
        or not (d.get("cause_cut_off") or not d.get("root_cause"))
        or cfg.flags_damaged
        or p.current("--max-model-len")[0] is not None
    ):
        return
    tokens, word = named
    p.add(
        "--max-model-len",
        first,
        f"first step: the model's name states a {word} context (~{tokens:,} tokens) and the command sets no "
        f"--max-model-len, so vLLM took the model's own length; the start failed after the weights loaded "
        f"({cfg.weights_gib:g} GB), in the steps that length sizes (V0's profile pass runs up to that many tokens "
        "a step without chunked prefill; the KV cache must hold one such request); the traceback is cut before "
        "its exception line, which confirms it. Raise it while the engine starts (vLLM's KV error names the "
        "largest that fits)",
        [f.id],
        effect=f"the profile pass and one request's KV cache sized for {first:,} tokens instead "
        f"of ~{tokens:,}; requests longer are rejected",
    )


#: vLLM's CUDA-graph capture, as a failed start's frame names it (V0 model_runner.py capture_model → capture →
#: torch.cuda.graph's capture_begin / capture_end; V1 gpu_model_runner.py capture_model → _capture_cudagraphs)
_CAPTURE_FRAMES = frozenset({"capture_model", "_capture_cudagraphs", "capture_begin", "capture_end"})


def graph_capture_start(p: Plan, f: Finding) -> None:
    """A start-up that failed inside CUDA-graph capture (its frame is one of ``_CAPTURE_FRAMES``), for a cause no
    other finding names (a segfault, a kernel's error; an OOM is cuda_oom's): eager mode skips the capture, so the
    engine starts without the step that failed, whatever broke in it."""
    if f.data.get("frame") not in _CAPTURE_FRAMES:
        return
    p.add(
        "--enforce-eager",
        True,
        f"the start failed while capturing CUDA graphs (in {f.data['frame']}()): eager mode skips the capture",
        [f.id],
        effect="no CUDA graphs: the engine starts without the step that failed; decode is slower (typically "
        "10–30 %)",
    )
