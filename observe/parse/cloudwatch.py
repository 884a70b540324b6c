"""A CloudWatch Logs CSV export → the lines vLLM wrote. Pure.

A log group exported from CloudWatch (SageMaker's endpoint logs as they are downloaded) is one CSV row per
record: ``<epoch milliseconds>,<message>``, the message quoted when it holds a quote or a comma (a quote in
it doubled, ``""``), and the container's control bytes in rsyslog's octal escape: ``#033`` for ESC (the colour
codes around vLLM's process prefix), ``#015`` for the carriage return ending each line. `unwrap` gives back
the message with its escapes undone, behind the export's time as an RFC 3339 stamp (the parser's outer time,
the way ``docker logs -t`` gives it); any other line passes through unchanged, so it is safe on any input.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from datetime import UTC, datetime

from observe.model import LogLine

__all__ = ["looks_like_cloudwatch", "unwrap"]

# epoch milliseconds from 2001 to 2033, a comma, the message as a CSV field (quoted or bare)
_ROW = re.compile(r'^(?P<ms>1\d{12}),(?:"(?P<q>(?:[^"]|"")*)"|(?P<bare>[^"].*|))$', re.ASCII)
# rsyslog's escape of a control byte: '#' and three octal digits (#000 - #037)
_CONTROL = re.compile(r"#0[0-3][0-7]", re.ASCII)


def _control(m: re.Match[str]) -> str:
    return chr(int(m.group()[1:], 8))


def message(text: str) -> str | None:
    """The line vLLM wrote, behind the export's time; None when the text is not an export's row."""
    if text[:1] != "1" or (m := _ROW.match(text)) is None:
        return None
    q = m.group("q")
    msg = q.replace('""', '"') if q is not None else m.group("bare")
    if "#0" in msg:
        msg = _CONTROL.sub(_control, msg).rstrip("\r")
    ts = datetime.fromtimestamp(int(m.group("ms")) / 1000, tz=UTC)
    return f"{ts.isoformat(timespec='milliseconds').replace('+00:00', 'Z')} {msg}"


def looks_like_cloudwatch(head: bytes) -> bool:
    """Whether the first line of a file is a CloudWatch export's row."""
    return message(head.split(b"\n", 1)[0].decode("utf-8", "replace").rstrip("\r")) is not None


def unwrap(lines: Iterable[LogLine]) -> Iterator[LogLine]:
    for line in lines:
        msg = message(line.text)
        yield line if msg is None else LogLine(line.source, line.lineno, msg, line.arrival)
