"""Edge: what the tail remembers — the generations of a log it has read, known by identity — and the
state file that keeps them, with the sidecar's counters, across a restart.

A **generation** is one file's content from its first byte. Its identity is (device, inode) and a
fingerprint of its head: the first ``HEAD`` bytes' length and blake2b digest (never the bytes
themselves: a log may hold what a user sent). The head decides: inode numbers are reused (the
kubelet deletes and creates files all the time), a file truncated in place (copytruncate) starts a
new generation in the same inode, and a copytruncate copy (``vllm.log.1``) is a new inode holding
what was read through the live file. ``Generations`` keeps how far each was read (up to the last
whole line), so a file met again under any name is read only past that point.

The state file (``STATE_FILE`` in the sidecar's ``--state-dir``) is JSON, written atomically (a
temporary file beside it, fsync, ``os.replace``, then the folder fsynced): a reader sees the old
state or the new, never half of one. ``load`` never raises: a missing file is a first start, a
corrupt one comes back as a warning (the caller tells it once and starts at the logs' end).
"""

from __future__ import annotations

import collections
import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from typing import Any

from observe.parse import rotation

__all__ = [
    "HEAD",
    "STATE_FILE",
    "Generations",
    "Saved",
    "close_fd",
    "fingerprint",
    "load",
    "save",
    "unread_siblings",
]

HEAD = 1024  # bytes of a file's start that tell its generation
STATE_FILE = "observe-sidecar-state.json"
VERSION = 1
_MAX_GENERATIONS = 1024


def fingerprint(head: bytes) -> str:
    return hashlib.blake2b(head, digest_size=16).hexdigest()


class Generations:
    """Generations read and how far, per followed path (the name the follower knows a log by: its
    rotated files are its generations; two logs are never taken for each other). Bounded: the
    oldest recorded are forgotten first."""

    def __init__(self, limit: int = _MAX_GENERATIONS) -> None:
        self._read: collections.OrderedDict[tuple[str, int, str], int] = collections.OrderedDict()
        self._lengths: collections.Counter[tuple[str, int]] = collections.Counter()  # head lengths
        self._limit = limit

    def __len__(self) -> int:
        return len(self._read)

    def record(self, path: str, head: bytes, read: int) -> None:
        """The generation of `path` whose file starts with `head` was read up to byte `read` (an
        empty head tells nothing: not recorded)."""
        if head:
            self._put((path, len(head), fingerprint(head)), read)

    def merge(self, other: Generations) -> None:
        for key, read in other._read.items():
            self._put(key, read)

    def _put(self, key: tuple[str, int, str], read: int) -> None:
        if key in self._read:
            read = max(read, self._read.pop(key))
        else:
            self._lengths[key[:2]] += 1
        self._read[key] = read
        while len(self._read) > self._limit:
            old, _ = self._read.popitem(last=False)
            self._lengths[old[:2]] -= 1
            if not self._lengths[old[:2]]:
                del self._lengths[old[:2]]

    def known(self, path: str, head: bytes) -> int | None:
        """How far the generation of `path` whose file starts with `head` was read; None: never met.
        One recorded with a shorter head (a small file then) is this one if it is a prefix."""
        best: int | None = None
        for p, n in self._lengths:
            if p == path and n <= len(head):
                read = self._read.get((p, n, fingerprint(head[:n])))
                if read is not None and (best is None or read > best):
                    best = read
        return best

    def to_json(self) -> list[list[Any]]:
        return [[path, n, digest, read] for (path, n, digest), read in self._read.items()]

    @classmethod
    def from_json(cls, rows: Any) -> Generations:
        g = cls()
        for path, n, digest, read in rows:
            if (
                not all(isinstance(v, t) for v, t in ((path, str), (n, int), (digest, str), (read, int)))
                or n <= 0
            ):
                raise ValueError("a generation is [path, head length, digest, bytes read]")
            g._put((path, n, digest), read)
        return g


@dataclass
class Saved:
    """What one sidecar run leaves to the next: the generations read, the files open (path →
    their mtime when opened: later files beside them are newer generations), and the counters
    alerts read (instance key → counter name → label → value)."""

    generations: Generations = field(default_factory=Generations)
    files: dict[str, int] = field(default_factory=dict)
    counters: dict[str, dict[str, dict[str, int]]] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "version": VERSION,
            "generations": self.generations.to_json(),
            "files": self.files,
            "counters": self.counters,
        }

    @classmethod
    def from_json(cls, doc: Any) -> Saved:
        if not isinstance(doc, dict) or doc.get("version") != VERSION:
            raise ValueError(f"not a version {VERSION} state")
        files = doc.get("files", {})
        counters = doc.get("counters", {})
        if not all(isinstance(k, str) and isinstance(v, int) for k, v in files.items()):
            raise ValueError("files: path → mtime")
        for per in counters.values():
            for values in per.values():
                if not all(isinstance(k, str) and isinstance(v, int) and v >= 0 for k, v in values.items()):
                    raise ValueError("counters: label → count")
        return cls(Generations.from_json(doc.get("generations", [])), dict(files), counters)


def load(state_dir: str) -> tuple[Saved | None, str | None]:
    """(the saved state or None, a warning or None). No file: (None, None), a first start."""
    path = os.path.join(state_dir, STATE_FILE)
    try:
        with open(path, encoding="utf-8") as f:
            return Saved.from_json(json.load(f)), None
    except FileNotFoundError:
        return None, None
    except (OSError, ValueError, TypeError, AttributeError) as e:
        why = e.strerror if isinstance(e, OSError) else str(e) or type(e).__name__
        return None, f"state file {path} unreadable ({why}): starting at the end of the logs"


def save(state_dir: str, saved: Saved) -> None:
    """Write the state atomically; raises OSError (the caller counts it)."""
    data = json.dumps(saved.to_json(), separators=(",", ":")).encode()
    os.makedirs(state_dir, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".state-", dir=state_dir)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, os.path.join(state_dir, STATE_FILE))
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    with contextlib.suppress(OSError):  # the rename itself durable
        dfd = os.open(state_dir, os.O_RDONLY)
        try:
            os.fsync(dfd)
        finally:
            os.close(dfd)


def unread_siblings(
    path: str,
    since_ns: int,
    open_now: Collection[tuple[int, int]],
    known: Callable[[bytes], int | None],
    fence: tuple[int, int] | None = None,
) -> list[tuple[int, int]] | None:
    """Open the rotated siblings of `path` written since we opened the file we held (with several
    writers the held file may be written after a newer generation was: its mtime at open is the
    fence, not its last), not open now (`open_now`: (device, inode)) and not read through, whatever
    their name or inode: `known(head)` says how far a file's generation was read.

    Returns (where to start, open descriptor), oldest generation first; None when the names kept
    changing. The writer may be rotating while we look (`.1` becomes `.2`), so the directory is
    listed until two listings agree, and files are kept by descriptor, not by name. When `fence`
    (the file just opened at `path`) has itself been rotated, only generations older than it are
    taken; newer ones are found when the fence is retired.
    """
    d, base = os.path.split(path)
    for attempt in range(200):
        first = _siblings(d, base)
        rank = {name: i for i, name in enumerate(first)}  # oldest first
        fence_rank = next((rank[n] for n, k in first.items() if k == fence), None)
        fds: list[tuple[int, int, int]] = []
        for name, key in first.items():
            if key in open_now or (fence_rank is not None and rank[name] >= fence_rank):
                continue
            try:
                fd = os.open(os.path.join(d, name), os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
            except OSError:
                continue
            try:
                fs = os.fstat(fd)
                start = known(os.pread(fd, HEAD, 0)) or 0
            except OSError:
                close_fd(fd)
                continue
            if (fs.st_dev, fs.st_ino) != key or fs.st_mtime_ns < since_ns or 0 < fs.st_size <= start:
                close_fd(fd)  # not that file any more, older than the one we held, or read through
                continue
            fds.append((rank[name], start, fd))
        if _siblings(d, base) == first:
            return [(start, fd) for _, start, fd in sorted(fds)]
        for _, _, fd in fds:
            close_fd(fd)
        time.sleep(0.001 * min(attempt + 1, 10))  # the writer is mid-rollover; let it finish
    return None


def _siblings(d: str, base: str) -> dict[str, tuple[int, int]]:
    """Uncompressed rotated generations of `base` in `d`, oldest first: name → (dev, inode)."""
    out: dict[str, tuple[int, int]] = {}
    try:
        names = os.listdir(d or ".")
    except OSError:
        return out
    for name in rotation.siblings(names, base):
        try:
            s = os.stat(os.path.join(d, name))
        except OSError:
            continue
        out[name] = (s.st_dev, s.st_ino)
    return out


def close_fd(fd: int) -> None:
    with contextlib.suppress(OSError):
        os.close(fd)


def read_upto(push: Callable[[bytes], None], path: str, upto: int) -> None:
    """The first `upto` bytes of a file, in pieces, to `push` (a scanner: its last partial line waits
    for the rest): what a resumed sidecar re-reads for the facts of the launch it was in."""
    with open(path, "rb") as f:
        while upto > 0 and (data := f.read(min(upto, 1 << 20))):
            push(data)
            upto -= len(data)
