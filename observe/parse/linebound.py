"""The long-line bound: a log line longer than `max_bytes` is cut there, the rest up to its newline
is skipped, and the cut is counted, so that one runaway line (a 200 MB prompt echoed into the log)
costs neither memory nor time. Pure: bytes in, bytes out (whoever reads the file feeds it).

Pieces are looked at no more than `max_bytes` at a time, so that every line that both starts and
ends inside one piece is shorter than the bound: only a piece's first and last lines are checked,
two `find`s per piece whatever the number of lines in it.
"""

from __future__ import annotations

from collections.abc import Iterator


class LineBound:
    """Feed byte pieces of one stream in order; get back the same bytes with every line cut to at
    most `max_bytes` (its newline kept). `cut` counts the lines that were cut."""

    def __init__(self, max_bytes: int) -> None:
        if max_bytes < 1:
            raise ValueError("max_bytes must be >= 1")
        self.max_bytes = max_bytes
        self.cut = 0
        self._run = 0  # bytes of the current line passed on so far
        self._dropping = False  # inside the skipped rest of a cut line

    def feed(self, data: bytes) -> Iterator[bytes]:
        """The bytes of `data` to keep, in order (possibly none)."""
        step = self.max_bytes
        for lo in range(0, len(data), step):
            yield from self._piece(data[lo : lo + step] if len(data) > step else data)

    def _piece(self, data: bytes) -> Iterator[bytes]:  # len(data) <= max_bytes
        if self._dropping:
            nl = data.find(b"\n")
            if nl < 0:
                return
            self._dropping, self._run = False, 0
            data = data[nl:]  # its newline ends the kept part of the cut line
        first = data.find(b"\n")
        room = self.max_bytes - self._run
        if first < 0:
            if len(data) <= room:
                self._run += len(data)
                yield data
            else:
                yield data[:room]
                self.cut += 1
                self._dropping, self._run = True, 0
            return
        if first > room:  # the line that was going on ends here, too long
            yield data[:room]
            self.cut += 1
            data = data[first:]
        self._run = len(data) - data.rfind(b"\n") - 1
        yield data


def lines(pieces: Iterator[bytes]) -> Iterator[bytes]:
    """Whole lines (without their newline) from pieces cut anywhere; a last line without a newline
    is a line too."""
    carry = b""
    for p in pieces:
        if carry:
            p = carry + p
        parts = p.split(b"\n")
        carry = parts.pop()
        yield from parts
    if carry:
        yield carry
