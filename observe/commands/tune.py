"""`observe tune`: find a managed vLLM's best flags by diagnosis (observe.tune), its report printed."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from observe import settingsfile
from observe import tune as tune_mod
from observe.commands import TextOrJson, emit, say


def tune(
    *,
    ctx: Any,
    out: Path,
    run_dir: Path | None,
    objective: str,
    trials: int,
    time_budget: float,
    repeats: int,
    max_repeats: int,
    dataset: str,
    num_prompts: int,
    input_len: int,
    output_len: int,
    max_concurrency: int,
    request_rate: str,
    seed: int,
    warmups: int,
    bench_arg: list[str],
    workload_from: str | None,
    traffic_window: float,
    config: Path | None,
    quiet: bool,
    fmt: TextOrJson,
) -> int:
    """`ctx`: the command's click context (the vLLM command after `--`, and which options were given
    on the command line or in OBSERVE_TUNE_*, which a replayed workload's figures do not override)."""
    given = {
        k
        for k in ctx.params
        if getattr(ctx.get_parameter_source(k), "name", "") in ("COMMANDLINE", "ENVIRONMENT")
    }
    text = tune_mod.run_options(
        ctx.args,
        out,
        settings=settingsfile.load(config),
        fmt=fmt.value,
        notify=lambda m: say(f"observe: {m}"),
        echo=None if quiet else sys.stdout,
        objective=objective,
        trials=trials,
        time_budget=time_budget,
        repeats=repeats,
        max_repeats=max_repeats,
        run_dir=run_dir,
        given=given,
        dataset=dataset,
        num_prompts=num_prompts,
        input_len=input_len,
        output_len=output_len,
        max_concurrency=max_concurrency,
        request_rate=request_rate,
        seed=seed,
        warmups=warmups,
        bench_arg=bench_arg,
        workload_from=workload_from,
        traffic_window=traffic_window,
    )
    emit(text)
    return 0
