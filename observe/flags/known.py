"""What the advisor asks of vLLM's flags for one engine: does its release have the flag, does it
take the value, what is the default. A thin reading of observe.flags.vllmflags (the data, with its vLLM
sources) for an EngineConfig; None = not known, never guessed.
"""

from __future__ import annotations

from typing import Any

from observe.flags import vllmflags
from observe.model import EngineConfig
from observe.versions import parse_version

V0_ONLY = {"--swap-space", "--preemption-mode"}
_NEW = (0, 10, 0)  # a flag this new is suggested only when the release is known


def supported(flag: str, cfg: EngineConfig) -> bool:
    """Whether the engine's vLLM has `flag`. Without a printed version, the releases the line shapes
    allow (cfg.version_range) decide where they all agree: a flag none of them has is never offered,
    not even as an alternative; otherwise a flag from 0.10 on needs a known release. A flag vLLM printed among its
    own parsed arguments (cfg.release_flags) is the release's, whatever its version."""
    if cfg.engine == "v1" and flag in V0_ONLY:
        return False
    if flag in cfg.release_flags:
        return True  # vLLM printed it among its own parsed arguments: this release has it
    has = vllmflags.has_flag(flag, cfg.version)
    if has is not None:
        return has
    since = vllmflags.introduced(flag)
    if cfg.version_range is not None and since is not None:
        from observe import versions

        every = versions.available(cfg.version_range, since, vllmflags.removed_in(flag))
        if every is not None:
            return every
    first = parse_version(since)
    return not (first and first >= _NEW)


def valid_value(flag: str, value: Any, cfg: EngineConfig) -> bool:
    """Whether the engine's vLLM accepts `value` for `flag` (unknown: the managed instance checks)."""
    ok = vllmflags.valid_value(flag, value, cfg.version)
    return ok is not False


def gpu_name(cfg: EngineConfig) -> str | None:
    """The GPU's name where known: EngineConfig.device when it names one (the one place a GPU's
    name is kept; there is no separate fact for it)."""
    d = (cfg.device or "").strip()
    return d if d and d.upper() not in ("GPU", "CPU") else None


def _gpu_gib(cfg: EngineConfig, gpu: str | None) -> float | None:
    """Total device memory: measured, else the GPU table's figure for the named GPU."""
    if cfg.total_gpu_memory_gib or not gpu:
        return cfg.total_gpu_memory_gib
    from observe.capacity import tables
    from observe.errors import ConfigError

    try:
        return tables.gpu_spec(gpu).total_gib
    except ConfigError:  # not in the table (or ambiguous): vLLM's memory tiers stay unknown
        return None


def assumed(flag: str, cfg: EngineConfig, gpu: str | None = None) -> Any:
    """vLLM's default, taken as the value in force of a flag the log does not show; None where the
    default is not known, or where the log's ``non-default args`` line was cut (``flags_damaged``): the
    flag may have been in the part that was lost, so its value is unknown — never the default."""
    if cfg.flags_damaged:
        return None
    return default(flag, cfg, gpu)


def default(flag: str, cfg: EngineConfig, gpu: str | None = None) -> Any:
    """vLLM's default for `flag` on this engine's release and device; None where not known. `gpu`
    (a name, see gpu_name) picks vLLM's batch defaults for that GPU class."""
    device = "CPU" if (cfg.device or "").upper() == "CPU" else "GPU"
    engine = {"v0": "V0", "v1": "V1"}.get(cfg.engine or "")
    gpu = gpu or gpu_name(cfg)
    return vllmflags.default(
        flag,
        cfg.version,
        gpu=gpu,
        gpu_memory_gib=_gpu_gib(cfg, gpu),
        device=device,
        engine=engine,
        world_size=int(cfg.tensor_parallel_size or 1) * int(cfg.pipeline_parallel_size or 1),
        extensible_kv_cache=extensible_kv_cache(cfg),
    )


def extensible_kv_cache(cfg: EngineConfig) -> bool:
    """Whether vLLM (0.34+) runs the extensible KV cache for this engine: yes where its log says it
    extended the cache, else as far as its flags say: on
    by default on CUDA and ROCm, off where --kv-cache-memory-bytes or --num-gpu-blocks-override fixes
    the cache size or the flag turns it off (vllm/config/vllm.py @ v0.34.0, _resolve_extensible_kv_cache)."""
    if cfg.kv_extended_gib is not None:  # the log says it extended the cache
        return True
    f = cfg.flags
    if f.get("--enable-extensible-kv-cache") is False or (cfg.device or "").upper() == "CPU":
        return False
    return not (f.get("--kv-cache-memory-bytes") or f.get("--num-gpu-blocks-override"))
