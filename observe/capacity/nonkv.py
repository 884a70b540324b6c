"""Memory that is not KV cache, per GPU: weights, the profile run's peak, non-torch, CUDA graphs;
and vLLM's rule for a tensor/pipeline-parallel group whose GPUs have different free memory.

**The profile peak is the larger of the forward pass and the sampler, not their sum.** vLLM's
profile run does the forward pass over `--max-num-batched-tokens` tokens, frees its activations,
then samples for `--max-num-seqs` sequences (V1 `GPUModelRunner.profile_run` → `_dummy_run` then
`_dummy_sampler_run`, `vllm/v1/worker/gpu_model_runner.py`, 0.10.1.1; V0 `ModelRunner.profile_run`
runs both in one `execute_model`, 0.2.7 and 0.7.2). Both releases profile the sampler with top-k =
vocab - 1 and top-p < 1 (V1 also with every penalty), so it sorts the whole vocabulary of every
sequence: the logits, their fp32 copy, the sorted values and int64 indices, softmax, cumsum, the
penalty bin counts. `SAMPLER_BYTES_PER_LOGIT` per (sequence x vocabulary entry) fits three logs:

- gpt-oss-120b on one H100, 1,024 sequences x 201,088 vocab: 7.37 GiB besides weights at
  `--max-num-batched-tokens 8192` (vllm#23278, -2.14 GiB available) and 7.48 GiB at 1,024
  (vllm#27508, 1.71 GiB available at utilisation 0.95): the same at 1/8 the tokens, so it is not
  the forward pass; 34.8 and 37.0 B per logit after the forward estimate and non-torch memory;
- Qwen2.5-7B on an RTX 4060, 256 x 152,064: vLLM printed "PyTorch activation peak memory takes
  1.42GiB" (vllm#13882) where the forward pass needs 0.45: 39.2 B per logit.

This term replaces the flat 4.8 GiB "mixture of experts" allowance of earlier releases of observe,
which was this sampler in disguise (gpt-oss and Qwen3-MoE have 150-200k vocabularies and 1,024
sequences on >= 70 GiB GPUs).

**Quantised Mixtral in vLLM 0.2.x** (`mixtral.py`, 0.2.7): the experts are split whole across TP
ranks (`np.array_split(range(num_experts), tp_size)`) and each rank runs every token through each
of its experts at full width, masking the result; AWQ's `awq_gemm` is called with
`split_k_iters = pack_factor = 8`, so each expert projection first writes 8 partial outputs
(8 x tokens x 14,336 fp16 = 7 GiB at 32,768 profile tokens) and sums them; PyTorch's caching
allocator splits the freed 7 GiB block for the next small tensor and has to reserve a second one.
`awq_expert_loop_gib` counts those two buffers and the live expert outputs (vllm#2382).

**TP/PP and free memory** (the minimum rule): every rank profiles its own GPU and the KV cache of
the group is sized by the smallest answer (V0 `min(b[0] for b in num_blocks)`,
`engine/llm_engine.py` 0.2.7 and `executor/executor_base.py` 0.7.2; V1 `unify_kv_cache_configs`
sets `num_blocks` to the minimum over workers, `v1/core/kv_cache_utils.py` 0.10.1.1). What another
process on one GPU does depends on the release: V0 up to 0.6.3 measures `total - free` after the
profile, so that process's memory comes off that rank and therefore off every rank; V0 0.6.4 to
0.10 profiles from a baseline and ignores it (the cache may then fail to allocate); V1 refuses to
start when a GPU's free memory is below `total x --gpu-memory-utilization`
(`Worker.init_device`, "Free memory on device ... is less than desired GPU memory utilization").

Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from observe.capacity.tables import GIB

if TYPE_CHECKING:
    from observe.capacity.tables import ModelSpec


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


SAMPLER_BYTES_PER_LOGIT = 37  # median of 34.8, 37.0, 39.2 (vllm#23278, #27508, #13882)
AWQ_SPLIT_K = 8  # vLLM 0.2.7 awq.py: ops.awq_gemm(..., pack_factor) with pack_factor 8 as split_k_iters
NON_TORCH_ONE_GPU_GIB = 0.35  # vllm#10517 measured 0.35
NON_TORCH_PARALLEL_GIB = 1.0  # NCCL's peer-to-peer buffers live in GPU memory
NON_TORCH_PARALLEL_NO_P2P_GIB = 0.25  # 2 x RTX 4090, TP=2 printed 0.25 (vllm#13061): NCCL via host memory
CUDA_GRAPHS_GIB = 0.6  # v0.21+ deducts its CUDA-graph estimate


def sampler_peak_gib(seqs: int, vocab: int | None) -> float:
    """Peak of the profile run's sampler: `seqs` x vocabulary logits sorted for top-k/top-p."""
    return seqs * (vocab or 0) * SAMPLER_BYTES_PER_LOGIT / GIB


def forward_activation_gib(m: ModelSpec, mnbt: int, tp: int) -> float | None:
    """Forward-pass peak of the profile run: mnbt × (12·hidden + 4·intermediate) B / TP.

    Fitted on the single-GPU vectors of tests/data/capacity-vectors.json: the forward pass keeps
    about six hidden-sized and two intermediate-sized 16-bit tensors per token alive at its peak.
    """
    if not m.hidden:
        return None
    inter = m.intermediate or 4 * m.hidden
    return mnbt * (12 * m.hidden + 4 * inter) / tp / GIB


def awq_expert_loop_gib(
    m: ModelSpec, tokens: int, quantization: str | None, eng: str, ver: tuple[int, int, int] | None
) -> float | None:
    """Forward peak of vLLM 0.2.x's quantised Mixtral expert loop (None where it does not apply):
    two split-k output buffers of one full-width expert projection plus the live expert outputs,
    and the attention part of the dense estimate (12·hidden per token)."""
    q = (quantization or "").strip().lower()
    if not (m.moe and q == "awq" and eng == "v0" and ver is not None and ver < (0, 3, 0) and m.hidden):
        return None
    inter = m.intermediate or 4 * m.hidden
    out = tokens * inter * 2  # one expert projection's fp16 output
    return (2 * AWQ_SPLIT_K * out + 3 * out + tokens * 12 * m.hidden * 2 // 2) / GIB


@dataclass(frozen=True)
class NonKv:
    """Per-GPU GiB that is not KV cache; `profile` is the larger of forward and sampler."""

    weights: float | None
    forward: float | None
    sampler: float
    non_torch: float
    graphs: float

    @property
    def profile(self) -> float | None:
        if self.forward is None:
            return None
        return max(self.forward, self.sampler)


def non_kv_memory(
    m: ModelSpec,
    measured: Measured,
    *,
    weights_gib: float | None,
    table_weights_gb: float | None,
    tp: int,
    pp: int,
    eng: str,
    ver: tuple[int, int, int] | None,
    seqs: int,
    mnbt: int,
    quantization: str | None,
    notes: list[str],
    p2p: bool = True,
) -> NonKv:
    """Per-GPU weights, forward peak, sampler peak, non-torch and CUDA graphs: measured where given."""
    w: float | None
    if measured.weights_gib is not None:
        w = float(measured.weights_gib)
    elif weights_gib is not None:
        w = float(weights_gib)
    else:
        w = table_weights_gb * 1e9 / GIB / (tp * pp) if table_weights_gb else None
        if w is None:
            notes.append("weights unknown: give --weights-gib for a better estimate")
    if measured.activation_gib is not None:  # a measured peak already holds the sampler
        fwd: float | None = float(measured.activation_gib)
        sampler = 0.0
    else:
        loop = awq_expert_loop_gib(m, mnbt, quantization, eng, ver)
        fwd = loop if loop is not None else forward_activation_gib(m, mnbt, tp)
        if loop is not None:
            notes.append(
                f"vLLM 0.2.x runs every profile token through each of this GPU's AWQ experts at full width "
                f"with split-k buffers: {loop:.1f} GiB of profile peak (vllm#2382)"
            )
        sampler = sampler_peak_gib(seqs, m.vocab)
        if fwd is not None and sampler > fwd and sampler > 1.0:
            notes.append(
                f"the profile run's sampler peak ({seqs:,} sequences x {m.vocab or 0:,} vocabulary, sorted for "
                f"top-k/top-p: {sampler:.2f} GiB) exceeds its forward pass; --max-num-seqs lowers it"
            )
    non_torch = (
        measured.non_torch_gib
        if measured.non_torch_gib is not None
        else NON_TORCH_ONE_GPU_GIB
        if tp * pp == 1
        else NON_TORCH_PARALLEL_GIB
        if p2p
        else NON_TORCH_PARALLEL_NO_P2P_GIB
    )
    graphs = (
        CUDA_GRAPHS_GIB
        if eng == "v1" and (ver is None or ver >= (0, 21, 0)) and measured.activation_gib is None
        else 0.0
    )
    if tp * pp > 1:
        notes.append(
            "vLLM sizes every GPU's KV cache by the GPU with the least free memory: another process on "
            "any one GPU shrinks all of them"
        )
        if eng == "v0" and sampler > (fwd or 0):
            notes.append(
                "V0 gathers the logits to rank 0 only, so only rank 0 profiles the sampler: the other ranks "
                f"print about {sampler - (fwd or 0):.2f} GiB more KV memory than the cache they get (vllm#13061)"
            )
    return NonKv(w, fwd, sampler, float(non_torch), graphs)


def least_free_rule(
    free_gib: Sequence[float] | None,
    *,
    total_gib: float,
    utilization: float,
    ranks: int,
    eng: str,
    ver: tuple[int, int, int] | None,
    notes: list[str],
) -> tuple[float, bool]:
    """(GiB to take off every rank's KV budget, whether vLLM refuses to start) given each GPU's
    free memory before vLLM starts (one figure for all, or one per rank)."""
    if not free_gib:
        return 0.0, False
    free = list(free_gib) * ranks if len(free_gib) == 1 else list(free_gib)
    if len(free) != ranks:
        from observe.errors import ConfigError

        raise ConfigError(f"--gpu-free-gib: give one figure or one per GPU ({ranks}), not {len(free)}")
    for f in free:
        if not 0 <= f <= total_gib:
            from observe.errors import ConfigError

            raise ConfigError(f"--gpu-free-gib {f:g} is outside 0..{total_gib:g} GiB (the GPU's total)")
    least = min(free)
    worst = free.index(least)
    held = total_gib - least
    requested = total_gib * utilization
    where = f"GPU {worst}" if ranks > 1 else "the GPU"
    if held <= 0.005:
        return 0.0, False
    if eng == "v1":
        if least < requested:
            notes.append(
                f"{where} has {least:.2f} GiB free, less than {total_gib:g} x --gpu-memory-utilization "
                f"{utilization:g} = {requested:.2f} GiB: vLLM V1 refuses to start ('Free memory on device ... "
                f"is less than desired GPU memory utilization'); free it or lower the utilization to "
                f"{int(least / total_gib * 100) / 100:g}"
            )
            return 0.0, True
        return 0.0, False
    if ver is None or ver < (0, 6, 4):
        notes.append(
            f"{held:.2f} GiB held by another process on {where} comes off its KV cache, and vLLM sizes every "
            "GPU's cache by the smallest"
        )
        return held, False
    notes.append(
        f"{held:.2f} GiB held by another process on {where}: this vLLM sizes the cache as if the GPU were free, "
        "so allocating it can run out of memory there"
    )
    return 0.0, False
