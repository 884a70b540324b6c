"""The failures a traceback re-logs line by line, or a parent process re-raises, reported once: the
window of recent failure keys the Parser asks before it emits an EngineError."""

from __future__ import annotations

from collections import deque
from typing import Any

from observe.failures.kinds import REPORTED_ONCE
from observe.parse.failtypes import Failure

# kinds reported once per traceback (failurekinds.REPORTED_ONCE): the same failure re-logged line by
# line, or re-raised by the parent process, within this many physical lines counts once.
DEDUP_WINDOW = 400


def _same_failure(a: tuple[Any, ...], b: tuple[Any, ...]) -> bool:
    """Two error keys name the same failure: same kind, and every detail known on both sides equal
    (a detail-less vLLM OOM hint matches the PyTorch OOM it wraps)."""
    if a[0] != b[0] or len(a) != len(b):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a[1:], b[1:]))


class DedupWindow:
    """The failures reported in the last DEDUP_WINDOW physical lines."""

    def __init__(self) -> None:
        self._recent: deque[tuple[int, tuple[Any, ...]]] = deque()  # (physical line, key)

    def clear(self) -> None:
        self._recent.clear()

    def is_new(self, f: Failure, line: int) -> bool:
        """Whether f should be reported at this physical line (and, if so, remember it)."""
        if f.kind not in REPORTED_ONCE or f.key is None:
            return True
        recent = self._recent
        while recent and line - recent[0][0] > DEDUP_WINDOW:
            recent.popleft()
        for _, k in recent:
            if _same_failure(k, f.key):
                return False
        recent.append((line, f.key))
        return True
