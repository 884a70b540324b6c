"""A launcher's logfmt records → the lines vLLM wrote. Pure.

A program that runs vLLM as a child and logs its output through a Go structured logger (logrus, slog's text
handler: Docker Model Runner's vLLM backend) writes each line vLLM printed as one logfmt record:
``time="2026-01-29T14:55:54Z" level=info msg="  File \\"/opt/vllm-env/bin/vllm\\", line 10, in <module>"
component=vllm``. The line is the ``msg`` value, quoted the Go way (``\\"``, ``\\\\``, ``\\n``, ``\\t``) when it
holds a space or a quote, bare otherwise. `unwrap` gives that line back (each of its lines, when the value
holds a newline), behind the record's ``time`` as the parser's outer time when it is an RFC 3339 stamp; the
wrapper's ``level`` is the launcher's, not vLLM's, and is left out. Any other line passes through unchanged
(a record cut before its ``msg``, a paste's first line), so it is safe on any input.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator

from observe.model import LogLine

__all__ = ["looks_like_logfmt", "message", "unwrap"]

_VALUE = r'(?:"(?:[^"\\]|\\.)*"|[^\s"]*)'
# a record: key=value pairs from the line's start, one of them msg (or message)
_RECORD = re.compile(rf"^(?:\w+={_VALUE}\s+)*?(?:msg|message)=(?P<msg>{_VALUE})(?:\s|$)", re.ASCII)
_TIME = re.compile(
    r'^(?:\w+=\S*\s+)*?(?:time|ts)="?(?P<ts>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[^"\s]*)"?(?:\s|$)', re.ASCII
)
_HEAD_LINES = 5


def _unquote(v: str) -> str:
    if not v.startswith('"'):
        return v
    try:
        out = json.loads(v)  # Go's strconv.Quote escapes are JSON's, but for \x.. and \a, \v
    except ValueError:
        return v[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return out if isinstance(out, str) else v


def message(text: str) -> list[str] | None:
    """The lines the record's msg holds, behind its time; None when the text is not a logfmt record."""
    if "msg=" not in text and "message=" not in text or (m := _RECORD.match(text)) is None:
        return None
    lines = _unquote(m.group("msg")).split("\n")
    t = _TIME.match(text)
    return [f"{t.group('ts')} {ln}" for ln in lines] if t is not None else lines


def looks_like_logfmt(head: bytes) -> bool:
    """Whether one of a file's first lines is a logfmt record."""
    rows = head.decode("utf-8", "replace").split("\n")[:_HEAD_LINES]
    return any(message(r.rstrip("\r")) is not None for r in rows)


def unwrap(lines: Iterable[LogLine]) -> Iterator[LogLine]:
    for line in lines:
        msgs = message(line.text)
        if msgs is None:
            yield line
            continue
        for msg in msgs:
            yield LogLine(line.source, line.lineno, msg, line.arrival)
