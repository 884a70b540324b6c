"""The `observe` command line. typer lives here and nowhere else; nothing below this package prints.

Each command is a thin shell: parse options, call one function of the core or an edge module,
print or write what it returns. ObserveError becomes one line on stderr and a non-zero exit.
One module per command group, each with `register(app)`, registered below in the order
`observe --help` lists them (commands first, then the groups with subcommands).
"""

from __future__ import annotations

from typing import Any

import typer

from observe import __version__, errors
from observe.cli import capacity, config, diagnose, generate, manage, sidecar, top
from observe.cli.helpstyle import with_envvars

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


for _group in (diagnose, capacity, sidecar, top, generate, config, manage):
    _group.register(app)


def command() -> Any:
    """The click command behind `observe`, with the environment variables wired."""
    cmd = typer.main.get_command(app)
    with_envvars(cmd)
    return cmd


def main() -> None:
    command()(prog_name="observe")
