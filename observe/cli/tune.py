"""`observe tune`: find a managed vLLM's best flags by diagnosis (observe.tune)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from observe.cli.common import TextOrJson, config_option, emit, user_errors


# fmt: off
@user_errors
def tune(
    ctx: typer.Context,
    out: Path = typer.Option(Path("observe-tune"), "--out", help="DIR/history.jsonl, DIR/report.*, DIR/launches/NNN/."),
    run_dir: Path | None = typer.Option(None, "--run-dir", help="Tune the vLLM `observe run --run-dir DIR` manages (no command); its record: DIR/tune/."),
    objective: str = typer.Option("throughput", "--objective", help="throughput (output tokens/s) or goodput (requests/s meeting the SLOs of --config)."),
    trials: int = typer.Option(6, "--trials", help="Configurations at most, the starting one included."),
    time_budget: float = typer.Option(1800.0, "--time-budget", help="Start no trial after S seconds."),
    repeats: int = typer.Option(2, "--repeats", help="Benchmark runs per configuration (at least 2: the spread)."),
    max_repeats: int = typer.Option(6, "--max-repeats", help="Runs of a change at most while the noise leaves it undecided (the start and it relaunched in turn, A B B A)."),
    dataset: str = typer.Option("random", "--dataset", help="vllm bench serve --dataset-name."),
    num_prompts: int = typer.Option(60, "--num-prompts", help="Requests per benchmark run."),
    input_len: int = typer.Option(128, "--input-len", help="--random-input-len"),
    output_len: int = typer.Option(64, "--output-len", help="--random-output-len"),
    max_concurrency: int = typer.Option(16, "--max-concurrency", help="0: no limit (use --request-rate)."),
    request_rate: str = typer.Option("inf", "--request-rate", help="Requests per second (inf: all at once)."),
    seed: int = typer.Option(0, "--seed", help="The client's random seed."),
    warmups: int = typer.Option(8, "--warmups", help="Requests sent before each measured run (the client's --num-warmups)."),
    bench_arg: list[str] = typer.Option([], "--bench-arg", help="One more vllm bench serve word (repeatable)."),
    workload_from: str | None = typer.Option(None, "--workload-from", metavar="DIR|URL", help="Replay a vLLM's own traffic: a run folder (metrics-K.txt, vllm.log) or a live URL; given options win (docs/tune.md)."),
    traffic_window: float = typer.Option(60.0, "--traffic-window", help="With --workload-from URL: seconds between its two /metrics reads."),
    config: Path | None = config_option(),
    quiet: bool = typer.Option(True, "--quiet/--echo", help="Echo vLLM's output (it always goes to the log)."),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format", help="text or json."),
) -> None:
    """Tune a vLLM's flags by diagnosis (`observe tune [OPTIONS] -- vllm serve MODEL [FLAGS]`, or `--run-dir DIR`)."""
    from observe import settingsfile, tune

    opts = {k: v for k, v in locals().items() if k not in ("ctx", "out", "config", "quiet", "fmt", "settingsfile", "tune")}
    opts["given"] = {k for k in [*opts, "out", "quiet"] if getattr(ctx.get_parameter_source(k), "name", "") in ("COMMANDLINE", "ENVIRONMENT")}
    emit(tune.run_options(ctx.args, out, settings=settingsfile.load(config), fmt=fmt.value, notify=lambda m: typer.echo(f"observe: {m}", err=True), echo=None if quiet else sys.stdout, **opts))
# fmt: on
