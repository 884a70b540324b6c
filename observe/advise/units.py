"""Byte sizes and rounding the way vLLM's flags take them. Pure."""

from __future__ import annotations

import re
from typing import Any

_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_bytes(v: Any) -> int | None:
    """'2M', '1.5GiB', 1048576 → bytes; None when the text is no byte size."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(v), re.I)
    if not m:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def fmt_bytes(n: int) -> str:
    """Bytes as vLLM's --kv-cache-memory-bytes takes them, rounded UP to a whole MiB / GiB."""
    if n >= 1 << 30 and n % (1 << 30) == 0:
        return f"{n >> 30}G"
    if n >= 1 << 20:
        return f"{-(-n // (1 << 20))}M"
    return str(n)


def round_down(x: float, step: int) -> int:
    """x rounded down to a multiple of step (at least step)."""
    return max(step, int(x // step * step))


def pow2_at_least(x: float, floor: int = 2048) -> int:
    n = floor
    while n < x:
        n *= 2
    return n


def ceil_to(x: float, step: float) -> float:
    """x rounded up to a multiple of step (0.01 for a utilization)."""
    return round(-(-round(x / step, 9) // 1) * step, 6)
