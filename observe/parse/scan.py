"""The byte-level scan: a log read in large blocks, lines that only need counting counted, not parsed.

On a busy server nearly every line is a uvicorn access line, and what the parser makes of one is a
single :class:`~observe.model.AccessLog` that its consumer only counts; in a log of restarts, many
traceback and warning-context lines yield nothing at all. The scan finds, per block and at byte
level, the lines of exactly those kinds and credits them to the :class:`Parser` and the consumer in
bulk (:meth:`Parser.credit_access`, :meth:`Parser.credit_lines`); every other line is decoded and fed
as before, in order, with its own line number. The answers are the same as feeding every line; only the time
differs (``ENABLED = False``, or ``OBSERVE_SCAN=0`` in the environment, feeds every line).

Each line's shape (digits folded to two classes, so that lines differing only in ports and numbers
share a shape) is judged once (:func:`judge`) into one of these kinds:

* ``COUNT`` / ``COUNT_PROC`` — a bare / ``(APIServer pid=N)`` prefixed uvicorn access line with status below 500,
  printable ASCII only, no ``[`` (no colour codes), no carriage return but a final one, and a status
  phrase of letters only (so that no logger prefix can hide in it): credited as access lines;
* ``INERT`` — a line the parser can only count: printable ASCII, no wrapper, process or logger
  prefix, no level word, no colour code, no JSON, and none of the message rules' literals
  (``triggers.TRIGGERS``), e.g. most traceback and warning-context lines: credited as lines;
* ``FED + g`` (``g`` < ``triggers.ALL``) — a line to feed that is printable ASCII with no JSON
  (no ``{``) and no colour code, and holds the literals of only the groups ``g`` of
  ``triggers.GROUPS``: fed with ``groups=g``, so that the parser does not try the rule tables it
  cannot match (what the line's message may hold is a piece of the line);
* ``FEED`` — anything else: decoded and fed.

Judging is cached twice: the classifier remembers each shape, and :func:`judge` remembers what all
but the access-line test answered for the shape with its digits in one class (those tests are
digit-blind), so that a log of restarts, whose start-up lines come back with new stamps and pids, is
not judged line by line anew.

Every line while the parser holds back an incomplete stats record is fed too. The classifier comes
in two builds that give the same runs: the compiled ``_scanc`` (built by ``pip install``, optional)
and the pure-Python one here (``OBSERVE_SCAN_COMPILED=0`` forces it).

No I/O here beyond reading the file it is handed; ``read`` raises what the file's reader raises.
"""

from __future__ import annotations

import gzip
import io
import os
import re
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

from observe.model import LogEvent, LogLine
from observe.parse import envelope as E
from observe.parse.parser import Parser
from observe.parse.triggers import ALL, GROUPS, TRIGGERS

try:
    from observe.parse import _scanc  # type: ignore[attr-defined]
except ImportError:  # not built (no C compiler at install): the pure-Python classifier
    _scanc = None

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
_CACHE_MAX = 4096
#: the compiled classifier is used (when built)
COMPILED = _scanc is not None and os.environ.get("OBSERVE_SCAN_COMPILED", "1") != "0"

#: line kinds: credited as access lines (bare; with the "(APIServer pid=N)" prefix), credited as
#: lines, decoded and fed
COUNT, COUNT_PROC, INERT, FEED = 0, 3, 1, 2
#: FED + g: a line to feed with groups=g (g below triggers.ALL); a kind from FED up is fed as FEED is
FED = 4
#: the kinds whose lines are credited in runs, not fed
COUNTED = frozenset({COUNT, COUNT_PROC, INERT})
_PLAIN = re.compile(rb"[\x20-\x7e\t]*")
_FOLDED_TRIGGERS = tuple(t.encode().translate(_FOLD) for t in TRIGGERS)
_FOLDED_GROUPS = tuple((bit, tuple(t.encode().translate(_FOLD) for t in lits)) for bit, lits in GROUPS)
_STARTS = ("(", "{", "INFO", "WARN", "ERROR", "DEBUG", "CRITICAL", "[rank")

#: what `_inert` and `_fed` read is digit-blind (every test is; no trigger literal holds a digit), so
#: shapes that differ only in their digits' classes share one answer: a log of restarts prints the
#: same start-up lines with new time stamps and pids, each a new shape but not a new answer
_DIGIT_BLIND = not any(c in b"0123456789" for t in _FOLDED_TRIGGERS for c in t)
_BLIND = bytes.maketrans(b"5", b"0")
_blind: dict[bytes, int] = {}  # shape with its digits as "0" → INERT or FED + g / FEED

#: one run of a block: (kind, start, end, n) — kind COUNT, COUNT_PROC or INERT: n lines, bytes start..end with the
#: last newline; kind FEED or FED + g: one line, bytes start..end without its newline
Run = tuple[int, int, int, int]


def judge(shape: bytes) -> int:
    """The kind of every line of this shape (digits folded by ``_FOLD``)."""
    k = _counted(shape)
    if k is not None:
        return k
    key = shape.translate(_BLIND) if _DIGIT_BLIND else shape
    k = _blind.get(key)
    if k is None:
        k = _not_counted(shape)
        if len(_blind) >= _CACHE_MAX:
            _blind.clear()
        _blind[key] = k
    return k


def _counted(shape: bytes) -> int | None:
    """COUNT or COUNT_PROC for an access line to count (by its status class), else None."""
    m = _COUNTABLE.fullmatch(shape)
    if m is None:
        return None
    return COUNT if m.group("proc") is None else COUNT_PROC


def _not_counted(shape: bytes) -> int:
    """The kind of a line that is not an access line to count: INERT, FED + g or FEED."""
    return INERT if _inert(shape) else _fed(shape)


def _fed(shape: bytes) -> int:
    """FEED, or FED + the literal groups a plain line holds (folded, as the shape is)."""
    if _PLAIN.fullmatch(shape) is None or b"{" in shape:  # \r, ESC, non-ASCII, JSON: every rule
        return FEED
    if _colour(shape):
        return FEED
    groups = 0
    for bit, lits in _FOLDED_GROUPS:
        if any(t in shape for t in lits):
            groups |= bit
    return FEED if groups == ALL else FED + groups


def _colour(shape: bytes) -> bool:
    """Whether the parser may strip a colour code from a line of this shape: the colour-code pattern
    occurs (digit-blind, so the shape answers for every line of it; ``strip_ansi``'s quick tests
    look at digits and are not)."""
    return b"[" in shape and E.ANSI_RE.search(shape.decode("ascii", "replace")) is not None


def _inert(shape: bytes) -> bool:
    """Whether the parser, holding nothing back, does nothing with such a line but count it.

    Each test stands for one step of ``Parser._segment`` that could otherwise read something; all are
    digit-blind (digits fold to digits), and a trigger literal is looked for folded the same way."""
    if _PLAIN.fullmatch(shape) is None:  # \r, ESC, non-ASCII: the general path
        return False
    if any(t in shape for t in _FOLDED_TRIGGERS):  # a message rule could read it
        return False
    text = shape.decode("ascii")
    if text.startswith(_STARTS) or E.has_level_word(text):  # process, logger or access prefix, JSON
        return False
    if _colour(shape):  # a colour-code remnant
        return False
    w = E.WRAP_RE.match(text)
    return w is None or w.end() == 0  # an outer wrapper may carry a time


Add = Callable[[LogEvent], None]
Buf = bytes | bytearray


class Classifier:
    """Which lines of a block only need counting, by shape; remembers the shapes it has judged."""

    def __init__(self, max_len: int | None = None, *, compiled: bool | None = None) -> None:
        self.max_len = max_len  # a longer line is never countable (a reader that cuts long lines)
        self._kinds: dict[bytes, int] = {}
        use = COMPILED if compiled is None else compiled
        if use and _scanc is None:
            raise RuntimeError("the compiled classifier (observe.parse._scanc) is not built")
        self._table = _scanc.Table(judge) if use else None

    @property
    def compiled(self) -> bool:
        return self._table is not None

    def runs(self, data: Buf, lo: int = 0, hi: int | None = None) -> list[Run]:
        """data[lo:hi]: whole lines, ending with a newline. Its lines as runs of one kind, in order;
        offsets are into data."""
        hi = len(data) if hi is None else hi
        if self._table is not None:
            return self._table.runs(data, lo, hi, -1 if self.max_len is None else self.max_len)
        return self._runs(bytes(data[lo:hi]), lo)

    def _runs(self, data: bytes, base: int) -> list[Run]:
        shapes = data.translate(_FOLD).split(b"\n")
        shapes.pop()
        kinds = self._kinds
        odd: dict[bytes, int] = {}  # the shapes in data that are not COUNT
        for s in set(shapes):
            k = kinds.get(s)
            if k is None:
                k = judge(s)
                if len(kinds) >= _CACHE_MAX:
                    kinds.clear()
                kinds[s] = k
            if self.max_len is not None and len(s) > self.max_len:
                k = FEED
            if k != COUNT:
                odd[s] = k  # COUNT_PROC too: its runs are apart from the bare ones
        out: list[Run] = []

        def add(kind: int, start: int, end: int, n: int) -> None:
            if kind in COUNTED and out and out[-1][0] == kind and out[-1][2] == start:
                out[-1] = (kind, out[-1][1], end, out[-1][3] + n)
            else:
                out.append((kind, start, end, n))

        k, pos = 0, base
        for j in [i for i, s in enumerate(shapes) if s in odd] if odd else ():
            if j > k:  # the COUNT lines before it
                end = pos + sum(map(len, shapes[k:j])) + (j - k)
                add(COUNT, pos, end, j - k)
                pos = end
            ln = len(shapes[j])
            kind = odd[shapes[j]]
            add(kind, pos, pos + ln + (kind in COUNTED), 1)
            pos += ln + 1
            k = j + 1
        if len(shapes) > k:
            add(COUNT, pos, base + len(data), len(shapes) - k)
        return out


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
        lo = 0
        if self._carry:  # the line begun in an earlier piece ends in this one: fed on its own
            first = data.find(b"\n") + 1
            self._carry.append(data[:first])
            self.block(b"".join(self._carry))
            self._carry = []
            lo = first
        if cut < len(data):
            self._carry.append(data[cut:])
        if lo < cut:
            self.block(data, lo, cut)

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
            self.close()
            return
        with open(path, "rb", buffering=0) as f:
            for buf, cut, at in _plain_blocks(f):
                if cut < 0:
                    self.feed_line(buf)  # the last line, without its newline
                    continue
                self.block(buf, 0, cut)
                if progress is not None:
                    progress(at)

    # ------------------------------------------------------------------ lines
    def feed_line(self, raw: Buf, groups: int = ALL) -> None:
        """One line (without its newline) through the general path (groups: see ``Parser.feed``)."""
        self.lines += 1
        text = raw.decode("utf-8", "replace").rstrip("\r\n")
        for ev in self.parser.feed(LogLine(self.source, self.lines, text), groups):
            self.add(ev)

    def block(self, data: Buf, lo: int = 0, hi: int | None = None) -> None:
        """Whole lines (data[lo:hi] ends with a newline): countable and inert runs credited, the rest
        fed in order."""
        hi = len(data) if hi is None else hi
        if not ENABLED:
            start = lo
            for end in _newlines(data, lo, hi):
                self.feed_line(data[start:end])
                start = end + 1
            return
        parser = self.parser
        for kind, start, end, n in self._classifier.runs(data, lo, hi):
            if kind not in COUNTED:  # FEED, or FED + the literal groups the line holds
                self.feed_line(data[start:end], ALL if kind == FEED else kind - FED)
                continue
            while n and parser.holding:  # a held-back record: these lines may continue it
                nl = data.index(b"\n", start)
                self.feed_line(data[start:nl])
                start = nl + 1
                n -= 1
            if not n:
                continue
            if kind == COUNT or kind == COUNT_PROC:
                parser.credit_access(n, None if kind == COUNT else "APIServer")
                self.count_access(n)
            else:
                parser.credit_lines(n)
            self.lines += n


def _newlines(data: Buf, lo: int, hi: int) -> Iterator[int]:
    i = data.find(b"\n", lo, hi)
    while i >= 0:
        yield i
        i = data.find(b"\n", i + 1, hi)


def _plain_blocks(f: io.RawIOBase) -> Iterator[tuple[Buf, int, int]]:
    """A plain file as (buffer, end of its whole lines, file position), read in place into one buffer
    that is reused once the caller has handled a block: the start of a line cut by a block's end moves
    to its front. Last, if the file does not end with a newline: (its last line, -1, position)."""
    buf = bytearray(BLOCK)
    keep = 0
    while True:
        if keep == len(buf):  # one line longer than the buffer: grow it
            buf.extend(bytes(len(buf)))
        with memoryview(buf) as mv:
            n = f.readinto(mv[keep:])
        if not n:
            break
        end = keep + n
        cut = buf.rfind(b"\n", 0, end) + 1
        if not cut:
            keep = end
            continue
        yield buf, cut, f.tell()
        buf[: end - cut] = buf[cut:end]
        keep = end - cut
    if keep:
        yield bytes(buf[:keep]), -1, f.tell()


def is_gzip(path: Path) -> bool:
    """Whether the file is gzip by its magic bytes (a plain-text log named .gz is text); an
    unreadable file is not, so that its reader raises the error."""
    try:
        with open(path, "rb") as f:
            return f.read(2) == b"\x1f\x8b"
    except OSError:
        return False


def blocks(pieces: Iterable[bytes]) -> Iterator[bytes]:
    """Pieces joined into blocks of about BLOCK bytes; what came before an error comes out before
    the error (a truncated .gz, an I/O error: the lines read so far are still read)."""
    pending: list[bytes] = []
    size = 0
    try:
        for piece in pieces:
            pending.append(piece)
            size += len(piece)
            if size >= BLOCK:
                yield b"".join(pending)
                pending, size = [], 0
    except BaseException:
        if pending:
            yield b"".join(pending)
        raise
    if pending:
        yield b"".join(pending)


def _gz_blocks(f: gzip.GzipFile) -> Iterator[bytes]:
    """Decompressed blocks of about BLOCK bytes (see `blocks`)."""
    return blocks(iter(lambda: f.read1(GZ_PIECE), b""))
