"""Edge: follow log files named by glob patterns and hand out complete lines (mtail's semantics).

Semantics (google/mtail `internal/tailer/logstream/filestream.go`, adapted):

- **Start.** Files that match when the Follower is built are opened at their end ("ignore the
  past") unless `from_start`; files that appear later (a log missing at start, a re-created or
  rotated-in file) are read from their first byte. With `resume` (a ``state()`` the last run
  saved, ``observe.sidecar.tailstate``'s file) each file resumes where that run stopped, generations
  rotated away meanwhile are read from where it stopped in them, and a file it never met is read
  from its start: what was written while no follower ran is read once (mtail checkpoints nothing).
- **Identity.** A generation (one file's content from its first byte) of a followed path is known
  by its first ``tailstate.HEAD`` bytes (vLLM's carry time stamps), not by name or inode: one read is
  never read again, whatever it is renamed or copied to; a file met again is read past that only.
- **Rotation** (rename; RotatingFileHandler, logrotate `create`): when a read hits EOF and the
  path now names another inode, the old descriptor is drained to EOF, its unterminated tail (if
  any) is emitted, and it is retired; the new file is read from offset 0. If the writer rotated
  more than once between two polls, the generations we never opened are found beside the file
  (`name.N`, `name-<date>`: `observe.parse.rotation` names them; uncompressed, not read before, written
  after the old one) and read in order first, so nothing is lost.
- **Several writers** (vLLM's processes, each with its own RotatingFileHandler on one file, as
  components/vllm-logging's logging.json sets up): a process rotates when *its* descriptor's file
  is full, so one that logs rarely goes on writing into a file another has rotated away. A
  rotated file we have read stays open, linked or not (once rotated past backupCount only our
  descriptor can still read what a late writer adds), and what lands in it late is read on each
  poll (after the live file's lines: order across files is not kept). At most `_MAX_LINGER` stay
  open (a deleted one holds its disk space). A vLLM line names its process (`(EngineCore_DP0
  pid=12) INFO …`), and a process writes one file at a time, moving only to newer ones: a file
  all of whose writers have written a newer generation is never written again, and goes first.
  Failing that, the largest goes (a file its writer filled is not written again, while a process's
  own file may be, minutes later: vLLM's engine core logs its shutdown or fatal error into the file
  it last wrote at start-up, which the API server filled up to a slack a short line fits in). The
  file just rotated away is never let go: writers not reopened yet write on in it (the container
  runtime between the kubelet's rename and its ReopenContainerLog).
- **Reused inode numbers**: the kubelet deletes and creates files all the time, so a new generation
  may get the number of a file we read and let go: its head differs, so it is new.
- **Truncation** (copytruncate): same inode, size below our offset (or its head changed: truncated
  and written past our offset between two polls) → remember the generation and how far it was
  read, read its copy (`name.1`: a new inode with that head) past that point — the lines written
  between our last read and the copy —, then the file from 0, and count it. Lines written between
  logrotate's copy and its truncate are lost by design (as in mtail). The copies are never read
  again, even when the live file is deleted and recreated beside them.
- **Deletion**: the path is gone → drain, retire, and let glob discovery find a re-created file
  (rotated siblings written meanwhile and not read are read first, as after a rotation).
- **Partial lines** are held until their `\n` (a trailing `\r` is stripped); never emitted half.
- **Very long lines** are cut at `max_line_bytes` (the rest up to `\n` is dropped) and counted.
- **Invalid UTF-8** is decoded with U+FFFD replacement and counted.
- Rotated siblings (`x.log.1`, `x.log-20260101`, `*.gz`; not `vllm-0.1`, a version) are not
  followed as new files when a pattern has glob characters, otherwise every rename would re-read
  a whole generation.
- **Catch-up in bulk** (`bulk=True`): while a file opened from its start at construction
  (`from_start`) is read up to its first EOF, runs of lines that only need counting (the runs of
  ``observe.parse.scan``'s classifier: plain uvicorn access lines, bare or with the
  "(APIServer pid=N)" prefix, and inert lines) come out as one `CountedLines` each instead of one
  `LogLine` per line, counted in `stats` and line numbers exactly the same.
- `LogLine.lineno` counts from where reading began: line 1 of a file read from its start, the
  first new line of a file opened at its end. Lines of a recovered generation carry the followed
  path as their source.

Wake-ups: a watchdog observer (inotify where available) sets an event so `wait()` returns at
once; without it (or if it cannot start) `wait()` sleeps `poll_interval`. `poll()` itself never
blocks and never raises for file trouble: every fault is counted in `stats`.
"""

from __future__ import annotations

import glob
import itertools
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from observe.model import LogLine
from observe.parse import rotation
from observe.parse.scan import COUNT, COUNTED, Classifier
from observe.sidecar import tailstate
from observe.sidecar.tailwake import Waker

__all__ = ["CountedLines", "Follower", "FollowerStats"]

_CHUNK = 1 << 20
_MAX_READ_PER_POLL = 8 << 20  # per file and poll: bounded memory when catching up on history
_MAX_LINGER = 16  # rotated files kept open for late writers (about one per writing process)
_MAX_WRITERS = 4096  # processes remembered with the newest generation they wrote in
_WRITER_END = 96  # a writer's "(name pid=N)" prefix ends within this many bytes


@dataclass
class FollowerStats:
    """What the follower did and what went wrong; the sidecar exports these as self-metrics."""

    lines: dict[str, int] = field(default_factory=dict)  # complete lines emitted, per file
    bytes: int = 0
    opens: int = 0
    rotations: int = 0
    truncations: int = 0
    deletions: int = 0
    lost_generations_recovered: int = 0  # rotated files read that we had never opened
    long_lines: int = 0  # lines cut at max_line_bytes
    invalid_utf8: int = 0  # lines decoded with replacement characters
    errors: int = 0  # open/read/stat failures (permission denied, I/O error, ...)
    last_error: str | None = None
    watchdog: bool = False  # whether inotify/watchdog wake-ups are active


@dataclass(frozen=True)
class CountedLines:
    """n consecutive lines of one file of one ``scan`` kind (``COUNT``, ``COUNT_PROC``: plain uvicorn
    access lines, bare or with the APIServer prefix; ``INERT``: lines the parser only counts), not
    split into LogLines: ``raw`` holds them as read (each ending with a newline); the first is line
    ``lineno``."""

    source: str
    lineno: int
    n: int
    raw: bytes
    arrival: float
    kind: int = COUNT

    def lines(self, skip: int = 0, stop: int | None = None) -> list[LogLine]:
        """Lines skip..stop-1 (default: to the last) as the LogLines a line-by-line read gives."""
        stop = self.n if stop is None else min(stop, self.n)
        if skip >= stop:
            return []
        if stop < self.n:
            parts = self.raw.split(b"\n", stop)[skip:stop]
        else:
            parts = self.raw[:-1].rsplit(b"\n", self.n - skip)
            if skip:
                parts = parts[1:]
        return [
            LogLine(
                source=self.source,
                lineno=self.lineno + skip + i,
                text=(b[:-1] if b.endswith(b"\r") else b).decode("ascii"),
                arrival=self.arrival,
            )
            for i, b in enumerate(parts)
        ]


@dataclass
class _Stream:
    path: str
    fd: int
    dev_ino: tuple[int, int]
    offset: int = 0
    lineno: int = 0
    partial: bytes = b""
    skipping: bool = False  # inside an over-long line: drop bytes until the next newline
    catch_up: bool = False  # read from its start at construction, first EOF not reached yet
    head: bytes = b""  # its first bytes (up to tailstate.HEAD): which generation it is
    opened_mtime_ns: int = 0  # the file's mtime when we opened it: later generations are newer
    grew_at: float = 0.0  # time.monotonic() of the last read that got bytes (lingering files)
    gen: int = 0  # the order the follower met files in: a later generation is newer
    writers: set[bytes] = field(default_factory=set)  # "name pid=N" of its lines (b"": one names none)
    writer: bytes = b"\0"  # the last line's "(name pid=N)": the next line's is most often the same


class Follower:
    """Follow every file matching `patterns`; `poll()` returns the complete lines read since."""

    def __init__(
        self,
        patterns: list[str],
        *,
        from_start: bool = False,
        poll_interval: float = 0.25,
        use_watchdog: bool = True,
        max_line_bytes: int = 64 * 1024,
        coalesce: float = 0.02,
        clock: Callable[[], float] = time.time,
        bulk: bool = False,
        resume: tailstate.Saved | None = None,
    ) -> None:
        self.patterns = [os.path.abspath(os.path.expanduser(p)) for p in patterns]
        self.poll_interval = poll_interval
        self.max_line_bytes = max_line_bytes
        self.coalesce = coalesce
        self.stats = FollowerStats()
        self._clock = clock
        self._streams: dict[str, _Stream] = {}
        self._failed: dict[str, str] = {}  # path → error, counted once until it opens
        self._gone: dict[str, int] = {}  # retired, not back yet: path → its mtime when opened
        self._linger: list[_Stream] = []  # rotated away, still linked: a late writer may add lines
        self._done = resume.generations if resume else tailstate.Generations()  # let go: how far read
        self._resumed = resume is not None
        self._gens = itertools.count(1)
        self._newest: dict[bytes, int] = {}  # writer → the newest generation it wrote a line in
        self._wake = threading.Event()
        self._more = False  # a file has unread bytes left after the per-poll cap
        self._waker = Waker(self.patterns, self._wake, self.stats) if use_watchdog else None
        self._closed = False
        self._last_discovery = time.monotonic()
        self._classifier = Classifier(max_line_bytes) if bulk else None
        if self._waker is not None:
            self._waker.start()
        for path in self._discover():
            if resume is not None:  # where the last run stopped, or from its start: new since
                if path in resume.files:
                    self._gone[path] = resume.files[path]
                else:
                    self._open(path, at_end=False)
                self._last_discovery = float("-inf")  # the first poll finds them
                continue
            st = self._open(path, at_end=not from_start)
            if st is not None and from_start and bulk:
                st.catch_up = True

    # ------------------------------------------------------------------ public
    def poll(self) -> list[LogLine]:
        """Read what is available from every followed file; complete lines only, in file order
        (with ``bulk``, CountedLines among them while catching up)."""
        if self._closed:
            return []
        self._wake.clear()
        self._more = False
        out: list[LogLine] = []
        now = time.monotonic()
        if now - self._last_discovery >= self.poll_interval or not self._streams:
            # globbing costs a directory listing: once per poll_interval, not on every wake-up
            self._last_discovery = now
            if self._waker is not None:
                self._waker.watch_dirs()
            found = self._discover()
        else:
            found = []
        for path in found:
            if path in self._streams:
                continue
            gone = self._gone.pop(path, None)
            if gone is None:
                self._open(path, at_end=False)
            else:
                self._reopen(path, gone, out)
        for path in list(self._streams):
            st = self._streams.get(path)
            if st is not None and not self._closed:
                self._service(st, out)
        for st in list(self._linger):
            self._service_lingering(st, out)
        return out

    def wait(self, timeout: float | None = None) -> bool:
        """Block until a watched file changes (or `timeout`, default poll_interval); True if woken."""
        if self._more:
            return True
        woke = self._wake.wait(self.poll_interval if timeout is None else timeout)
        if woke and self.coalesce > 0:
            time.sleep(self.coalesce)  # let a burst of writes land, then read them in one go
        return woke

    def files(self) -> list[str]:
        """Paths currently open."""
        return sorted(self._streams)

    def state(self) -> tailstate.Saved:
        """What a restarted follower resumes from (``resume=``): every generation read and how far
        (the open files' up to their last whole line), and the files followed."""
        gens = tailstate.Generations()
        gens.merge(self._done)
        for st in [*self._linger, *self._streams.values()]:
            gens.record(st.path, st.head, st.offset - len(st.partial))
        files = {p: s.opened_mtime_ns for p, s in self._streams.items()}
        return tailstate.Saved(gens, {**self._gone, **files})

    def resumed_at(self, path: str) -> int | None:
        """Where reading the file at `path` resumes: the bytes the last run read of it (0: none);
        None when not resuming (``resume=None``)."""
        if not self._resumed:
            return None
        try:
            with open(path, "rb") as f:
                return self._done.known(path, f.read(tailstate.HEAD)) or 0
        except OSError:
            return 0

    def close(self) -> None:
        """Stop the watchdog observer and close every descriptor. Idempotent."""
        if self._closed:
            return
        self._closed = True
        waker, self._waker = self._waker, None
        if waker is not None:
            waker.stop()
        for st in [*self._streams.values(), *self._linger]:
            tailstate.close_fd(st.fd)
        self._streams.clear()
        self._linger.clear()
        self._wake.set()

    def __enter__(self) -> Follower:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # ------------------------------------------------------------------ discovery
    def _discover(self) -> list[str]:
        found: list[str] = []
        for pat in self.patterns:
            if glob.has_magic(pat):
                found.extend(p for p in rotation.live(sorted(glob.glob(pat))) if os.path.isfile(p))
            elif os.path.isfile(pat):
                found.append(pat)
        return list(dict.fromkeys(found))  # each once, in the order found

    def _open(self, path: str, *, at_end: bool) -> _Stream | None:
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        except FileNotFoundError:
            return None  # gone between glob and open (mid-rotation): found again next poll
        except OSError as e:
            self._fail(path, e)
            return None
        try:
            fs = os.fstat(fd)
            key = (fs.st_dev, fs.st_ino)
            if any(s.dev_ino == key for s in self._streams.values()):
                tailstate.close_fd(fd)  # the same file under a second name: already followed
                return None
            head = os.pread(fd, tailstate.HEAD, 0)
            # a generation already read (met again under this name, or where a restart resumes)
            offset = os.lseek(
                fd,
                0 if at_end else min(self._known(path, head) or 0, fs.st_size),
                os.SEEK_END if at_end else os.SEEK_SET,
            )
        except OSError as e:
            tailstate.close_fd(fd)
            self._fail(path, e)
            return None
        self._failed.pop(path, None)
        st = _Stream(
            path=path,
            fd=fd,
            dev_ino=key,
            offset=offset,
            opened_mtime_ns=fs.st_mtime_ns,
            gen=next(self._gens),
            head=head,
        )
        self._streams[path] = st
        self.stats.opens += 1
        self.stats.lines.setdefault(path, 0)
        return st

    def _fail(self, path: str, e: OSError) -> None:
        msg = f"{path}: {e.strerror or e}"
        if self._failed.get(path) != msg:
            self._failed[path] = msg
            self.stats.errors += 1
            self.stats.last_error = msg

    # ------------------------------------------------------------------ reading
    def _service(self, st: _Stream, out: list[LogLine]) -> None:
        if self._rewritten(st):  # truncated and written past our offset since the last poll
            self._truncated(st, out)
            return
        at_eof = self._read(st, out)
        if not at_eof:
            self._more = True
            return
        try:
            ps = os.stat(st.path)
        except FileNotFoundError:
            self._retire(st, out)
            self.stats.deletions += 1
            # maybe mid-rotation: recover generations when it returns
            self._gone[st.path] = st.opened_mtime_ns
            return
        except OSError as e:
            self._fail(st.path, e)
            return
        try:
            fs = os.fstat(st.fd)
        except OSError as e:
            self._fail(st.path, e)
            return
        if (ps.st_dev, ps.st_ino) != st.dev_ino:
            self._rotate(st, out)
        elif fs.st_size < st.offset:
            self._truncated(st, out)

    def _rewritten(self, st: _Stream) -> bool:
        """Whether the file's head is not the one we read: truncated and written past our offset
        between two polls (its size alone would not tell)."""
        try:
            return bool(st.head) and os.pread(st.fd, len(st.head), 0) != st.head
        except OSError:
            return False

    def _truncated(self, st: _Stream, out: list[LogLine]) -> None:
        """Truncated in place (copytruncate): the generation read is remembered; the lines its copy
        holds past our offset are read from the copy; then the file from its start."""
        self._done.record(st.path, st.head, st.offset - len(st.partial))
        os.lseek(st.fd, 0, os.SEEK_SET)
        st.offset = st.lineno = 0
        st.partial, st.head, st.skipping = b"", b"", False
        self.stats.truncations += 1
        for start, fd in self._lost_generations(st.path, st.opened_mtime_ns):
            self._read_from(fd, start, st.path, out)
        if not self._read(st, out):
            self._more = True

    def _rotate(self, st: _Stream, out: list[LogLine]) -> None:
        """Drain and retire the old file, read generations we missed, then the new file."""
        self._retire(st, out)
        self.stats.rotations += 1
        self._reopen(st.path, st.opened_mtime_ns, out)

    def _reopen(self, path: str, since_ns: int, out: list[LogLine]) -> None:
        """Open `path` (from its start, or where a generation read before stopped), after reading
        any generation rotated away unseen."""
        new: _Stream | None = None
        for _ in range(4):  # scan, open the new file, scan again: it may have rotated meanwhile
            lost = self._lost_generations(path, since_ns, new.dev_ino if new else None)
            for start, fd in lost:
                self._read_from(fd, start, path, out)
            if new is None:
                new = self._open(path, at_end=False)
                if new is None:
                    self._gone[path] = since_ns
                    return
            elif not lost:
                break
        if new is not None and not self._read(new, out):
            self._more = True

    def _retire(self, st: _Stream, out: list[LogLine]) -> None:
        while not self._read(st, out):
            pass
        self._streams.pop(st.path, None)
        self._keep_or_close(st, out)

    def _keep_or_close(self, st: _Stream, out: list[LogLine]) -> None:
        """A rotated file may get lines from a late writer: keep it open (see the module's notes)."""
        self._flush_partial(st, out)  # its unterminated tail is a line: late writers add whole lines
        if self._closed:
            tailstate.close_fd(st.fd)
            return
        st.grew_at = time.monotonic()
        self._linger.append(st)
        while len(self._linger) > _MAX_LINGER:  # never the one just rotated away (the writers not yet
            # reopened — the container runtime until the kubelet's reopen — write on in it)
            older = [s for s in self._linger if s is not st]
            if left := [s for s in older if self._left(s)]:  # its writers all write newer files now
                self._let_go(min(left, key=lambda s: s.gen), out)
            else:
                self._let_go(max(older, key=lambda s: (s.offset, -s.grew_at)), out)

    def _left(self, st: _Stream) -> bool:
        """Whether every writer of `st` has since written a newer generation (all of them known)."""
        return bool(st.writers) and all(self._newest.get(w, 0) > st.gen for w in st.writers)

    def _service_lingering(self, st: _Stream, out: list[LogLine]) -> None:
        before = st.offset
        at_eof = self._read(st, out)
        now = time.monotonic()
        if st.offset != before:
            st.grew_at = now
        if not at_eof:
            self._more = True

    def _let_go(self, st: _Stream, out: list[LogLine]) -> None:
        while not self._read(st, out):
            pass
        self._flush_partial(st, out)
        self._done.record(st.path, st.head, st.offset)  # met again under any name: read only past that
        tailstate.close_fd(st.fd)
        self._linger.remove(st)

    def _lost_generations(
        self, path: str, since_ns: int, fence: tuple[int, int] | None = None
    ) -> list[tuple[int, int]]:
        """``tailstate.unread_siblings`` of `path`: (where to start, descriptor), oldest first."""
        open_now = {s.dev_ino for s in (*self._streams.values(), *self._linger)}
        found = tailstate.unread_siblings(path, since_ns, open_now, lambda h: self._known(path, h), fence)
        if found is None:
            self.stats.errors += 1
            self.stats.last_error = f"{path}: rotated siblings kept changing; generations may be lost"
        return found or []

    def _known(self, path: str, head: bytes) -> int | None:
        """How far we read the generation of `path` whose file starts with `head` (None: never): one let
        go, or one still open (a copytruncate copy of a file we follow is a new inode)."""
        best = self._done.known(path, head)
        for st in (*self._streams.values(), *self._linger):
            if st.path == path and st.head and head.startswith(st.head):
                best = max(best or 0, st.offset - len(st.partial))
        return best

    def _read_from(self, fd: int, start: int, path: str, out: list[LogLine]) -> None:
        """A rotated generation from byte `start` (0, or past what we read of it) to its end."""
        fs = os.fstat(fd)
        head = os.pread(fd, tailstate.HEAD, 0)
        os.lseek(fd, start, os.SEEK_SET)
        st = _Stream(
            path=path, fd=fd, dev_ino=(fs.st_dev, fs.st_ino), offset=start, head=head, gen=next(self._gens)
        )
        self.stats.lost_generations_recovered += 1
        while not self._read(st, out):
            pass
        self._keep_or_close(st, out)

    def _read(self, st: _Stream, out: list[LogLine]) -> bool:
        """Read up to the per-poll cap; True when EOF was reached."""
        budget = _MAX_READ_PER_POLL
        while budget > 0:
            try:
                chunk = os.read(st.fd, min(_CHUNK, budget))
            except OSError as e:
                self._fail(st.path, e)
                return True
            if not chunk:
                st.catch_up = False
                return True
            budget -= len(chunk)
            if st.offset <= len(st.head) < tailstate.HEAD:  # the head not read yet: keep it
                st.head += chunk[len(st.head) - st.offset : tailstate.HEAD - st.offset]
            st.offset += len(chunk)
            self.stats.bytes += len(chunk)
            self._split(st, chunk, out)
        return False

    def _split(self, st: _Stream, chunk: bytes, out: list[LogLine]) -> None:
        if st.skipping:
            nl = chunk.find(b"\n")
            if nl < 0:
                return
            chunk = chunk[nl + 1 :]
            st.skipping = False
        data = st.partial + chunk if st.partial else chunk
        now = self._clock()
        if st.catch_up and (classifier := self._classifier) is not None:
            cut = data.rfind(b"\n") + 1
            st.partial = data[cut:]
            if cut:
                self._split_bulk(st, classifier, data, cut, now, out)
        else:
            parts = data.split(b"\n")
            st.partial = parts.pop()
            for raw in parts:
                self._emit(st, raw, now, out)
        if len(st.partial) > self.max_line_bytes:
            self._emit(st, st.partial, now, out)  # cut here; drop the rest up to its newline
            st.partial = b""
            st.skipping = True

    def _split_bulk(
        self, st: _Stream, classifier: Classifier, data: bytes, cut: int, now: float, out: list
    ) -> None:
        """data[:cut], whole lines: the classifier's runs of lines that only need counting as CountedLines, every
        other line emitted as usual."""
        stats = self.stats.lines
        for kind, start, end, n in classifier.runs(data, 0, cut):
            if kind not in COUNTED:
                self._emit(st, data[start:end], now, out)
                continue
            out.append(CountedLines(st.path, st.lineno + 1, n, data[start:end], now, kind))
            st.lineno += n
            stats[st.path] = stats.get(st.path, 0) + n

    def _flush_partial(self, st: _Stream, out: list[LogLine]) -> None:
        """A retired file will not grow: its unterminated last line is complete as it is."""
        if st.partial:
            self._emit(st, st.partial, self._clock(), out)
            st.partial = b""

    def _wrote(self, st: _Stream, raw: bytes) -> None:
        """`raw`'s writer (vLLM starts every line with it: "(EngineCore_DP0 pid=12) INFO …") wrote in `st`."""
        end = raw.find(b")", 1, _WRITER_END) if raw[:1] == b"(" else -1
        if end < 0 or b" pid=" not in raw[1:end]:
            st.writers.add(b"")  # a writer we cannot follow: never known to have left
            return
        st.writer, writer, newest = raw[: end + 1], raw[1:end], self._newest
        st.writers.add(writer)
        if newest.get(writer, 0) < st.gen:
            if writer not in newest and len(newest) >= _MAX_WRITERS:
                del newest[next(iter(newest))]  # the process first remembered (forgotten: its files stay)
            newest[writer] = st.gen

    def _emit(self, st: _Stream, raw: bytes, now: float, out: list[LogLine]) -> None:
        if len(raw) > self.max_line_bytes:
            raw = raw[: self.max_line_bytes]
            self.stats.long_lines += 1
        if raw.endswith(b"\r"):
            raw = raw[:-1]
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError:
            text = raw.decode("utf-8", errors="replace")
            self.stats.invalid_utf8 += 1
        st.lineno += 1
        self.stats.lines[st.path] = self.stats.lines.get(st.path, 0) + 1
        if not raw.startswith(st.writer):  # most lines are the last one's writer's
            self._wrote(st, raw)
        out.append(LogLine(source=st.path, lineno=st.lineno, text=text, arrival=now))
