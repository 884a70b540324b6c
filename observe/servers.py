"""Several vLLM API servers in one stream: which ones ran side by side, and whose line is which.

A paste or a shared terminal can hold the lines of two servers at once, told apart only by their
process prefixes: ``(APIServer pid=123)`` and ``(APIServer pid=456)``. Servers whose lines
interleave are separate instances; one server after another (a restart with a new pid) is one
instance's launches (``launches``). A log rarely shows the process tree, so the lines of an engine
core or a worker (``(EngineCore_DP0 pid=N)``, ``(VllmWorker TP0 pid=N)``) go by the order of
launch: a new child pid belongs to the earliest-started server that has no process of that role
yet. Lines with no prefix (tracebacks printed bare, progress bars, warnings) go with the server
that logged last. What could not be told for sure is counted, so the report can say so.

Pure: no I/O; the caller reads the lines (``Apart.part``), each goes to its server's own Parser.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from observe.diagnosis import InstanceBuilder
from observe.model import LogLine
from observe.parse import Parser
from observe.parse import envelope as E
from observe.parse.linebound import LineBound
from observe.settings import Settings

API = "APIServer"


def interleaved(runs: Sequence[int]) -> list[int]:
    """The API-server pids to split, in order of their first line, given the pid of each run of their
    lines in log order (``Parser.api_runs``): all of them when two servers alternate — A's lines, then
    B's, then A's again, then B's again: both ran side by side —, none otherwise. One server after
    another (a restart with a new pid, or a restart that got an earlier server's pid back, as a
    container's pid 1 does) is one instance's launches (``launches``).

    One pass, linear in the runs and in memory (a restart loop of thousands of pids costs what a
    few do): the pids not yet closed stand on a stack by their latest run; a pid that runs again
    closes every pid above it (each ran between two runs of it), and a closed pid that runs again
    is the fourth run of "a b a b"."""
    seen: set[int] = set()
    stack: list[int] = []  # the pids still open, by their latest run (the latest on top)
    closed: set[int] = set()  # seen between two runs of another pid: a run of it now is "a b a b"
    for p in runs:
        if p in closed:
            return list(dict.fromkeys(runs))  # every pid, in the order of its first run
        if p not in seen:
            seen.add(p)
            stack.append(p)
            continue
        while stack[-1] != p:  # what ran since p's last run is between two runs of p
            closed.add(stack.pop())
    return []


def prefixes(text: str) -> list[tuple[str | None, int, int | None]]:
    """The process prefixes a physical line begins with, outer first: (name, pid, rank), the name
    with its dims as the parser spells it ("VllmWorker_TP0"). Wrappers, colours and PyTorch's
    ``[rankN]:`` are peeled first, as the parser does."""
    seg = E.strip_ansi(text) if "[" in text else text
    if not seg.startswith(("(", "[rank")):
        for _ in range(4):
            w = E.WRAP_RE.match(seg)
            if w is None or w.end() == 0:
                break
            seg = seg[w.end() :]
    out: list[tuple[str | None, int, int | None]] = []
    r = E.RANK_RE.match(seg) if seg[:5] == "[rank" else None
    if r is not None:
        seg = seg[r.end() :]
    while seg[:1] == "(":
        p = E.PROC_RE.match(seg)
        if p is None:
            break
        name, rank_text, dims, pid = p.groups()
        out.append((f"{name}_{dims}" if name and dims else name, int(pid), E.rank_of(name, rank_text, dims)))
        seg = seg[p.end() :]
        r = E.RANK_RE.match(seg) if seg[:5] == "[rank" else None
        if r is not None:
            seg = seg[r.end() :]
    return out


@dataclass
class Router:
    """Whose line is which, for the API servers ``servers`` (pids, in order of their first line)."""

    servers: Sequence[int]

    def __post_init__(self) -> None:
        self.owner: dict[int, int] = {p: p for p in self.servers}
        self.roles: dict[int, set[str]] = {p: set() for p in self.servers}
        self.started: list[int] = []  # servers whose first line has been seen, in that order
        self.current = self.servers[0]  # the server that logged last
        self.guessed: dict[int, str] = {}  # child pid → its role, where more than one server could own it
        self.unprefixed = 0  # non-blank lines without a prefix, given to the server that logged last

    def route(self, text: str) -> int:
        """The API server (its pid) a physical line belongs to."""
        pre = prefixes(text)
        if not pre:
            if text.strip():
                self.unprefixed += 1
            return self.current
        for _, pid, _ in pre:
            if pid in self.owner:
                owner = self.owner[pid]
                if owner == pid and owner not in self.started:
                    self.started.append(owner)
                self.current = owner
                return owner
        name, pid, rank = pre[0]
        if name == API:  # more servers than the first reading kept: the last one that logged
            return self.current
        role = str(name) if rank is None else f"{name}#{rank}"
        free = [s for s in self.started if role not in self.roles[s]] or [self.current]
        if len(free) > 1 or role in self.roles[free[0]]:
            self.guessed[pid] = role
        owner = free[0]
        self.owner[pid] = owner
        self.roles[owner].add(role)
        self.current = owner
        return owner

    def note(self) -> str:
        """What could not be told for sure, in one clause (empty when everything was told)."""
        parts = []
        if self.guessed:
            pids = ", ".join(f"{role.split('#')[0]} pid={p}" for p, role in sorted(self.guessed.items())[:4])
            more = f" and {len(self.guessed) - 4} more" if len(self.guessed) > 4 else ""
            parts.append(
                f"{pids}{more} given to a server by the order of launch (the log does not show who spawned it)"
            )
        if self.unprefixed:
            n = self.unprefixed
            parts.append(
                f"{n:,} line{'s' if n != 1 else ''} without a process prefix given to the server that logged last"
            )
        return "; ".join(parts)


class Apart:
    """Several servers' lines read apart: each line routed to its server and fed to that server's own
    Parser and InstanceBuilder (so one server's shutdown or held-back record never colours another's
    lines); the builders are named ``<log> (APIServer pid=N)``."""

    def __init__(
        self, name: str, pids: Sequence[int], *, year: int | None, max_rows: int, settings: Settings | None
    ) -> None:
        self.router = Router(pids)
        self.each = {
            pid: (
                InstanceBuilder(f"{name} (APIServer pid={pid})", max_rows=max_rows, settings=settings),
                Parser(year=year),
            )
            for pid in pids
        }

    def part(self, lines: Iterable[LogLine], source: str, *, last: bool, bound: LineBound) -> None:
        """One part of the log (its lines, its name in a report); the last part flushes the parsers.
        Each server's builder gets the part's source entry with its own counts."""
        before = {
            pid: (p.lines, p.vllm_lines, p.damaged_lines, set(p.formats)) for pid, (_, p) in self.each.items()
        }
        for line in lines:
            b, p = self.each[self.router.route(line.text)]
            for ev in p.feed(line):
                b.add(ev)
        for pid, (b, p) in self.each.items():
            if last:
                for ev in p.flush():
                    b.add(ev)
            lines0, vllm0, damaged0, fmts0 = before[pid]
            new_fmts = set(p.formats) - fmts0 or set(p.formats)
            b.sources.append(
                {
                    "path": source,
                    "lines": p.lines - lines0,
                    "parsed_lines": p.vllm_lines - vllm0,
                    "format": ",".join(sorted(new_fmts)) or None,
                    **({"cut_lines": bound.cut, "max_line_bytes": bound.max_bytes} if bound.cut else {}),
                    "damaged_lines": p.damaged_lines - damaged0,
                }
            )
