"""What observe knows of vLLM's flags by version: which exist, and their defaults.

The one place the advisor asks; None = not known (never guessed).
"""

from __future__ import annotations

from typing import Any

from observe.model import EngineConfig
from observe.versions import parse_version

# flag → (first version that has it, last version that has it); None = open
FLAG_VERSIONS: dict[str, tuple[str | None, str | None]] = {
    "--kv-cache-dtype": ("0.3.0", None),
    "--kv-cache-memory-bytes": ("0.11.0", None),
    "--swap-space": (None, "0.10.99"),  # V0 only
    "--enable-chunked-prefill": (None, None),
    "--num-gpu-blocks-override": ("0.2.0", None),
}
V0_ONLY = {"--swap-space", "--preemption-mode"}


def supported(flag: str, cfg: EngineConfig) -> bool:
    """Whether the engine's vLLM has `flag` (a flag new in 0.11 needs a known version)."""
    if cfg.engine == "v1" and flag in V0_ONLY:
        return False
    ver = parse_version(cfg.version)
    lo, hi = FLAG_VERSIONS.get(flag, (None, None))
    if ver is None:
        return not (lo and parse_version(lo) >= (0, 11, 0))
    if lo and ver < parse_version(lo):
        return False
    if hi and ver > parse_version(hi):
        return False
    return True


def valid_value(flag: str, value: Any, cfg: EngineConfig) -> bool:
    """Whether the engine's vLLM accepts `value` for `flag` (fp8 KV cache: not before 0.4.0)."""
    if flag == "--kv-cache-dtype" and str(value) == "fp8":
        ver = parse_version(cfg.version)
        return ver is None or ver >= (0, 4, 0)
    return True


def default(flag: str, cfg: EngineConfig) -> Any:
    """vLLM's default for `flag` on this engine; None where observe does not know it."""
    return None
