"""Benchmark: the least `observe diagnose` can cost on a log, with its parsing taken as free.

    python bench/floor_bench.py [--size-mb 500] [--which restarts|busy] [--repeat 3]

Builds the log as `diagnose_bench.py` does (bench/out/, deleted afterwards) and measures, each the
fastest of --repeat runs, against `grep -c throughput` on the same file:

* **read + classify**: the file read in blocks and every block classified (``scan.Classifier.runs``),
  nothing fed;
* **events**: each event the log yields built once more from its fields (its ``Envelope`` and the
  event, through their constructors, as the parser builds them);
* **consume**: those events through an ``InstanceBuilder`` and its ``finish`` (the summary, the
  timeline, the detectors);
* **start-up**: `observe diagnose` of a 1 kB log with stats lines, in a fresh process (imports, the
  command line, a report).

The events are those of the first 20 MB, replayed as many times as the log holds that cut (both
inputs are a cut repeated, so the count is the log's own). Their sum is a floor: no parser, however
fast, makes the whole command cheaper than that, because the events and their consumer are Python
objects. Prints one row; nothing is recorded.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from diagnose_bench import SMALL, busy, observe, restarts, timed  # noqa: E402

from observe.diagnosis import InstanceBuilder  # noqa: E402
from observe.model import Envelope  # noqa: E402
from observe.parse import Parser, scan  # noqa: E402

CUT = 20 * 10**6


def fastest(f, repeat: int) -> float:
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t0)
    return best


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=500)
    ap.add_argument("--which", choices=["restarts", "busy"], default="restarts")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args()
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    make = restarts if a.which == "restarts" else busy
    log, cut = out / f"floor-{a.which}.log", out / f"floor-{a.which}-cut.log"
    make(log, a.size_mb * 10**6)
    make(cut, CUT)
    try:
        subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL)  # page cache warm for both
        grep = min(timed(["grep", "-c", "throughput", str(log)])[0] for _ in range(a.repeat))

        def read_classify() -> None:
            c = scan.Classifier()
            with open(log, "rb", buffering=0) as f:
                for buf, end, _ in scan._plain_blocks(f):
                    if end > 0:
                        c.runs(buf, 0, end)

        t_read = fastest(read_classify, a.repeat)

        events: list = []
        accessed = [0]
        p = Parser(year=2026)
        sc = scan.Scanner(str(cut), p, events.append, lambda n: accessed.__setitem__(0, accessed[0] + n))
        sc.read(cut)
        events.extend(p.flush())
        times = max(1, round(log.stat().st_size / cut.stat().st_size))
        recipes = [
            (type(e), {f.name: getattr(e, f.name) for f in dataclasses.fields(e) if f.name != "env"}, e.env)
            for e in events
        ]
        env_fields = [f.name for f in dataclasses.fields(Envelope)]
        env_kw = [{n: getattr(env, n) for n in env_fields} for _, _, env in recipes]

        def build() -> None:
            for _ in range(times):
                for (cls, kw, _), ekw in zip(recipes, env_kw, strict=True):
                    cls(env=Envelope(**ekw), **kw)

        t_events = fastest(build, a.repeat)

        def consume() -> None:
            b = InstanceBuilder("floor")
            for _ in range(times):
                b.count_access(accessed[0])
                for e in events:
                    b.add(e)
            b.finish()

        t_consume = fastest(consume, a.repeat)
        env = dict(os.environ, PYTHONPATH=str(ROOT))
        t_start = min(timed(observe(SMALL), env)[0] for _ in range(a.repeat))
        floor = t_read + t_events + t_consume + t_start
        n = len(events) * times
        print(
            f"| {a.which}.log | {log.stat().st_size / 1e6:.0f} MB | grep -c {grep:.2f} s | "
            f"read + classify {t_read:.2f} s | {n:,} events built {t_events:.2f} s | "
            f"consumed {t_consume:.2f} s | start-up {t_start:.2f} s | "
            f"floor {floor:.2f} s = {floor / grep:.1f}x grep |"
        )
    finally:
        log.unlink(missing_ok=True)
        cut.unlink(missing_ok=True)


if __name__ == "__main__":
    main()
