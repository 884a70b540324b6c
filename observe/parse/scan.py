"""The byte-level scan: a log read in large blocks, lines that only need counting counted, not parsed.

On a busy server nearly every line is a uvicorn access line, and what the parser makes of one is a
single :class:`~observe.model.AccessLog` that its consumer only counts. The scan finds, per block and
at byte level, the lines of exactly that kind and credits them to the :class:`Parser` and the
consumer in bulk (:meth:`Parser.credit_access`); every other line is decoded and fed as before, in
order, with its own line number. The answers are the same as feeding every line; only the time
differs (``ENABLED = False``, or ``OBSERVE_SCAN=0`` in the environment, feeds every line).

A line is countable when its shape (digits folded to two classes, so that lines differing only in
ports and numbers share a shape) fully matches ``_COUNTABLE``: a bare or ``(APIServer pid=N)``
prefixed uvicorn access line with status below 500, printable ASCII only, no ``[`` (no colour codes),
no carriage return but a final one, and a status phrase of letters only (so that no logger prefix
can hide in it). Anything else, and every line while the parser holds back an incomplete stats
record, takes the general path.

No I/O here beyond reading the file it is handed; ``read`` raises what the file's reader raises.
"""

from __future__ import annotations

import gzip
import os
import re
from collections.abc import Callable, Iterator
from pathlib import Path

from observe.model import LogEvent, LogLine
from observe.parse.parser import Parser

#: the scan is used (False: every line is decoded and fed, the general path)
ENABLED = os.environ.get("OBSERVE_SCAN", "1") != "0"
#: bytes per block classified at once
BLOCK = 1 << 20
#: a .gz is read in pieces of the size line-by-line reading asks the decompressor for, so that a
#: corrupt stream fails after the same data, hence the same line
GZ_PIECE = 8192

_FOLD = bytes.maketrans(b"0123456789", b"0000055555")  # 0-4 → 0, 5-9 → 5: the status class survives
_PRINT = rb"[\x21-\x5a\x5c-\x7e]"  # printable ASCII but "["
_COUNTABLE = re.compile(
    rb"(?P<proc>\(APIServer pid=\d+\) )?INFO:     "
    + _PRINT
    + rb'+ - "[A-Z]+ '
    + _PRINT
    + rb'+ HTTP/[\d.]+" 0\d\d(?: [A-Za-z\' -]*)?\r?'
)
_PROC = b"(APIServer pid="
_CACHE_MAX = 4096

Add = Callable[[LogEvent], None]


class Classifier:
    """Which lines of a block only need counting, by shape; remembers the shapes it has judged."""

    def __init__(self, max_len: int | None = None) -> None:
        self.max_len = max_len  # a longer line is never countable (a reader that cuts long lines)
        self._known: dict[bytes, bool] = {}

    def classify(self, data: bytes) -> tuple[list[bytes], set[bytes]]:
        """data: whole lines, ending with a newline. Returns each line's shape (same length as the
        line) and the set of shapes that are not countable."""
        shapes = data.translate(_FOLD).split(b"\n")
        shapes.pop()
        known = self._known
        bad = set()
        for s in set(shapes):
            ok = known.get(s)
            if ok is None:
                ok = _COUNTABLE.fullmatch(s) is not None
                if len(known) >= _CACHE_MAX:
                    known.clear()
                known[s] = ok
            if not ok or (self.max_len is not None and len(s) > self.max_len):
                bad.add(s)
        return shapes, bad

    @staticmethod
    def has_process(data: bytes, start: int = 0, end: int | None = None) -> bool:
        """Whether countable lines in data[start:end] carry the "(APIServer pid=N)" prefix."""
        return data.find(_PROC, start, len(data) if end is None else end) >= 0


CountAccess = Callable[[int], None]


class Scanner:
    """One stream's bytes into a Parser and a consumer (add: each event; count_access: n access lines)."""

    def __init__(self, source: str, parser: Parser, add: Add, count_access: CountAccess) -> None:
        self.source = source
        self.parser = parser
        self.add = add
        self.count_access = count_access
        self.lines = 0  # physical lines handed over so far (fed or credited)
        self._carry: list[bytes] = []  # the start of a line whose newline has not come yet
        self._classifier = Classifier()

    # ------------------------------------------------------------------ bytes in
    def push(self, data: bytes) -> None:
        """More bytes of the stream (any length, cut anywhere)."""
        cut = data.rfind(b"\n") + 1
        if cut == 0:
            if data:
                self._carry.append(data)
            return
        if self._carry:
            self._carry.append(data[:cut])
            whole = b"".join(self._carry)
            self._carry = []
        else:
            whole = data[:cut] if cut < len(data) else data
        if cut < len(data):
            self._carry.append(data[cut:])
        self.block(whole)

    def close(self) -> None:
        """End of stream: a last line without newline is a line too."""
        if self._carry:
            tail = b"".join(self._carry)
            self._carry = []
            self.feed_line(tail)

    def read(self, path: Path, progress: Callable[[int], None] | None = None) -> None:
        """Scan a whole file (plain, or gzip by content); progress gets the position read, as a byte count
        of the file on disk. Raises what reading raises (OSError, EOFError, zlib.error, ...)."""
        if is_gzip(path):
            with open(path, "rb") as raw, gzip.GzipFile(fileobj=raw) as f:
                for blk in _gz_blocks(f):
                    self.push(blk)
                    if progress is not None:
                        progress(raw.tell())
        else:
            with open(path, "rb", buffering=0) as f:
                while blk := f.read(BLOCK):
                    self.push(blk)
                    if progress is not None:
                        progress(f.tell())
        self.close()

    # ------------------------------------------------------------------ lines
    def feed_line(self, raw: bytes) -> None:
        """One line (without its newline) through the general path."""
        self.lines += 1
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        for ev in self.parser.feed(LogLine(self.source, self.lines, text)):
            self.add(ev)

    def block(self, data: bytes) -> None:
        """Whole lines (data ends with a newline): countable runs credited, the rest fed in order."""
        if not ENABLED:
            start = 0
            for end in _newlines(data):
                self.feed_line(data[start:end])
                start = end + 1
            return
        shapes, bad = self._classifier.classify(data)
        proc = _PROC in data
        n = len(shapes)
        if not bad:
            self._run(data, shapes, 0, n, 0, proc)
            return
        k = pos = 0
        for j in [i for i, s in enumerate(shapes) if s in bad]:
            if j < k:
                continue  # fed already, while a held-back record was resolved
            k, pos = self._run(data, shapes, k, j, pos, proc)
            if k > j:
                continue
            ln = len(shapes[j])
            self.feed_line(data[pos : pos + ln])
            pos += ln + 1
            k = j + 1
        self._run(data, shapes, k, n, pos, proc)

    def _run(self, data: bytes, shapes: list[bytes], k: int, j: int, pos: int, proc: bool) -> tuple[int, int]:
        """Lines k..j-1 (countable, starting at byte pos): credited, or fed while the parser holds a
        record back. Returns the next line index and its byte position."""
        while k < j and self.parser.holding:
            ln = len(shapes[k])
            self.feed_line(data[pos : pos + ln])
            pos += ln + 1
            k += 1
        if k >= j:
            return k, pos
        end = pos + sum(map(len, shapes[k:j])) + (j - k)
        process = "APIServer" if proc and data.find(_PROC, pos, end) >= 0 else None
        self.parser.credit_access(j - k, process)
        self.count_access(j - k)
        self.lines += j - k
        return j, end


def _newlines(data: bytes) -> Iterator[int]:
    i = data.find(b"\n")
    while i >= 0:
        yield i
        i = data.find(b"\n", i + 1)


def is_gzip(path: Path) -> bool:
    """Whether the file is gzip by its magic bytes (a plain-text log named .gz is text); an
    unreadable file is not, so that its reader raises the error."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def _gz_blocks(f: gzip.GzipFile) -> Iterator[bytes]:
    """Blocks of about BLOCK bytes; what was decompressed before an error comes out before the error."""
    pieces: list[bytes] = []
    size = 0
    try:
        while piece := f.read1(GZ_PIECE):
            pieces.append(piece)
            size += len(piece)
            if size >= BLOCK:
                yield b"".join(pieces)
                pieces, size = [], 0
    except BaseException:
        if pieces:
            yield b"".join(pieces)
        raise
    if pieces:
        yield b"".join(pieces)
