"""What the advisor asks of vLLM's flags for one engine: does its release have the flag, does it
take the value, what is the default. A thin reading of observe.vllmflags (the data, with its vLLM
sources) for an EngineConfig; None = not known, never guessed.
"""

from __future__ import annotations

from typing import Any

from observe import vllmflags
from observe.model import EngineConfig
from observe.versions import parse_version

V0_ONLY = {"--swap-space", "--preemption-mode"}
_NEW = (0, 10, 0)  # a flag this new is suggested only when the release is known


def supported(flag: str, cfg: EngineConfig) -> bool:
    """Whether the engine's vLLM has `flag` (a flag from 0.10 on needs a known release)."""
    if cfg.engine == "v1" and flag in V0_ONLY:
        return False
    has = vllmflags.has_flag(flag, cfg.version)
    if has is not None:
        return has
    first = parse_version(vllmflags.introduced(flag))
    return not (first and first >= _NEW)


def valid_value(flag: str, value: Any, cfg: EngineConfig) -> bool:
    """Whether the engine's vLLM accepts `value` for `flag` (unknown: the managed instance checks)."""
    ok = vllmflags.valid_value(flag, value, cfg.version)
    return ok is not False


def default(flag: str, cfg: EngineConfig) -> Any:
    """vLLM's default for `flag` on this engine's release and device; None where not known."""
    device = "CPU" if (cfg.device or "").upper() == "CPU" else "GPU"
    engine = {"v0": "V0", "v1": "V1"}.get(cfg.engine or "")
    return vllmflags.default(
        flag,
        cfg.version,
        gpu_memory_gib=cfg.total_gpu_memory_gib,
        device=device,
        engine=engine,
        world_size=int(cfg.tensor_parallel_size or 1) * int(cfg.pipeline_parallel_size or 1),
    )
