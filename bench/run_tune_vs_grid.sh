#!/bin/sh
# Runs bench/tune_vs_grid.py in chunks under the real-vLLM lock, releasing it between chunks
# (another session may take it then), until every workload is done or UNTIL (UTC, HH:MM) passes;
# nothing is started that would not end by UNTIL (--stop-at).
# usage: sh bench/run_tune_vs_grid.sh [UNTIL] [-- bench args...]
UNTIL=${1:-23:59}
shift 2>/dev/null
[ "$1" = "--" ] && shift
PY=${PY:-python}
while [ "$(date -u +%H:%M)" \< "$UNTIL" ]; do
    flock /tmp/realvllm.lock "$PY" bench/tune_vs_grid.py --chunk-s 840 --stop-at "$UNTIL" "$@"
    rc=$?
    [ $rc -eq 0 ] && exit 0
    [ $rc -ne 3 ] && exit $rc
    sleep 10
done
