"""`observe config show`: every threshold and SLO with its value and note."""

from __future__ import annotations

from pathlib import Path

import typer

from observe.cli.common import config_option, user_errors

config_app = typer.Typer(help="The thresholds and SLOs observe judges a server by.", no_args_is_help=True)


@config_app.command("show")
@user_errors
def config_show(
    config: Path | None = config_option(),
    fmt: str = typer.Option("yaml", "--format"),
) -> None:
    """Print every threshold and SLO with its value and a note on when to change it."""
    from observe import report, settingsfile

    typer.echo(report.settings_text(settingsfile.load(config), fmt), nl=False)
