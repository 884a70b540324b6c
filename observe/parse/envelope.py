"""The line envelope: everything around a vLLM log message, and the year vLLM's stamps leave out.

A physical line may carry, outside in: ANSI colour codes, a collector's wrapper (Buildkite gutter,
``docker logs -t`` / CI timestamp, journald, a compose ``svc-1 |`` column), vLLM's process prefixes
("(EngineCore_DP0 pid=1)", nested), the logger prefix ("INFO 05-12 10:11:12 [loggers.py:116]"),
then the message, possibly followed by Ray's "[repeated 3x across cluster]" or a wrapper's
"(scheduler.py:1558)" location. The patterns and pure helpers here peel those layers; the
:class:`~observe.parse.parser.Parser` applies them in order and keeps the per-stream state.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from observe.model import Envelope

#: Year assumed for vLLM's year-less stamps when neither the caller nor an outer timestamp
#: gives one. 2000 is a leap year, so a genuine "02-29" stamp still parses.
DEFAULT_YEAR = 2000

#: JSON text longer than this is not decoded (a pathological line must stay cheap)
MAX_JSON = 200_000

_A = re.ASCII

# ANSI colour codes: real ESC, the "←[" rendering of ESC in some terminals, ESC written out as the two
# characters "^[" (a terminal's caret notation, copied as text), and bare "[1;36m" remnants left when a
# paste drops the ESC byte. A bare remnant needs its digits: "[m" alone is text ("[multiproc_executor.py:671]",
# "[model_runner.py:…]", "[metrics.py:…]": a logger's file), and stripping it broke such a line's prefix.
ANSI_RE = re.compile(r"(?:(?:\x1b|\u2190|\^\[)\[(?:\d{1,3}(?:;\d{1,3})*)?m|\[\d{1,3}(?:;\d{1,3})*m)", _A)

# Outer wrappers, stripped from the start of a line (in any nesting order).
# An RFC 3339 stamp ("docker logs -t": moby write_log_stream.go writes RFC3339NanoFixed + " ") loses exactly that one
# separator, so a stamped traceback keeps its own indentation (a frame's source line stays under its "File" line);
# only before a level word (Rust tracing's right-aligned " INFO", as Dynamo prints it) is the padding taken too.
WRAP_RE = re.compile(
    r"""(?:
      [ \t]*\|[ \t]                                                              # Buildkite gutter
    | >(?:[ \t]|$)                                                               # a quoted paste: "> "
    | \*{2,}(?=\([A-Za-z])                                                     # markdown's "****(EngineCore…"
    | kserve-container[ ](?=\(|\[rank)                                           # KServe's container name
    | (?P<rfc>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)(?:[ \t]+(?=(?:TRACE|DEBUG|INFO|WARN|ERROR)[ ])|[ \t])  # docker logs -t
    | \[(?P<brk>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\][ \t]+  # CI/app
    | (?P<jd>(?:[A-Z][a-z]{2}|1?\d月)[ ][ \d]\d[ ]\d\d:\d\d:\d\d)[ ]\S+[ ][^\s:\[]+(?:\[\d+\])?:[ ]  # journald
    | [A-Za-z0-9][\w.-]*?[-_]\d+[ \t]+\|[ \t]?                                    # compose svc-1 |
    | [A-Za-z][\w.]*(?:[-_][\w.]+)+[ \t]+\|[ ]                                  # compose container_name |
    | [A-Za-z][\w.]*[ \t]+\|[ ](?=\([A-Za-z][\w-]*[ ,][^)]*pid=\d+\)|(?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ ]\d\d-\d\d[ ])  # compose "vllm  | " (a bare service name) before vLLM's process or logger prefix
    | \d{4}-\d\d-\d\d[ ]\d\d:\d\d:\d\d[ ]\|[ ](?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ ]\|[ ][\w.-]+[ ]\|[ ]  # fastchat
    | \d{4}-\d\d-\d\d[ ]\d\d:\d\d:\d\d(?:[.,]\d+)?[ ](?:DEBUG|INFO|WARNING|ERROR|CRITICAL)[ ]\d+[ ]\[[\w./-]+\.py:\d+\][ ]  # asctime LEVEL pid [f.py:N]
    )""",
    re.X | _A,
)

# vLLM's own process prefix "(Name pid=N)", "(VllmWorker rank=1 pid=N)", "(VllmWorker TP0 pid=N)",
# "(RayWorkerWrapper pid=N, ip=10.0.0.1)", and SkyPilot's task prefix "(task, pid=N)"; nested prefixes are peeled one
# by one.
PROC_RE = re.compile(
    r"\((?:(?P<name>[A-Za-z][\w-]*)(?: (?:rank=(?P<rank>\d+)|(?P<dims>[A-Z]+\d+(?:_[A-Z]+\d+)*)))?,? )?"
    r"pid=(?P<pid>\d+)(?:, ip=[0-9A-Fa-f.:]+)?\)[ \t]*",
    _A,
)

# PyTorch's per-rank prefix on every line a distributed worker prints: "[rank0]: Traceback …",
# "[rank1]:[W1203 …] …"
RANK_RE = re.compile(r"\[rank(?P<rank>\d{1,5})\]:[ \t]?", _A)
# the tensor-parallel index in a worker's process name: "Worker_TP1", "VllmWorker TP0"
_TP_RE = re.compile(r"(?:^|_)TP(?P<tp>\d{1,5})(?:_|$)", _A)


def rank_of(name: str | None, rank: str | None, dims: str | None) -> int | None:
    """The rank a process prefix names: "rank=N", else the TP index of "Worker_TP1" / "TP1"."""
    if rank is not None:
        return int(rank)
    for text in (dims, name):
        if text and "TP" in text:
            m = _TP_RE.search(text)
            if m is not None:
                return int(m.group("tp"))
    return None


# The logger prefix: "INFO 02-28 21:48:18 metrics.py:161] msg" (2023) and
# "INFO 05-12 10:11:12 [loggers.py:116] msg" (2025-02-24 →), "[v1/metrics/loggers.py:236]" (2025-09 →).
_LEVELS = "DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL"
PREFIX_RE = re.compile(
    r"(?P<level>"
    + _LEVELS
    + r") (?P<mo>\d\d)-(?P<dd>\d\d) (?P<hh>\d\d):(?P<mi>\d\d):(?P<ss>\d\d)(?:[.,]\d+)? "
    r"\[?(?P<file>[\w./-]+?):(?P<ln>\d+)\] ?",
    _A,
)
# A second prefix inside a message: two records glued on one physical line.
GLUED_RE = re.compile(
    r"(?:\([A-Za-z][\w-]*(?: [\w=]+)? pid=\d+(?:, ip=[0-9A-Fa-f.:]+)?\) )?(?:"
    + _LEVELS
    + r") \d\d-\d\d \d\d:\d\d:\d\d ",
    _A,
)
# lighteval and similar wrappers move the logger location to the end: "… (scheduler.py:1558)".
_SUFFIX_LOC_RE = re.compile(r"\s\((?P<file>[\w.-]+\.py):(?P<ln>\d+)\)\s*$", _A)
_RAY_REPEAT_RE = re.compile(r"\s*\[repeated (\d+)x across cluster\]\s*$", _A)
# uvicorn's access log: 'INFO:     127.0.0.1:5 - "POST /v1/completions HTTP/1.1" 200 OK'
ACCESS_RE = re.compile(
    r"(?:INFO|WARNING|ERROR):\s+\S+ - \"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+\" (?P<status>\d{3})\b",
    _A,
)

# logger file names that exist in only one engine's code tree (a weak hint, used only while the
# log has said nothing more explicit about the engine)
_V0_FILES = frozenset(
    {
        "model_runner.py",
        "multiproc_worker_utils.py",
        "worker.py",
        "gpu_executor.py",
        "distributed_gpu_executor.py",
        "client.py",
        "engine.py",
    }
)
_V1_FILES = frozenset(
    {
        "gpu_model_runner.py",
        "loggers.py",
        "kv_cache_utils.py",
        "gpu_worker.py",
        "core_client.py",
        "multiproc_executor.py",
    }
)


@dataclass(slots=True)
class Ctx:
    """What one logical line carried besides its message."""

    source: str
    lineno: int
    level: str | None = None
    mo: int = 0
    dd: int = 0
    hms: tuple[str, str, str] | None = None  # as printed; converted only when an event needs it
    outer_ts: datetime | None = None
    process: str | None = None
    pid: int | None = None
    logger_file: str | None = None
    logger_line: int | None = None
    repeat: int = 1
    ts: datetime | None = None  # set directly by JSON records
    year: int = DEFAULT_YEAR
    rank: int | None = None  # "[rank0]:", "(VllmWorker rank=0 pid=N)", "(Worker_TP1 pid=N)"
    bare: bool = False  # no process, rank or logger prefix: a traceback printed raw, or anybody's text


def strip_ansi(seg: str) -> str:
    """The segment without colour codes (the substring checks keep plain lines off the regex)."""
    if (
        "\x1b" in seg
        or "\u2190" in seg
        or "[0m" in seg
        or "[0;" in seg
        or "[1;" in seg
        or "[3" in seg
        or "[9" in seg
    ):
        return ANSI_RE.sub("", seg)
    return seg


def has_level_word(text: str) -> bool:
    """Whether a logger level word followed by a space occurs anywhere (cheap test before a search)."""
    return (
        "INFO " in text
        or "WARNING " in text
        or "ERROR " in text
        or "DEBUG " in text
        or "CRITICAL " in text
        or "WARN " in text
    )


def engine_from_process(name: str) -> str | None:
    """The engine a process name belongs to ("EngineCore_DP0" → "v1"), if the name tells."""
    if name.startswith(("EngineCore", "Worker_", "VllmWorker_")) or name == "VllmWorker":
        return "v1"
    if name == "VllmWorkerProcess":
        return "v0"
    return None


def engine_from_logger_file(name: str | None) -> str | None:
    """The engine a logger file name exists in only ("loggers.py" → "v1"), if any."""
    if name in _V1_FILES:
        return "v1"
    if name in _V0_FILES:
        return "v0"
    return None


def ray_repeat(msg: str) -> tuple[str, int] | None:
    """Ray's "… [repeated 3x across cluster]" → (message without it, 3)."""
    if not msg.endswith("across cluster]"):
        return None
    r = _RAY_REPEAT_RE.search(msg)
    if r is None:
        return None
    return msg[: r.start()], max(1, int(r.group(1)))


def suffix_location(msg: str) -> tuple[str, str, int] | None:
    """A trailing "(scheduler.py:1558)" → (message without it, file, line)."""
    if not msg.endswith(")"):
        return None
    s = _SUFFIX_LOC_RE.search(msg)
    if s is None:
        return None
    return msg[: s.start()], s.group("file"), int(s.group("ln"))


def looks_like_json_record(seg: str) -> bool:
    """A JSON object that may hold a log message (docker json-file, k8s, JSON logging)."""
    return seg[:1] == "{" and ('"message"' in seg or '"log"' in seg or '"msg"' in seg)


def json_object(seg: str) -> dict[str, Any] | None:
    """The JSON object on a line, or None (too long, invalid, or not an object); a record a paste cut inside its last
    string value (a traceback in exc_info, cut mid-line) is closed there: what it holds up to the cut is read."""
    if len(seg) > MAX_JSON:
        return None
    try:
        rec = json.loads(seg)
    except Exception:
        rec = _cut_record(seg.rstrip())
    return rec if isinstance(rec, dict) else None


_CUT_UNICODE_RE = re.compile(r"\\u[0-9a-fA-F]{0,3}$")


def _cut_record(seg: str) -> Any:
    """seg closed after its last string value (less an escape the cut split), or None when that is not JSON."""
    if (len(seg) - len(seg.rstrip("\\"))) % 2:
        seg = seg[:-1]
    try:
        return json.loads(_CUT_UNICODE_RE.sub("", seg) + '"}')
    except Exception:
        return None


def json_record_time(rec: dict[str, Any]) -> datetime | None:
    """The timestamp a JSON record carries under one of the usual keys."""
    t = rec.get("time") or rec.get("timestamp") or rec.get("asctime") or rec.get("@timestamp")
    return iso(t) if isinstance(t, str) else None


def json_logging_ctx(rec: dict[str, Any], ctx: Ctx, rec_ts: datetime | None) -> None:
    """Fill ctx from a JSON-formatted logging record's own fields (its time is the logger's clock)."""
    if rec_ts is not None:
        ctx.ts = rec_ts.replace(tzinfo=None)
    lvl = rec.get("levelname") or rec.get("level")
    if isinstance(lvl, str):
        ctx.level = lvl.upper()
    fn, ln = rec.get("filename"), rec.get("lineno")
    if isinstance(fn, str):
        ctx.logger_file = fn
    if isinstance(ln, int) and not isinstance(ln, bool):
        ctx.logger_line = ln
    pid = rec.get("process")
    if isinstance(pid, int) and not isinstance(pid, bool):
        ctx.pid = pid
    pname = rec.get("vllm_process_name")  # the process-name field of the JSON log format proposed upstream
    if isinstance(pname, str) and pname:
        ctx.process = pname[:100]


def iso(text: str) -> datetime | None:
    """An ISO-8601 timestamp (comma decimals, nanoseconds and "Z" allowed), or None."""
    t = text.strip().replace(",", ".")
    if "." in t:  # fromisoformat takes at most microseconds: cut nanoseconds
        head, _, frac = t.partition(".")
        digits = len(frac) - len(frac.lstrip("0123456789"))
        frac = frac[:digits][:6] + frac[digits:]
        t = head + "." + frac
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(t)
    except ValueError:
        return None


def envelope(ctx: Ctx) -> Envelope:
    """The Envelope of an event read from the line ctx describes."""
    ts = ctx.ts
    if ctx.hms is not None:
        try:
            ts = datetime(ctx.year, ctx.mo, ctx.dd, int(ctx.hms[0]), int(ctx.hms[1]), int(ctx.hms[2]))
        except ValueError:
            ts = None
    elif ts is None and ctx.outer_ts is not None:
        ts = ctx.outer_ts.replace(tzinfo=None)
    return Envelope(
        source=ctx.source,
        lineno=ctx.lineno,
        ts=ts,
        outer_ts=ctx.outer_ts,
        level=ctx.level,
        process=ctx.process,
        pid=ctx.pid,
        logger_file=ctx.logger_file,
        logger_line=ctx.logger_line,
        repeat=ctx.repeat,
    )


class YearClock:
    """The year of vLLM's "MM-DD HH:MM:SS" stamps, inferred along one stream.

    Starts at the caller's year (or DEFAULT_YEAR); an outer wrapper's timestamp, when present,
    knows the year; otherwise the month sequence tells when New Year passed."""

    def __init__(self, year: int | None) -> None:
        self.year = year if year is not None else DEFAULT_YEAR
        self._given = year is not None
        self._last_mo = 0

    def stamp(self, ctx: Ctx) -> None:
        """Set ctx.year for the stamp in ctx (ctx.mo, ctx.dd, ctx.hms, ctx.outer_ts).

        A month that goes backwards by more than half a year is January after December (roll
        forward); one that jumps forward that much is a late line from the previous year
        (interleaved processes) and gets the previous year."""
        mo = ctx.mo
        outer = ctx.outer_ts
        if mo == self._last_mo and outer is None:
            ctx.year = self.year
            return
        if outer is not None:
            # the wrapper knows the year; vLLM's clock may be hours off (local vs UTC)
            oy = outer.year
            ctx.year = min((oy - 1, oy, oy + 1), key=lambda y: abs(_delta_seconds(y, ctx, outer)))
            if self._given is False or ctx.year > self.year:
                self.year, self._given, self._last_mo = ctx.year, True, mo
            return
        last = self._last_mo
        ctx.year = self.year
        if last and mo != last:
            if last - mo > 6:
                self.year += 1
                ctx.year = self.year
            elif mo - last > 6:
                ctx.year = self.year - 1  # an out-of-order line from before New Year
                return
        self._last_mo = mo

    def journal_ts(self, text: str) -> datetime | None:
        """journald's "Mar  5 10:00:00" (or a CJK locale's "6月 10 16:45:05") in the current year."""
        text = re.sub(
            r"^(1?\d)月",
            lambda m: "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split()[int(m[1]) - 1],
            text,
        )
        try:
            return datetime.strptime(f"{self.year} {text}", "%Y %b %d %H:%M:%S")
        except ValueError:
            return None


def _delta_seconds(year: int, ctx: Ctx, outer: datetime) -> float:
    """Seconds from the outer timestamp to ctx's stamp read in the given year (inf if no such date)."""
    try:
        h = ctx.hms or ("0", "0", "0")
        inner = datetime(year, ctx.mo, ctx.dd, int(h[0]), int(h[1]), int(h[2]))
    except ValueError:
        return float("inf")
    o = outer.astimezone(UTC).replace(tzinfo=None) if outer.tzinfo else outer
    return (inner - o).total_seconds()
