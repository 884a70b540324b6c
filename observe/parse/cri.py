"""Container-runtime (CRI) log records → the lines vLLM wrote. Pure.

Kubernetes keeps a container's output under ``/var/log/pods/…`` in the CRI format
``<RFC 3339 time> <stdout|stderr> <P|F> <text>``: a line longer than the runtime's buffer
(16 KiB in containerd and CRI-O) is split into partial ``P`` records ended by one ``F`` record.
`rejoin` strips the prefix and glues the partials back, per stream, keeping the line number of
the first record. Lines that are not CRI records (``kubectl logs`` output, plain files) pass
through unchanged, so it is safe on any input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from observe.model import LogLine

__all__ = ["Rejoiner", "looks_like_cri", "rejoin"]

_CRI = re.compile(
    r"^(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)) (?P<stream>stdout|stderr) "
    r"(?P<tag>[PF])(?::\S*)?(?: (?P<text>.*))?$"
)


def looks_like_cri(head: bytes) -> bool:
    """Whether the first line of a file is a CRI record (``<time> stdout|stderr F|P <text>``)."""
    first = head.split(b"\n", 1)[0].decode("utf-8", "replace")
    return _CRI.match(first) is not None


def rejoin(lines: Iterable[LogLine]) -> Iterator[LogLine]:
    pending: dict[str, tuple[LogLine, list[str]]] = {}
    for line in lines:
        m = _CRI.match(line.text)
        if m is None:
            yield line
            continue
        stream, text = m.group("stream"), m.group("text") or ""
        if m.group("tag") == "P":
            first, parts = pending.setdefault(stream, (line, []))
            parts.append(text)
            continue
        if stream in pending:
            first, parts = pending.pop(stream)
            yield LogLine(first.source, first.lineno, "".join(parts) + text, first.arrival)
        else:
            yield LogLine(line.source, line.lineno, text, line.arrival)
    for first, parts in pending.values():  # a partial record cut off by the end of the input
        yield LogLine(first.source, first.lineno, "".join(parts), first.arrival)


class Rejoiner:
    """`rejoin` for lines that arrive in batches (a follower's polls): the partial records of a line
    split across two batches are held until its ``F`` record comes, per file and stream. A
    follower's counted run (an item with ``raw`` bytes and ``lines()``) of CRI records is split
    into its lines and rejoined; any other item passes through unchanged."""

    def __init__(self) -> None:
        self._pending: dict[tuple[str, str], tuple[LogLine, list[str]]] = {}

    def feed(self, items: Iterable[object]) -> list:
        out: list = []
        for line in _expanded(items):
            m = _CRI.match(line.text) if isinstance(line, LogLine) else None
            if m is None:
                out.append(line)
                continue
            assert isinstance(line, LogLine)
            key, text = (line.source, m.group("stream")), m.group("text") or ""
            if m.group("tag") == "P":
                self._pending.setdefault(key, (line, []))[1].append(text)
                continue
            first, parts = self._pending.pop(key, (line, []))
            out.append(LogLine(first.source, first.lineno, "".join(parts) + text, first.arrival))
        return out

    def held(self) -> int:
        """Lines begun by partial records whose final record has not come yet."""
        return len(self._pending)


def _expanded(items: Iterable[object]) -> Iterator[object]:
    for it in items:
        raw = getattr(it, "raw", None)
        if isinstance(raw, bytes) and looks_like_cri(raw):
            yield from it.lines()  # type: ignore[attr-defined]
        else:
            yield it
