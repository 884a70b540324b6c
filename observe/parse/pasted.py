"""A traceback pasted indented as a block and hard-wrapped → the lines Python printed. Pure.

A paste set as a block (every line indented four spaces, markdown's code block without its fence) whose
editor wrapped it at a fixed width splits a frame's path: ``  File "…/vllm/engine/multi`` then
``processing/engine.py", line 388, in run_mp_engine``. When a source's first line is a traceback's opening
(``Process SpawnProcess-1:``, ``Traceback (most recent call last):``) behind such an indentation, `rejoin`
takes that indentation off each of its lines and glues a frame line whose path quote is left open to the
line that closes it; any other input passes through unchanged.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from observe.model import LogLine

__all__ = ["looks_indented", "rejoin"]

_HEAD = re.compile(r"^(?P<ind>[ \t]+)(?:Process [\w-]+:|Traceback \(most recent call last\):)\s*$", re.ASCII)
_OPEN = re.compile(r'^[ \t]*File "[^"]*$', re.ASCII)  # a frame line cut inside its path
_REST = re.compile(r'^[^\s"][^"]*", line \d+, in [\w<>]+', re.ASCII)  # the rest of that path, and the frame


def looks_indented(head: bytes) -> bool:
    """Whether the first line of a file opens a traceback behind an indentation."""
    return _HEAD.match(head.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")) is not None


def rejoin(lines: Iterable[LogLine]) -> Iterator[LogLine]:
    indent: dict[str, str] = {}  # source → the indentation its first line opened a traceback behind ("" none)
    held: LogLine | None = None
    for line in lines:
        ind = indent.get(line.source)
        if ind is None:
            m = _HEAD.match(line.text)
            ind = indent[line.source] = m.group("ind") if m else ""
        if not ind:
            yield line
            continue
        text = line.text[len(ind) :] if line.text.startswith(ind) else line.text
        if held is not None:
            first, held = held, None
            if first.source == line.source and _REST.match(text):
                yield LogLine(first.source, first.lineno, first.text + text, first.arrival)
                continue
            yield first
        cut = LogLine(line.source, line.lineno, text, line.arrival)
        if _OPEN.match(text):
            held = cut
        else:
            yield cut
    if held is not None:
        yield held
