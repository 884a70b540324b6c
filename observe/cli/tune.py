"""`observe tune`: find a managed vLLM's best flags by diagnosis (observe.tune)."""

from __future__ import annotations

from pathlib import Path

import typer

from observe.cli.common import TextOrJson, config_option, passes, user_errors


@user_errors
@passes("observe.commands.tune")
def tune(
    ctx: typer.Context,
    out: Path = typer.Option(Path("observe-tune"), "--out"),
    run_dir: Path | None = typer.Option(None, "--run-dir"),
    objective: str = typer.Option("throughput", "--objective"),
    trials: int = typer.Option(6, "--trials"),
    time_budget: float = typer.Option(1800.0, "--time-budget"),
    repeats: int = typer.Option(2, "--repeats"),
    max_repeats: int = typer.Option(6, "--max-repeats"),
    dataset: str = typer.Option("random", "--dataset"),
    num_prompts: int = typer.Option(60, "--num-prompts"),
    input_len: int = typer.Option(128, "--input-len"),
    output_len: int = typer.Option(64, "--output-len"),
    max_concurrency: int = typer.Option(16, "--max-concurrency"),
    request_rate: str = typer.Option("inf", "--request-rate"),
    seed: int = typer.Option(0, "--seed"),
    warmups: int = typer.Option(8, "--warmups"),
    bench_arg: list[str] = typer.Option([], "--bench-arg"),
    workload_from: str | None = typer.Option(None, "--workload-from", metavar="DIR|URL"),
    traffic_window: float = typer.Option(60.0, "--traffic-window"),
    config: Path | None = config_option(),
    quiet: bool = typer.Option(True, "--quiet/--echo"),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format"),
) -> None:
    """Tune a vLLM's flags by diagnosis (`observe tune [OPTIONS] -- vllm serve MODEL [FLAGS]`, or `--run-dir DIR`)."""
