"""vLLM version strings → comparable tuples (one parser for the advisor and the capacity model)."""

from __future__ import annotations

import re

_VERSION = re.compile(r"(\d+)\.(\d+)(?:\.(\d+))?")


def parse_version(v: str | None) -> tuple[int, int, int] | None:
    """'0.6.4.post1' / 'v0.11.0' / '~0.10.2 (V1)' / '0.32.0+cpu' → (major, minor, patch); None when unreadable."""
    if not v:
        return None
    m = _VERSION.search(str(v))
    if not m:
        return None
    return int(m.group(1)), int(m.group(2)), int(m.group(3) or 0)
