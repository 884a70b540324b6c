"""A traceback pasted indented as a block and hard-wrapped → the lines Python printed. Pure.

A paste set as a block (every line indented four spaces, markdown's code block without its fence) whose
editor wrapped it at a fixed width splits a frame's path: ``  File "…/vllm/engine/multi`` then
``processing/engine.py", line 388, in run_mp_engine``. When a source's first line is a traceback's opening
(``Process SpawnProcess-1:``, ``Traceback (most recent call last):``) behind such an indentation, `rejoin`
takes that indentation off each of its lines and glues a frame line whose path quote is left open to the
line that closes it. A traceback behind vLLM's process prefix (``(APIServer pid=1)   File "…/vll`` then
``m/entrypoints/openai/api_server.py", line 678, in run_server``) wrapped the same way is glued too: the
continuation lacks the prefix vLLM prints on every line, so it is the editor's wrap, not a line of its own
(`looks_wrapped` tells such a file by its head). Any other input passes through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from observe.model import LogLine

__all__ = ["looks_indented", "looks_wrapped", "rejoin"]

_HEAD = re.compile(r"^(?P<ind>[ \t]+)(?:Process [\w-]+:|Traceback \(most recent call last\):)\s*$", re.ASCII)
_OPEN = re.compile(r'^[ \t]*File "[^"]*$', re.ASCII)  # a frame line cut inside its path
_REST = re.compile(r'^[^\s"(][^"]*", line \d+, in [\w<>]+', re.ASCII)  # the rest of that path, and the frame
# the same cut frame line behind vLLM's process prefix ('(APIServer pid=45883)   File "/home/…/vll')
_PREFIXED_OPEN = re.compile(r'^\([\w-]+ pid=\d+\)[ \t]+File "[^"]*$', re.ASCII)


def looks_indented(head: bytes) -> bool:
    """Whether the first line of a file opens a traceback behind an indentation."""
    return _HEAD.match(head.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")) is not None


def looks_wrapped(head: bytes) -> bool:
    """Whether a file's head holds a prefixed frame line cut inside its path and, next, the path's rest."""
    rows = head.decode("utf-8", "replace").split("\n")[:-1]  # the last may be cut by the sniff
    return any(_PREFIXED_OPEN.match(a.rstrip("\r")) and _REST.match(b) for a, b in zip(rows, rows[1:]))


def rejoin(lines: Iterable[LogLine]) -> Iterator[LogLine]:
    indent: dict[str, str] = {}  # source → the indentation its first line opened a traceback behind ("" none)
    held: LogLine | None = None
    for line in lines:
        ind = indent.get(line.source)
        if ind is None:
            m = _HEAD.match(line.text)
            ind = indent[line.source] = m.group("ind") if m else ""
        if not ind:
            if held is None and not _PREFIXED_OPEN.match(line.text):
                yield line
                continue
        text = line.text[len(ind) :] if ind and line.text.startswith(ind) else line.text
        if held is not None:
            first, held = held, None
            if first.source == line.source and _REST.match(text):
                yield LogLine(first.source, first.lineno, first.text + text, first.arrival)
                continue
            yield first
        cut = LogLine(line.source, line.lineno, text, line.arrival)
        if (_OPEN if ind else _PREFIXED_OPEN).match(text):
            held = cut
        else:
            yield cut
    if held is not None:
        yield held
