"""The `observe` command line. typer lives here and nowhere else.

Each command is a thin shell: its options, one per line (what each is for: observe.helpstyle.HELP),
then one call of the core, an edge module or observe.commands (`passes`: the options by name), and
what it returns printed. ObserveError becomes one line on stderr and a non-zero exit. One module
per command group, its commands registered on `app` below (a new command: a module beside them and
its line here).
"""

from __future__ import annotations

from typing import Any

import typer
import typer.core

from observe import __version__, errors, helpstyle
from observe.cli import capacity, config, diagnose, generate, manage, sidecar, top, tune, upgrade

app = typer.Typer(
    name="observe",
    help=f"Observability stack and tuning advisor for vLLM servers (observe {__version__}).",
    epilog="Every option can also be set as OBSERVE_<COMMAND>_<OPTION> (e.g. OBSERVE_SIDECAR_VLLM_URL). "
    "Exit codes: " + "; ".join(f"{c} {short}" for c, _, short, _ in errors.EXIT_CODES) + ".",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"observe {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Observability stack and tuning advisor for vLLM servers."""


# one module per command group; --help lists the commands in this order, then the groups
_EXTRA = {"allow_extra_args": True, "ignore_unknown_options": True}  # a vLLM command after the options
app.command()(diagnose.diagnose)
app.command()(capacity.capacity)
app.command()(sidecar.sidecar)
app.command()(top.top)
app.add_typer(generate.generate_app, name="generate")
app.add_typer(config.config_app, name="config")
app.command("run", context_settings=_EXTRA)(manage.run_cmd)
app.command()(manage.recommend)
app.command()(manage.compare)
app.command("tune", context_settings=_EXTRA)(tune.tune)
app.command("upgrade", context_settings=_EXTRA)(upgrade.upgrade)


def command() -> Any:
    """The click command behind `observe`, with the environment variables wired."""
    cmd = typer.main.get_command(app)
    helpstyle.with_envvars(cmd)
    return cmd


def main() -> None:
    command()(prog_name="observe")
