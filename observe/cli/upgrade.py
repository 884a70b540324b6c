"""`observe upgrade`: what moving a deployment to another vLLM release changes (observe.manage.upgrade)."""

from pathlib import Path

import typer

from observe.cli.common import emit, user_errors


@user_errors
def upgrade(
    ctx: typer.Context,
    to: str = typer.Option(..., "--to"),
    log: Path | None = typer.Option(None, "--log"),
    url: str | None = typer.Option(None, "--url"),
    from_version: str | None = typer.Option(None, "--from"),
    device: str = typer.Option("GPU", "--device"),
    fmt: str = typer.Option("text", "--format"),
) -> None:
    """What changes for this deployment on another vLLM release; a command goes after `--`."""
    from observe import report
    from observe.manage.upgrade import run

    u = run(to=to, log=log, command=ctx.args, url=url, from_version=from_version, device=device)
    emit(report.upgrade_json(u) if fmt == "json" else report.upgrade_text(u))
