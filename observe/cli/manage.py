"""`observe run`, `recommend`, `compare`: the vLLM observe launches and supervises, advice for one it
did not launch, before/after (observe.manage; proposals printed by report.proposal)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from observe.cli.common import TextOrJson, emit, user_errors


# fmt: off
@user_errors
def run_cmd(
    ctx: typer.Context,
    run_dir: Path = typer.Option(Path("observe-runs"), "--run-dir", help="Each launch gets DIR/NNN/ (vllm.log, metrics-K.txt); DIR/history.jsonl records every step."),
    sidecar: bool = typer.Option(True, "--sidecar/--no-sidecar", help="Run the sidecar against the launched vLLM."),
    listen: str = typer.Option("127.0.0.1:9400", "--listen", help="The sidecar's address."),
    snapshot_every: float = typer.Option(30.0, "--snapshot-every", help="Save /metrics every S seconds (0: never)."),
    recommend_after: float = typer.Option(0.0, "--recommend-after", help="Diagnose each launch after S seconds and print the recommended flags (0: never; SIGUSR1 asks at any time)."),
    apply_: bool = typer.Option(False, "--apply", help="Offer to restart vLLM with the recommended flags (asks first)."),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --apply: restart without asking."),
    max_changes: int = typer.Option(1, "--max-changes", help="Apply at most N changes in this run."),
    quiet: bool = typer.Option(False, "--quiet", help="Do not echo vLLM's output (it still goes to the log)."),
    startup_timeout: float = typer.Option(900.0, "--startup-timeout", help="Seconds to wait for /health."),
    log_max_bytes: int = typer.Option(10 * 2**20, "--log-max-bytes", help="Rotate vllm.log at this size."),
    log_backups: int = typer.Option(5, "--log-backups", help="Rotated parts to keep."),
) -> None:
    """Launch vLLM (`observe run [OPTIONS] -- vllm serve MODEL [FLAGS]`), log it, watch it, advise, apply on request."""
    from observe import report
    from observe.manage.runcmd import run_command
    from observe.tune import managed

    run_command(ctx.args, run_dir, sidecar=sidecar, listen=listen, echo=None if quiet else sys.stdout, log_max_bytes=log_max_bytes, log_backups=log_backups, startup_timeout=startup_timeout,
                notify=lambda m: typer.echo(f"observe: {m}", err=True), show=lambda prop: typer.echo(report.proposal_text(prop, title=f"diagnosis of {prop.folder}"), nl=False),
                confirm=lambda: yes or typer.confirm("Restart vLLM with the new command?", default=False), apply=apply_, tune_server=managed.server,
                snapshot_every=snapshot_every, recommend_after=recommend_after, max_changes=max_changes)


@user_errors
def recommend(
    vllm_url: str = typer.Option(..., "--vllm-url", help="Base URL of a running vLLM (http://127.0.0.1:8000)."),
    log: list[str] = typer.Option([], "--log", help="Glob(s) of that vLLM's log files."),
    interval: float = typer.Option(10.0, "--interval", help="Seconds between the two /metrics reads (rates need two)."),
    vllm_python: str | None = typer.Option(None, "--vllm-python", help="Interpreter of the installed vLLM, to validate the flags against it."),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format", help="text or json."),
) -> None:
    """Recommend flag changes for a vLLM that observe did not launch: the diff and the new command."""
    from observe import manage, report

    prop = manage.propose_for_url(vllm_url, log, interval=interval, vllm_python=vllm_python)
    if fmt == TextOrJson.json:
        return emit(report.recommend_json(prop, vllm_url))
    typer.echo(report.proposal_text(prop), nl=False)
    if prop.flags is None:
        typer.echo("(vLLM is not importable here: flags not validated; use --vllm-python)", err=True)


@user_errors
def compare(
    before: Path = typer.Argument(..., metavar="BEFORE", help="Before the change: a run folder (log + snapshots), or a saved diagnosis JSON (`diagnose --format json`, or the sidecar's /api/diagnosis: one window of its history)."),
    after: Path = typer.Argument(..., metavar="AFTER", help="After the change: a folder or a diagnosis JSON, as BEFORE."),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format", help="text or json."),
) -> None:
    """Before/after: throughput, TTFT/ITL quantiles, preemptions, KV usage, and whether the change helped."""
    from observe import manage, report

    res = manage.compare_runs(before, after)
    emit(report.compare_json(res) if fmt == TextOrJson.json else report.compare_text(res))
# fmt: on
