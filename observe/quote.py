"""vLLM's words quoted in a report: whole when they fit, else cut at a sentence (or, failing one, at a
word) and marked as cut, never in the middle of a word. Pure: no I/O."""

from __future__ import annotations

import re

__all__ = ["CUT_MARK", "quote"]

CUT_MARK = " […cut: {n:,} more characters]"
_SENTENCE_END = re.compile(r"[.!?;:](?=\s)|\n")


def quote(text: str, limit: int = 1000) -> str:
    """``text`` unchanged when it is at most ``limit`` characters; otherwise its longest head that
    ends a sentence (at least half of ``limit``), else at a word, followed by how much was cut."""
    text = text or ""
    if len(text) <= limit:
        return text
    head = text[:limit]
    ends = [m.end() for m in _SENTENCE_END.finditer(head)]
    cut = ends[-1] if ends and ends[-1] >= limit // 2 else None
    if cut is None:
        space = head.rstrip().rfind(" ")
        cut = space if space > 0 else limit
    kept = text[:cut].rstrip()
    return kept + CUT_MARK.format(n=len(text) - len(kept))
