"""What if: the expected effect of changing launch flags on an engine whose facts a log gave.

Bytes per token come from measured memory / measured tokens when both are known, from the model
otherwise; a number that needs a fact nobody measured stays None. Pure: no I/O.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from observe.capacity import defaults
from observe.capacity.nonkv import forward_activation_gib as estimate_activation_gib
from observe.capacity.sizing import (
    KV_DTYPE_BYTES,
    MAX_LEN,
    MAX_TP,
    bytes_per_token,
    check_range,
    compute,
    kv_bytes_per_element,
)
from observe.capacity.tables import GB, GIB, ModelSpec, model_spec
from observe.errors import ConfigError
from observe.flags import cmdline
from observe.model import EngineConfig


@dataclass
class WhatIf:
    """The expected effect of changing launch flags, from measured facts where there are any."""

    kv_tokens_before: int | None
    kv_tokens_after: int | None
    concurrency_before: int | None
    concurrency_after: int | None
    headroom_gib_after: float | None
    basis: str  # "measured" | "estimated" | "unknown"
    summary: str
    request_tokens: int | None = None
    notes: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


WHAT_IF_FLAGS = (
    "--tensor-parallel-size",
    "--gpu-memory-utilization",
    "--kv-cache-dtype",
    "--block-size",
    "--max-model-len",
    "--max-num-seqs",
)


def _current(cfg: EngineConfig, attr: str, flag: str) -> Any:
    """The value in force (observe.flags.cmdline's one rule); ``attr`` names the EngineConfig field."""
    return cmdline.in_force(cfg, flag)


def _num(flag: str, v: Any, *, integer: bool) -> Any:
    """A flag value as given on the command line ('0.95', 8192) → a number, or ConfigError."""
    try:
        n = float(v) if not isinstance(v, (int, float)) or isinstance(v, bool) else v
    except (TypeError, ValueError):
        raise ConfigError(f"{flag} needs a number, not {v!r}") from None
    if isinstance(v, bool) or math.isnan(n) or math.isinf(n):
        raise ConfigError(f"{flag} needs a number, not {v!r}")
    return int(n) if integer and int(n) == n else n


def _requests(
    tokens: int | None, length: int | None, block_size: int, engine: str, seqs: int | None
) -> int | None:
    """Requests of `length` tokens that fit at once (whole blocks; V1 keeps one null block)."""
    if tokens is None or not length:
        return None
    blocks = tokens // block_size - (1 if engine == "v1" else 0)
    n = max(0, blocks) // math.ceil(length / block_size)
    return min(n, seqs) if seqs else n


@dataclass
class _Engine:
    """What what_if knows of one engine, updated flag by flag (GiB and bytes are per GPU)."""

    m: ModelSpec | None
    eng: str
    bs: int
    tp: int
    pp: int
    util: float
    dtype: str
    mml: int | None
    seqs: int | None
    mnbt: Any
    weights_gib: float | None
    tokens: int | None = None
    avail: float | None = None
    bpt: float | None = None
    basis: str = "unknown"
    scale: float = 1.0  # tokens after = tokens before x scale (then whole blocks)
    unknown: bool = False
    util_assumed: bool = False
    lost: bool = False  # the log's non-default args line was cut: a flag it does not show is unknown
    util_lost: bool = False  # ... and --gpu-memory-utilization is one of them
    notes: list[str] = field(default_factory=list)


def _engine_facts(cfg: EngineConfig, m: ModelSpec | None, gpu_total_gib: float | None) -> _Engine:
    """Read the launch facts (attributes first, then the flags as printed) and size the cache."""

    def num(attr: str, flag: str, integer: bool, default: Any = None) -> Any:
        v = _current(cfg, attr, flag)
        return default if v is None else _num(flag, v, integer=integer)

    e = _Engine(
        m=m,
        eng=cfg.engine if cfg.engine in ("v0", "v1") else defaults.engine_for(cfg.version, None),
        bs=num("block_size", "--block-size", True, defaults.block_size(cfg.version, engine=cfg.engine)),
        tp=num("tensor_parallel_size", "--tensor-parallel-size", True, 1),
        pp=num("pipeline_parallel_size", "--pipeline-parallel-size", True, 1),
        util=float(num("gpu_memory_utilization", "--gpu-memory-utilization", False, -1.0)),
        dtype=str(_current(cfg, "kv_cache_dtype", "--kv-cache-dtype") or "auto").strip().lower(),
        mml=num("max_model_len", "--max-model-len", True),
        seqs=num("max_num_seqs", "--max-num-seqs", True),
        mnbt=_current(cfg, "max_num_batched_tokens", "--max-num-batched-tokens"),
        weights_gib=cfg.weights_gib,
    )
    e.lost = bool(cfg.flags_damaged)
    if e.util < 0 and e.lost:  # it may have been in the part of the args line that was lost
        e.util_lost = True
        e.notes.append("--gpu-memory-utilization unknown: the log's non-default args line was cut")
    elif e.util < 0:
        e.util, e.util_assumed = defaults.gpu_memory_utilization(cfg.version), True
        e.notes.append(
            f"--gpu-memory-utilization not in the log: assumed vLLM's default {e.util:g}"
            + ("" if cfg.version else f" (vLLM {defaults.release(None)}'s: the log names no release)")
        )
    if e.dtype not in KV_DTYPE_BYTES:  # as a log printed it, e.g. "torch.bfloat16", "fp8_e4m3fn"
        e.dtype = "fp8" if "fp8" in e.dtype or "float8" in e.dtype else "auto"
    e.tokens = (
        cfg.kv_cache_tokens
        if cfg.kv_cache_tokens is not None
        else (cfg.num_gpu_blocks * e.bs if cfg.num_gpu_blocks is not None else None)
    )
    e.avail = cfg.available_kv_gib
    if e.avail is not None and e.tokens:
        e.bpt, e.basis = e.avail * GIB / e.tokens, "measured"
    elif m is not None:
        e.bpt = float(bytes_per_token(m, tp=e.tp, pp=e.pp, kv_cache_dtype=e.dtype))
        e.basis = "measured" if e.tokens is not None else "estimated"
        if e.tokens is not None and e.avail is None:
            e.avail = e.tokens * e.bpt / GIB
        elif e.avail is not None and e.tokens is None:
            e.tokens = int(e.avail * GIB // (e.bpt * e.bs)) * e.bs
    elif e.tokens is not None:
        e.basis = "measured"  # ratios (dtype, block size) still work without absolute bytes
    if e.tokens is None and m is not None and gpu_total_gib and e.util >= 0:
        try:
            r = compute(
                m,
                gpu_memory_gib=gpu_total_gib,
                tp=e.tp,
                pp=e.pp,
                gpu_memory_utilization=e.util,
                max_model_len=e.mml,
                kv_cache_dtype=e.dtype,
                block_size=e.bs,
                vllm_version=cfg.version,
                max_num_seqs=e.seqs,
                weights_gib=cfg.weights_gib,
            )
            e.tokens, e.avail, e.basis = r.kv_cache_tokens, r.kv_memory_gib, "estimated"
        except ConfigError as err:
            e.notes.append(f"no estimate: {err}")
    return e


def _unshown(e: _Engine) -> str:
    """A flag's value before a change when the log does not show it: vLLM's default, or unknown
    when the log's args line was cut."""
    return "unknown" if e.lost else "default"


def _grow(e: _Engine, delta_gib: float) -> None:
    """Add (or remove) KV memory; tokens scale with it."""
    if e.avail is not None and e.avail > 0:
        e.scale *= (e.avail + delta_gib) / e.avail
    if e.avail is not None:
        e.avail += delta_gib


def _apply(e: _Engine, flag: str, new: Any, gpu_total_gib: float | None) -> str:
    """Apply one flag change to `e`; returns its description for the summary."""
    m = e.m
    if flag == "--kv-cache-dtype":
        old_b, new_b = kv_bytes_per_element(e.dtype, m), kv_bytes_per_element(str(new), m)
        e.scale *= old_b / new_b
        e.bpt = e.bpt * new_b / old_b if e.bpt is not None else None
        text = f"{new} KV cache" if new_b < old_b else f"--kv-cache-dtype {e.dtype} → {new}"
        e.dtype = str(new)
        return text
    if flag == "--gpu-memory-utilization":
        u = float(_num(flag, new, integer=False))
        check_range(flag, u, 0, 1, lo_open=True)
        if gpu_total_gib and e.avail is not None and e.bpt and e.util >= 0:
            _grow(e, (u - e.util) * gpu_total_gib)
        elif e.util < 0:
            e.unknown = True
            e.notes.append(
                "the effect of --gpu-memory-utilization needs the value in force, which the log lost"
            )
        else:
            e.unknown = True
            e.notes.append(
                "the effect of --gpu-memory-utilization needs the GPU's total memory and the KV bytes per token"
            )
        was = "unknown" if e.util < 0 else f"{e.util:.2f}" + (" (vLLM default)" if e.util_assumed else "")
        text, e.util = f"--gpu-memory-utilization {was} → {u:.2f}", u
        return text
    if flag == "--block-size":
        nb = int(_num(flag, new, integer=True))
        check_range(flag, nb, 1, 4096, integer=True)
        text, e.bs = f"--block-size {e.bs} → {nb}", nb
        return text
    if flag == "--max-model-len":
        nl = int(_num(flag, new, integer=True))
        check_range(flag, nl, 1, MAX_LEN, integer=True)
        if (
            e.eng == "v0"
            and m is not None
            and e.mml
            and e.mnbt in (None, e.mml)
            and e.avail is not None
            and e.bpt
        ):
            # V0 without chunked prefill profiles a max(max_model_len, 2048)-token prefill
            freed = (estimate_activation_gib(m, max(e.mml, 2048), e.tp) or 0.0) - (
                estimate_activation_gib(m, max(nl, 2048), e.tp) or 0.0
            )
            _grow(e, freed)
            e.notes.append(
                "V0 profiles a full --max-model-len prefill: a shorter length frees activation memory"
            )
        text, e.mml = f"--max-model-len {e.mml if e.mml is not None else _unshown(e)} → {nl}", nl
        return text
    if flag == "--max-num-seqs":
        ns = int(_num(flag, new, integer=True))
        check_range(flag, ns, 1, 10_000_000, integer=True)
        text, e.seqs = f"--max-num-seqs {e.seqs if e.seqs is not None else _unshown(e)} → {ns}", ns
        return text
    # --tensor-parallel-size: weights per GPU shrink, KV heads split further
    nt = int(_num(flag, new, integer=True))
    check_range(flag, nt, 1, MAX_TP, integer=True)
    w = e.weights_gib
    if w is None and m is not None and m.weights_gb:
        w = m.weights_gb * GB / GIB / (e.tp * e.pp)
    if m is not None and e.avail is not None and e.bpt and w is not None:
        old_bpt = float(bytes_per_token(m, tp=e.tp, pp=e.pp, kv_cache_dtype=e.dtype))
        new_bpt = float(bytes_per_token(m, tp=nt, pp=e.pp, kv_cache_dtype=e.dtype))
        _grow(e, w - w * e.tp / nt)
        e.scale *= old_bpt / new_bpt
        e.bpt = e.bpt * new_bpt / old_bpt
        e.notes.append(f"assumes the same GPUs: weights per GPU {w:.1f} → {w * e.tp / nt:.1f} GiB")
    else:
        e.unknown = True
        e.notes.append("the effect of --tensor-parallel-size needs the model's KV heads and weights")
    text, e.tp = f"--tensor-parallel-size {e.tp} → {nt}", nt
    return text


def what_if(
    cfg: EngineConfig,
    changes: Mapping[str, Any],
    *,
    request_tokens: int | None = None,
    gpu_total_gib: float | None = None,
    model: ModelSpec | str | None = None,
) -> WhatIf:
    """Expected effect of changing vLLM flags on an engine whose launch facts `cfg` holds.

    Bytes per token come from the measured available KV memory / KV tokens when both are known,
    from the model spec otherwise; numbers that need a fact nobody measured stay None.
    """
    bad = [k for k in changes if k not in WHAT_IF_FLAGS]
    if bad:
        raise ConfigError(
            f"cannot predict the effect of {', '.join(bad)}; known flags: {', '.join(WHAT_IF_FLAGS)}"
        )
    if not changes:
        raise ConfigError("what_if needs at least one flag change")
    check_range("request length", request_tokens, 1, MAX_LEN, integer=True)
    check_range("GPU total memory", gpu_total_gib, 0, 16384, lo_open=True)
    m: ModelSpec | None = model_spec(model) if model is not None else None
    if m is None and cfg.model:
        try:
            m = model_spec(cfg.model)
        except ConfigError:
            m = None
    e = _engine_facts(cfg, m, gpu_total_gib)
    before = e.tokens
    length = request_tokens or e.mml
    # a cap the cut args line may have held bounds the concurrency before: unknown
    conc_before = None if e.lost and e.seqs is None else _requests(before, length, e.bs, e.eng, e.seqs)
    parts = [_apply(e, flag, changes[flag], gpu_total_gib) for flag in WHAT_IF_FLAGS if flag in changes]
    if request_tokens is None and "--max-model-len" in changes:
        length = e.mml
    after = None if (before is None or e.unknown) else int(before * e.scale + 1e-6) // e.bs * e.bs
    conc_after = None if after is None else _requests(after, length, e.bs, e.eng, e.seqs)
    headroom = round(gpu_total_gib * (1 - e.util), 2) if gpu_total_gib and e.util >= 0 else None

    text = "; ".join(parts) + ": "
    if after is None or before is None:  # no size before means none after
        why = (
            "no KV-cache size in the log"
            if before is None
            else "the value in force is unknown: the log's non-default args line was cut"
            if "--gpu-memory-utilization" in changes and e.util_lost
            else "needs the GPU's total memory"
            if "--gpu-memory-utilization" in changes
            else "needs the model"
        )
        text += f"effect unknown ({why})"
        e.basis = "unknown"
    else:
        if after == before:
            text += f"KV cache stays at {after:,} tokens"
        elif "--gpu-memory-utilization" in changes and len(changes) == 1:
            text += f"{'adds' if after > before else 'removes'} {abs(after - before):,} tokens ({before:,} → {after:,})"
        else:
            text += f"{before:,} → {after:,} tokens"
        if length and conc_before is not None and conc_after is not None:
            text += f"; max concurrency at {length:,} tokens: {conc_before:,} → {conc_after:,}"
        if "--max-num-seqs" in changes and e.seqs is not None:
            text += f" (at most {e.seqs:,} running)"
    if "--gpu-memory-utilization" in changes and headroom is not None:
        text += f"{',' if after is not None else ';'} and leaves {headroom:.1f} GiB of headroom"
    return WhatIf(
        kv_tokens_before=before,
        kv_tokens_after=after,
        concurrency_before=conc_before,
        concurrency_after=conc_after,
        headroom_gib_after=headroom,
        basis=e.basis,
        summary=text,
        request_tokens=length,
        notes=e.notes,
    )
