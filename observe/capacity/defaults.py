"""vLLM's defaults the capacity model sizes with, asked of the vocabulary (observe.flags.vllmflags): the
engine a release runs, --max-num-seqs and --max-num-batched-tokens by release and GPU,
--gpu-memory-utilization and --block-size. The facts live in observe/data/vllm_flags.json with the
vLLM source they were read from; this module only picks the release to ask for: a release the data
did not read is sized as the nearest read one (`vllmflags.nearest_read`), the newest when none is
given. Pure: no I/O.
"""

from __future__ import annotations

from observe.errors import ConfigError
from observe.flags import vllmflags
from observe.versions import parse_version

# vllmflags.default_engine's answer → the capacity model's engine names
_ENGINES = {"V0": "v0", "V1": "v1"}
# the newest release with the V0 engine (vllm_flags.json: engines, V0 gone from 0.11.0)
_V0_LAST = (0, 10, 2)


def release(vllm_version: str | None) -> str:
    """The read release whose defaults stand for `vllm_version` (None: the newest read)."""
    return vllmflags.nearest_read(vllm_version)


def engine_for(vllm_version: str | None, engine: str | None) -> str:
    """ "v0" or "v1": `engine` when given (else ConfigError), otherwise the engine the release runs
    when VLLM_USE_V1 is not set."""
    if engine:
        e = engine.strip().lower()
        if e not in _ENGINES.values():
            raise ConfigError(f"engine must be v0 or v1, not {engine!r}")
        return e
    return _ENGINES[vllmflags.default_engine(release(vllm_version)) or "V1"]


def gpu_memory_utilization(vllm_version: str | None, *, extensible_kv_cache: bool = True) -> float:
    """vLLM's --gpu-memory-utilization on a GPU when it is not given: 0.9; 0.92 from 0.20; from 0.34
    unset means 1.0 with the extensible KV cache and 0.92 otherwise (vllm/config/cache.py @ v0.34.0
    lines 216 and 495-501: `gpu_memory_utilization: float | None = Field(default=None)`,
    `resolved_gpu_memory_utilization`; DEFAULT_GPU_MEMORY_UTILIZATION = 0.92 at line 186). The
    extensible KV cache is on by default on CUDA and ROCm and sizes the cache from memory measured
    after warmup (vllm/config/vllm.py @ v0.34.0 lines 3180-3254, `_resolve_extensible_kv_cache`: off
    with --kv-cache-memory-bytes, --num-gpu-blocks-override, elastic EP or some KV connectors; pass
    extensible_kv_cache=False for those)."""
    got = vllmflags.gpu_memory_utilization(release(vllm_version), extensible_kv_cache=extensible_kv_cache)
    assert got is not None, "vllm_flags.json states the default for every read release"
    return got


def lowest_v1_max_num_seqs(total_gib: float | None) -> int:
    """The lowest --max-num-seqs V1 takes when it is not given, on a GPU of total_gib (None: any GPU), in any
    read release, for ``vllm serve`` or the offline LLM (256): a value below it is below what ran, whichever
    release it was, unless it was set lower still."""
    got = [
        b["max_num_seqs"]
        for v in vllmflags.versions_read()
        for usage in ("openai", "llm")
        if (
            b := vllmflags.batch_defaults(
                ".".join(map(str, v)), gpu="unnamed GPU", gpu_memory_gib=total_gib or 1.0, usage=usage
            )
        )
    ]
    assert got, "vllm_flags.json has V1 batch defaults"
    return min(got)


def lowest_gpu_memory_utilization() -> float:
    """The lowest --gpu-memory-utilization any read release takes when it is not given (0.9): a value below
    it is below what ran, whichever release it was, unless it was set lower still."""
    return min(gpu_memory_utilization(".".join(map(str, v))) for v in vllmflags.versions_read())


def block_size(vllm_version: str | None, *, engine: str | None = None) -> int:
    """The KV-cache block size vLLM uses on a GPU when --block-size is not given: 16, 64 from 0.34
    (CacheConfig.DEFAULT_BLOCK_SIZE, vllm/config/cache.py @ v0.34.0 line 185). The attention backend
    may raise it (vllm/platforms/interface.py @ v0.34.0 update_block_size_for_backend, lines 760-785:
    the backends' get_preferred_block_size, e.g. FlashAttention's FA4 cases in
    vllm/v1/attention/backends/flash_attn.py line 372; vLLM then logs "Setting kv cache block size to
    N for X backend(s)."); a log or /metrics that says the block size wins over this. engine "v0":
    the block of the newest release that still had V0 (0.10.2, vllm_flags.json's engines)."""
    rel = release(vllm_version)
    if engine == "v0" and (parse_version(rel) or (0, 0, 0)) > _V0_LAST:
        rel = ".".join(map(str, _V0_LAST))
    got = vllmflags.block_size(rel)
    assert got is not None, "vllm_flags.json states the GPU block size for every read release"
    return got


def v0_max_num_seqs() -> int:
    """V0's --max-num-seqs default (256 in every release that has V0), as the newest V0 release states it."""
    got = vllmflags.default("--max-num-seqs", ".".join(map(str, _V0_LAST)), engine="V0")
    assert got is not None, "vllm_flags.json states V0's --max-num-seqs default"
    return int(got)


def batch(
    engine: str, vllm_version: str | None, total_gib: float, gpu_name: str, max_model_len: int
) -> tuple[int, int, list[str]]:
    """vLLM's default (max_num_seqs, max_num_batched_tokens) for `vllm serve`, by engine, release and
    GPU (`gpu_name` as torch reports it or the GPU table's name; "" when only the memory is known),
    with notes on what was assumed."""
    rel = release(vllm_version)
    notes: list[str] = []
    if engine == "v0":
        seqs = vllmflags.default("--max-num-seqs", rel, engine="V0")
        mnbt, chunked = vllmflags.v0_batched_tokens(vllm_version, max_model_len)
        if chunked:
            notes.append(f"V0 turns chunked prefill on above 32,768 tokens: profile pass of {mnbt} tokens")
        return int(seqs) if seqs is not None else v0_max_num_seqs(), mnbt, notes
    got = vllmflags.batch_defaults(rel, gpu=gpu_name or None, gpu_memory_gib=total_gib)
    if got is None and (parse_version(rel) or (0, 0, 0)) < (0, 7, 0):  # V1 before V1 existed: its first
        rel = "0.7.0"
        got = vllmflags.batch_defaults(rel, gpu=gpu_name or None, gpu_memory_gib=total_gib)
    if got is None and not gpu_name:  # the release's rule needs the GPU's name (vLLM < 0.8.5)
        got = vllmflags.batch_defaults(rel, gpu="unnamed GPU", gpu_memory_gib=total_gib)
        notes.append(
            f"vLLM {rel} picks its batch defaults by the GPU's name: give --gpu; sized as a GPU that "
            "is no H100 or H200"
        )
    assert got is not None, f"vllm_flags.json has V1 batch defaults for vLLM {rel}"
    return got["max_num_seqs"], got["max_num_batched_tokens"], notes
