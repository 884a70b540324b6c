"""`observe config show`: every threshold and SLO with its value and note."""

from __future__ import annotations

from pathlib import Path

import typer

from observe.cli.common import config_option, user_errors
from observe.errors import ObserveError

config_app = typer.Typer(help="The thresholds and SLOs observe judges a server by.", no_args_is_help=True)


# fmt: off
@config_app.command("show")
@user_errors
def config_show(
    config: Path | None = config_option(),
    fmt: str = typer.Option("yaml", "--format", help="yaml (commented, what --config reads) or json."),
) -> None:
    """Print every threshold and SLO with its value and a note on when to change it."""
    from observe import report, settingsfile
    from observe.settings import to_yaml

    s = settingsfile.load(config)
    if fmt == "json":
        typer.echo(report.settings_json(s))
    elif fmt == "yaml":
        typer.echo(to_yaml(s), nl=False)
    else:
        raise ObserveError(f"--format must be yaml or json, not {fmt!r}")
# fmt: on


def register(app: typer.Typer) -> None:
    app.add_typer(config_app, name="config")
