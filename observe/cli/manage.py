"""`observe run`, `recommend`, `compare`: the vLLM observe launches and supervises, advice for one it
did not launch, before/after (observe.manage; proposals printed by report.proposal)."""

from __future__ import annotations

import sys
from pathlib import Path

import typer

from observe.cli.common import TextOrJson, emit, user_errors


@user_errors
def run_cmd(
    ctx: typer.Context,
    run_dir: Path = typer.Option(Path("observe-runs"), "--run-dir"),
    sidecar: bool = typer.Option(True, "--sidecar/--no-sidecar"),
    listen: str = typer.Option("127.0.0.1:9400", "--listen"),
    snapshot_every: float = typer.Option(30.0, "--snapshot-every"),
    recommend_after: float = typer.Option(0.0, "--recommend-after"),
    apply_: bool = typer.Option(False, "--apply"),
    yes: bool = typer.Option(False, "--yes", "-y"),
    max_changes: int = typer.Option(1, "--max-changes"),
    quiet: bool = typer.Option(False, "--quiet"),
    startup_timeout: float = typer.Option(900.0, "--startup-timeout"),
    log_max_bytes: int = typer.Option(10 * 2**20, "--log-max-bytes"),
    log_backups: int = typer.Option(5, "--log-backups"),
) -> None:
    """Launch vLLM (`observe run [OPTIONS] -- vllm serve MODEL [FLAGS]`), log it, watch it, advise, apply on request."""
    from observe import report
    from observe.manage.runcmd import run_command
    from observe.tune import managed

    run_command(
        ctx.args,
        run_dir,
        sidecar=sidecar,
        listen=listen,
        echo=None if quiet else sys.stdout,
        log_max_bytes=log_max_bytes,
        log_backups=log_backups,
        startup_timeout=startup_timeout,
        notify=lambda m: typer.echo(f"observe: {m}", err=True),
        show=lambda prop: typer.echo(
            report.proposal_text(prop, title=f"diagnosis of {prop.folder}"), nl=False
        ),
        confirm=lambda: yes or typer.confirm("Restart vLLM with the new command?", default=False),
        apply=apply_,
        tune_server=managed.server,
        snapshot_every=snapshot_every,
        recommend_after=recommend_after,
        max_changes=max_changes,
    )


@user_errors
def recommend(
    vllm_url: str = typer.Option(..., "--vllm-url"),
    log: list[str] = typer.Option([], "--log"),
    interval: float = typer.Option(10.0, "--interval"),
    vllm_python: str | None = typer.Option(None, "--vllm-python"),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format"),
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
    before: Path = typer.Argument(..., metavar="BEFORE"),
    after: Path = typer.Argument(..., metavar="AFTER"),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format"),
) -> None:
    """Before/after: throughput, TTFT/ITL quantiles, preemptions, KV usage, and whether the change helped."""
    from observe import manage, report

    res = manage.compare_runs(before, after)
    emit(report.compare_json(res) if fmt == TextOrJson.json else report.compare_text(res))
