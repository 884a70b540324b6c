"""Offline composition for `observe diagnose`: paths → instances → Diagnosis.

The I/O edge of the offline path. It finds log files (plain or .gz) and saved /metrics snapshots,
groups rotated parts of one log into one instance (oldest part first; `rotation` says which
names are parts of which log), streams every line of every part through one Parser per
instance and feeds the events straight into an InstanceBuilder, so memory stays flat however
large the logs are. A file is gzip by its first bytes, not its name. Files it cannot use are
reported in `Diagnosis.unreadable`, never silently dropped; each entry's `kind` says why:
`unreadable` (could not be read), `truncated` (a corrupt or cut .gz, or a read error part way:
the lines before it were used), `binary`, `no_vllm_lines` (read, but nothing of vLLM's in it), or
`host_only` (nothing of vLLM's anywhere, but a failure its host program printed: diagnosed, said so).
"""

from __future__ import annotations

import gzip
import os
import re
import sys
import tempfile
import zlib
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

from observe import parse, servers
from observe.diagnosis import Diagnosis, InstanceBuilder
from observe.errors import InputError, ObserveError
from observe.metrics import scrape
from observe.model import LogLine, Scrape
from observe.parse import cloudwatch, cri, linebound, logfmt, pasted, rotation, scan
from observe.parse.linebound import LineBound
from observe.settings import Settings

Progress = Callable[[str, int, int], None]  # (name, bytes done, bytes total)

_SKIP_SUFFIXES = frozenset(
    ".json .html .png .jpg .svg .yml .yaml .md .py .sh .pkl .csv .jsonl .tsv".split()
)  # never a log: reports, images, configs, code, data
_SNIFF = 8192
#: the `Diagnosis.unreadable` kinds of a file that was not (wholly) read
NOT_READ = frozenset(("unreadable", "truncated"))
STDIN = "-"  # `observe diagnose -`: read the log from standard input (`kubectl logs … |`)
STDIN_NAME = "<stdin>"  # its one name in a report: the instance, the source and every line's place


@dataclass
class LogSet:
    """One instance's log: its rotated parts, oldest first."""

    key: tuple[str, str]
    parts: list[Path] = field(default_factory=list)
    snapshots: list[Path] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(Path(self.key[0]) / self.key[1])


def _wrapped(head: bytes) -> bool:
    """Whether a file's lines are records of a container runtime or a log export, or an indented paste (each
    unwrapped line by line, not by the byte scan)."""
    return (
        cri.looks_like_cri(head)
        or cloudwatch.looks_like_cloudwatch(head)
        or logfmt.looks_like_logfmt(head)
        or pasted.looks_indented(head)
        or pasted.looks_wrapped(head)
    )


def _sniff(path: Path) -> bytes:
    try:
        if scan.is_gzip(path):
            with gzip.open(path, "rb") as f:
                return f.read(_SNIFF)
        with open(path, "rb") as f:
            return f.read(_SNIFF)
    except (EOFError, OSError, zlib.error):
        return b""


def is_snapshot(head: bytes, path: Path) -> bool:
    """A saved /metrics text: `# scraped_at`, or Prometheus exposition of vllm: series."""
    h = head.lstrip()
    return (
        h.startswith(b"# scraped_at")
        or h.startswith(b"# HELP")
        or h.startswith(b"# TYPE")
        or (path.suffix in (".prom",) or (b"\n# TYPE vllm:" in head[:2048] and b"] " not in head[:200]))
    )


def is_binary(head: bytes) -> bool:
    if not head:
        return False
    if b"\x00" in head:
        return True
    bad = sum(1 for b in head if b < 9 or 13 < b < 27 or 27 < b < 32)
    return bad / len(head) > 0.10


def discover(paths: Sequence[Path]) -> tuple[list[LogSet], list[Path], list[dict]]:
    """Expand files and folders into log sets, snapshot files, and unreadable entries."""
    logs: dict[Path, list[Path]] = {}
    snaps: dict[str, list[Path]] = {}
    unreadable: list[dict] = []
    files: list[Path] = []
    stdin = False
    for p in paths:
        p = Path(p)
        if str(p) == STDIN:
            stdin = True
            continue
        if not p.exists():
            raise InputError(f"no such file or folder: {p}")
        if p.is_dir():
            found = sorted(
                q
                for q in p.rglob("*")
                if q.is_file() and not any(part.startswith(".") for part in q.relative_to(p).parts)
            )
            found = [q for q in found if q.suffix.lower() not in _SKIP_SUFFIXES]
            if not found:
                raise InputError(f"no log files in folder {p}")
            files.extend(found)
        else:
            files.append(p)
    for f in files:
        if not os.access(f, os.R_OK):
            unreadable.append({"path": str(f), "reason": "permission denied", "kind": "unreadable"})
            continue
        head = _sniff(f)
        if is_binary(head):
            unreadable.append({"path": str(f), "reason": "binary file, not a text log", "kind": "binary"})
            continue
        if is_snapshot(head, f):
            snaps.setdefault(str(f.parent), []).append(f)
            continue
        logs.setdefault(f.parent, []).append(f)
    logsets = []
    for folder, fs in logs.items():
        for base, parts in rotation.group(f.name for f in fs).items():
            logsets.append(LogSet(key=(str(folder), base), parts=[folder / n for n in parts]))
    if stdin:
        logsets.append(LogSet(key=("", STDIN_NAME), parts=[Path(STDIN)]))
    logsets.sort(key=lambda ls: ls.key)
    for where, fs in snaps.items():
        here = [ls for ls in logsets if ls.key[0] == where]
        for f in sorted(fs):
            target = next((ls for ls in here if f.name.startswith(ls.key[1].split(".")[0])), None) or (
                here[0] if here else None
            )
            if target is not None:
                target.snapshots.append(f)
    orphan_snaps = [
        f for folder, fs in snaps.items() if not any(ls.key[0] == folder for ls in logsets) for f in fs
    ]
    return logsets, orphan_snaps, unreadable


def iter_lines(
    path: Path,
    unreadable: list[dict],
    progress: Progress | None = None,
    bound: LineBound | None = None,
    keep: IO[bytes] | None = None,
) -> Iterator[LogLine]:
    """Stream a file's lines (decoded with replacement), reporting a truncated .gz or I/O error.
    CRI records (a pod's log as the kubelet stores it) come back as the lines vLLM wrote. Lines
    longer than the bound's `max_bytes` are cut (and counted in `bound.cut`). Standard input's
    bytes are copied to `keep` when given (to be read again: `_split_servers`)."""
    raw = _iter_raw(path, unreadable, progress, bound or LineBound(_MAX_LINE), keep)
    return cri.rejoin(pasted.rejoin(logfmt.unwrap(cloudwatch.unwrap(raw))))


_MAX_LINE = Settings().max_line_bytes


def _bounded(f: Any, bound: LineBound) -> Iterator[bytes]:
    """A file's bytes through the long-line bound, in blocks of about scan.BLOCK; what was read
    before an error comes out before the error."""
    gz = isinstance(f, gzip.GzipFile)
    read = f.read1 if gz or hasattr(f, "read1") else f.read
    size = scan.GZ_PIECE if gz else 1 << 20

    def kept() -> Iterator[bytes]:
        while piece := read(size):
            yield from bound.feed(piece)

    return scan.blocks(kept())


def _read_failure(src: str, n: int, e: BaseException) -> dict:
    """The `unreadable` entry for a read that broke off after `n` lines (one wording for both readers)."""
    if isinstance(e, (EOFError, zlib.error, gzip.BadGzipFile)):
        reason = f"truncated or corrupt gzip after {n:,} lines ({e.__class__.__name__}); the lines before were used"
        return {"path": src, "reason": reason, "lines_read": n, "kind": "truncated"}
    strerror = getattr(e, "strerror", None)
    return {
        "path": src,
        "reason": f"read error after {n:,} lines: {strerror or e}",
        "lines_read": n,
        "kind": "truncated" if n else "unreadable",
    }


def _iter_stdin(
    bound: LineBound, keep: IO[bytes] | None = None, f: IO[bytes] | None = None
) -> Iterator[LogLine]:
    for n, b in enumerate(linebound.lines(_kept(_bounded(f or sys.stdin.buffer, bound), keep)), 1):
        yield LogLine(STDIN_NAME, n, b.decode("utf-8", "replace").rstrip("\r"))


def _kept(blocks: Iterator[bytes], keep: IO[bytes] | None) -> Iterator[bytes]:
    for blk in blocks:
        if keep is not None:
            keep.write(blk)
        yield blk


def _iter_raw(
    path: Path,
    unreadable: list[dict],
    progress: Progress | None,
    bound: LineBound,
    keep: IO[bytes] | None = None,
) -> Iterator[LogLine]:
    if str(path) == STDIN:
        yield from _iter_stdin(bound, keep)
        return
    src = str(path)
    try:
        total = path.stat().st_size
    except OSError:
        total = 0
    n = 0
    try:
        raw = gzip.open(path, "rb") if scan.is_gzip(path) else open(path, "rb", buffering=0)
        with raw as f:
            tick = 0
            for b in linebound.lines(_bounded(f, bound)):
                n += 1
                yield LogLine(src, n, b.decode("utf-8", "replace").rstrip("\r"))
                if progress is not None and n - tick >= 200_000:
                    tick = n
                    progress(src, _pos(f, path), total)
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        unreadable.append(_read_failure(src, n, e))
    except OSError as e:
        unreadable.append(_read_failure(src, n, e))
    if progress is not None:
        progress(src, total, total)


def scan_part(
    path: Path,
    parser: parse.Parser,
    b: InstanceBuilder,
    unreadable: list[dict],
    progress: Progress | None,
    bound: LineBound | None = None,
) -> None:
    """iter_lines + feed, through the byte-level scan: the same events, counts and unreadable
    entries (lines longer than the bound cut and counted in `bound.cut`)."""
    src = str(path)
    try:
        total = path.stat().st_size
    except OSError:
        total = 0
    sc = scan.Scanner(src, parser, b.add, b.count_access)
    bound = bound or LineBound(_MAX_LINE)
    try:
        gz = scan.is_gzip(path)
        with open(path, "rb", buffering=0) as raw, gzip.GzipFile(fileobj=raw) if gz else raw as f:
            for blk in _bounded(f, bound):
                sc.push(blk)
                if progress is not None:
                    progress(src, raw.tell(), total)
        sc.close()
    except (EOFError, zlib.error, gzip.BadGzipFile) as e:
        n = sc.lines
        unreadable.append(_read_failure(src, n, e))
    except OSError as e:
        n = sc.lines
        unreadable.append(_read_failure(src, n, e))
    if progress is not None:
        progress(src, total, total)


def _pos(f, path: Path) -> int:
    try:
        raw = getattr(f, "fileobj", None)  # a gzip file's compressed stream
        if isinstance(f, gzip.GzipFile) and raw is not None:
            return raw.tell()  # compressed position, comparable with st_size
        return f.tell()
    except (AttributeError, OSError, ValueError):
        return 0


_STAMP = re.compile(rb"(?:^|[\s\]])(\d\d)-(\d\d) \d\d:\d\d:\d\d")


def _year_of(path: Path) -> int | None:
    """The year of the file's FIRST line: its mtime's year, one less when the first stamp's month is
    later than the mtime's month (a log that crossed New Year). vLLM's stamps carry no year."""
    if str(path) == STDIN:
        return datetime.now().year
    try:
        mtime = datetime.fromtimestamp(path.stat().st_mtime)
    except OSError:
        return None
    m = _STAMP.search(_sniff(path))
    if m and 1 <= int(m.group(1)) <= 12 and int(m.group(1)) > mtime.month:
        return mtime.year - 1
    return mtime.year


def read_snapshot(path: Path) -> Scrape:
    """A saved /metrics text; one without a `# scraped_at` stamp is dated by its file's mtime."""
    return _read_snapshot(path)[0]


def _read_snapshot(path: Path) -> tuple[Scrape, bool]:
    """(the snapshot, whether its text carried its own `# scraped_at` time)."""
    try:
        if scan.is_gzip(path):
            with gzip.open(path, "rt", encoding="utf-8", errors="replace") as f:
                text = f.read()
        else:
            text = path.read_text(encoding="utf-8", errors="replace")
    except (OSError, EOFError, zlib.error) as e:
        raise InputError(f"cannot read metrics snapshot {path}: {getattr(e, 'strerror', None) or e}")
    try:
        sc = scrape.parse_text(text, source=str(path))
    except ObserveError as e:
        raise InputError(f"{path}: not a Prometheus /metrics text ({e})")
    stamped = sc.at is not None
    if not stamped:
        mtime = _mtime(path)
        if mtime is not None:
            sc.at = datetime.fromtimestamp(mtime, UTC)
    return sc, stamped


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def in_time_order(snapshots: Sequence[Path], skipped: list[dict] | None = None) -> list[Scrape]:
    """Saved snapshots read and put in time order: by `# scraped_at` (else mtime), then mtime —
    never by file name (`metrics-10.txt` is not older than `metrics-9.txt`). Two stamped with the
    same second (stamps carry whole seconds) are one point: the last modified one. `skipped`: found
    in a folder, one that cannot be read (a failed scrape saved as its error) is left out and named
    there (kind `bad_snapshot`) instead of failing the whole diagnosis."""
    keyed = []
    for p in snapshots:
        try:
            sc, stamped = _read_snapshot(Path(p))
        except InputError as e:
            if skipped is None:
                raise
            reason = f"{str(e).removeprefix(f'{p}: ')}; the other snapshots were read"
            skipped.append({"path": str(p), "reason": reason, "kind": "bad_snapshot"})
            continue
        mtime = _mtime(Path(p)) or 0.0
        at = sc.at.timestamp() if sc.at is not None else mtime
        keyed.append((at, mtime, stamped, sc))
    keyed.sort(key=lambda t: (t[0], t[1]))
    out: list[Scrape] = []
    prev: tuple[int, bool] | None = None
    for at, _, stamped, sc in keyed:
        if out and stamped and prev == (int(at), True):
            out[-1] = sc
        else:
            out.append(sc)
        prev = (int(at), stamped)
    return out


def diagnose_paths(
    paths: Sequence[Path],
    metrics: Sequence[Path] = (),
    *,
    progress: Progress | None = None,
    now: datetime | None = None,
    max_rows: int = 20_000,
    settings: Settings | None = None,
    history: dict[str, list[Scrape]] | None = None,
) -> Diagnosis:
    """``history``: instance name → Scrapes read from Prometheus (promhistory); each joins the log
    of the same instance (see `match_history`), or is diagnosed from its metrics alone."""
    if not paths and not history:
        raise InputError("give at least one log file or folder")
    logsets, orphan_snaps, unreadable = discover(paths) if paths else ([], [], [])
    for m in metrics:
        if not Path(m).exists():
            raise InputError(f"no such metrics snapshot: {m}")
    extra = in_time_order(metrics)
    instances: list[
        tuple[Any, InstanceBuilder, Any]
    ] = []  # (LogSet, builder, Parser); no log: (None, builder, None)
    stdin_copy = tempfile.SpooledTemporaryFile(max_size=32 << 20)  # standard input, in case it is read again
    split: dict[int, tuple[list[int], str]] = {}  # id(builder) → (the servers split, what could not be told)
    for ls in logsets:
        b = InstanceBuilder(ls.name, max_rows=max_rows, settings=settings)
        parser = parse.Parser(year=_year_of(ls.parts[0]))
        for part in ls.parts:
            before_lines, before_vllm, before_damaged = parser.lines, parser.vllm_lines, parser.damaged_lines
            fmts_before = set(parser.formats)
            bound = LineBound(settings.max_line_bytes if settings is not None else _MAX_LINE)
            if scan.ENABLED and str(part) != STDIN and not _wrapped(_sniff(part)):
                scan_part(part, parser, b, unreadable, progress, bound)
            else:
                for line in iter_lines(part, unreadable, progress, bound, stdin_copy):
                    for ev in parser.feed(line):
                        b.add(ev)
            if part is ls.parts[-1]:
                for ev in parser.flush():
                    b.add(ev)
            new_fmts = set(parser.formats) - fmts_before or set(parser.formats)
            b.sources.append(
                {
                    "path": shown(part),
                    "lines": parser.lines - before_lines,
                    "parsed_lines": parser.vllm_lines - before_vllm,
                    "format": ",".join(sorted(new_fmts)) or None,
                    **({"cut_lines": bound.cut, "max_line_bytes": bound.max_bytes} if bound.cut else {}),
                    "damaged_lines": parser.damaged_lines - before_damaged,
                }
            )
        for sc in in_time_order(ls.snapshots, unreadable):
            b.add_scrape(sc)
        pids = servers.interleaved(parser.api_runs)
        if pids:  # several API servers side by side: read again, one instance each
            for sb, sp, note in _split_servers(ls, pids, b, stdin_copy, max_rows, settings):
                split[id(sb)] = (pids, note)
                instances.append((ls, sb, sp))
        else:
            instances.append((ls, b, parser))
    if not instances and (extra or orphan_snaps):
        b = InstanceBuilder("metrics", max_rows=max_rows, settings=settings)
        instances.append((None, b, None))
    if instances:
        for sc in in_time_order(orphan_snaps, unreadable):
            instances[0][1].add_scrape(sc)
    for sc in extra:
        for _, b, _ in instances[:1] if len(instances) > 1 else instances:
            b.add_scrape(sc)
    if history:
        pairs = match_history(list(history), [ls.name for ls, _, _ in instances if ls is not None])
        by_name = {ls.name: b for ls, b, _ in instances if ls is not None}
        for inst, scrapes in history.items():
            hb = by_name.get(pairs.get(inst, ""))
            if hb is None:
                hb = InstanceBuilder(inst, max_rows=max_rows, settings=settings)
                instances.append((None, hb, None))
            for sc in scrapes:
                hb.add_scrape(sc)
    useful = [(ls, b) for ls, b, p in instances if p is None or p.vllm_lines > 0 or b.scrapes]
    # nothing of vLLM's anywhere in what was handed over: a log whose host program printed a failure
    # is still read, said so (its diagnosis says what it cannot tell)
    hosts = {} if useful else {id(b): d for _, b, _ in instances if (d := b.finish_host_only(now=now))}
    for ls, b, p in instances:
        if p is not None and p.vllm_lines == 0 and not b.scrapes:
            kind = "host_only" if id(b) in hosts else "no_vllm_lines"
            for part in ls.parts:
                if not any(u["path"] == shown(part) for u in unreadable):
                    unreadable.append({"path": shown(part), "reason": _NO_LINES[kind], "kind": kind})
    if not useful and not hosts:
        raise InputError(nothing_read_text(unreadable))
    said: set[int] = set()
    # several API servers in one stream: one instance each, or read as one and said so
    for ls, b, p in instances:
        if id(b) in split:
            pids_split, note = split[id(b)]
            if pids_split[0] not in said:
                said.add(pids_split[0])
                unreadable.append(
                    {
                        "path": shown(ls.parts[0]),
                        "reason": f"holds the lines of {len(pids_split)} vLLM API servers side by side (pids "
                        f"{', '.join(str(x) for x in pids_split)}), diagnosed as one instance each"
                        + (f"; {note}" if note else ""),
                        "kind": "several_servers",
                    }
                )
        elif p is not None and len(p.api_servers) > 1 and b.launch_count < len(p.api_runs):
            # said only when a change of API server is not a launch (a restart loop: each new pid
            # opens a launch of its own, one server after another, nothing to split)
            pid_list = ", ".join(str(x) for x in sorted(p.api_servers))
            unreadable.append(
                {
                    "path": shown(ls.parts[0]),
                    "reason": f"holds the lines of {len(p.api_servers)} vLLM API servers (pids {pid_list}), read as "
                    "one instance: split the log per server for a diagnosis of each",
                    "kind": "several_servers",
                }
            )
    for _, b in useful:  # what a pasted /metrics dump held that was not read: one note each
        for sc in b.scrapes:
            if sc.note and not any(u["path"] == sc.source for u in unreadable):
                kind = "no_samples" if sc.note.startswith("no samples") else "lines_skipped"
                unreadable.append({"path": sc.source, "reason": sc.note, "kind": kind})
    stdin_copy.close()
    diags = [b.finish(now=now, log_ended=True) for _, b in useful] + list(hosts.values())  # read to their end
    return Diagnosis(instances=diags, generated_at=now, unreadable=unreadable)


def _split_servers(
    ls: LogSet,
    pids: list[int],
    whole: InstanceBuilder,
    stdin_copy: IO[bytes],
    max_rows: int,
    settings: Settings | None,
) -> list[tuple[InstanceBuilder, parse.Parser, str]]:
    """A log set holding several API servers side by side, read again, apart (`servers.Apart`). The
    first reading's snapshots go with the first server (a /metrics text names no pid)."""
    apart = servers.Apart(ls.name, pids, year=_year_of(ls.parts[0]), max_rows=max_rows, settings=settings)
    for part in ls.parts:
        bound = LineBound(settings.max_line_bytes if settings is not None else _MAX_LINE)
        if str(part) == STDIN:
            stdin_copy.seek(0)
            lines = cri.rejoin(
                pasted.rejoin(logfmt.unwrap(cloudwatch.unwrap(_iter_stdin(bound, None, stdin_copy))))
            )
        else:
            lines = iter_lines(part, [], None, bound)
        apart.part(lines, shown(part), last=part is ls.parts[-1], bound=bound)
    for sc in whole.scrapes:
        apart.each[pids[0]][0].add_scrape(sc)
    return [(b, p, apart.router.note()) for b, p in apart.each.values()]


NO_VLLM_LINES = "no vLLM log lines found"
_NO_LINES = {
    "no_vllm_lines": NO_VLLM_LINES,
    "host_only": NO_VLLM_LINES + ": its failure is read from the host program's lines",
}


def shown(part: Path) -> str:
    """A log part's name in a report (standard input is `<stdin>`, as its lines' places say)."""
    return STDIN_NAME if str(part) == STDIN else str(part)


def nothing_read_text(unreadable: Sequence[dict]) -> str:
    """The one line when no input held a vLLM line: the files that had none, then the other reasons
    (each said once: `no vLLM log lines found in a.log, b.log`)."""
    empty = [u["path"] for u in unreadable if u.get("kind") == "no_vllm_lines"]
    other = [f"{u['path']}: {u['reason']}" for u in unreadable if u.get("kind") != "no_vllm_lines"]
    text = NO_VLLM_LINES + (f" in {', '.join(empty[:5])}" if empty else "")
    if len(empty) > 5:
        text += f" and {len(empty) - 5} more"
    if other:
        text += f" ({'; '.join(other[:5])})"
    return text


def not_read_text(unreadable: Sequence[dict]) -> str | None:
    """The one line when a file could be read only in part (a truncated .gz) or not at all, after
    a report of the rest; None when every file was read."""
    partial = [u for u in unreadable if u.get("kind") in NOT_READ]
    if not partial:
        return None
    return "; ".join(f"{u['path']}: {u['reason']}" for u in partial[:3]) + (
        " (the report above is of the rest; --partial-ok accepts this)"
    )


def match_history(instances: Sequence[str], logs: Sequence[str]) -> dict[str, str]:
    """Which log belongs to which Prometheus instance: the log whose path names the pod (or the
    instance's host); one log and one instance are each other's. Unmatched ones stay apart."""
    if len(instances) == 1 and len(logs) == 1:
        return {instances[0]: logs[0]}
    out: dict[str, str] = {}
    for inst in instances:
        token = inst.rsplit("/", 1)[-1].split(":", 1)[0]
        hits = [lg for lg in logs if token and token in lg and lg not in out.values()]
        if len(hits) == 1:
            out[inst] = hits[0]
    return out
