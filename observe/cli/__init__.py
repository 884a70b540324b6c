"""The `observe` command line. typer lives here and nowhere else; nothing below this package prints.

Each command is a thin shell: parse options, call one function of the core or an edge module,
print or write what it returns. ObserveError becomes one line on stderr and a non-zero exit.
One module per command group, its commands registered on `app` below (a new command: a module
beside them and its line here).
"""

from __future__ import annotations

import functools
from typing import Any

import typer
import typer.core

from observe import __version__, errors
from observe.cli import capacity, config, diagnose, generate, manage, sidecar, top

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
app.command()(diagnose.diagnose)
app.command()(capacity.capacity)
app.command()(sidecar.sidecar)
app.command()(top.top)
app.add_typer(generate.generate_app, name="generate")
app.add_typer(config.config_app, name="config")
app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})(
    manage.run_cmd
)
app.command()(manage.recommend)
app.command()(manage.compare)


# ---------------------------------------------------------------- how --help reads
ENVVAR_PREFIX = "OBSERVE"  # every option OPT of command CMD is also read from OBSERVE_CMD_OPT


def with_envvars(cmd: Any, path: tuple[str, ...] = ()) -> None:
    """Give every option of every command its OBSERVE_<COMMAND>_<OPTION> variable (shown in --help),
    a metavar named after it, and a usage line without typer's braces."""
    _no_bool_placeholder(cmd)
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            with_envvars(sub, (*path, name))
        return
    for p in cmd.params:
        if isinstance(p, typer.core.TyperArgument):  # usage line: PATH..., not typer's {PATH...}
            p._usage_display_name = functools.partial(_usage_name, p)  # type: ignore[method-assign]
        is_opt = isinstance(p, typer.core.TyperOption)
        if is_opt and p.metavar is None and not p.is_flag and "|" not in _shown_type(p):
            p.metavar = p.name.upper().rstrip("_")  # --log LOG, not --log <list[str]>
        if is_opt and not p.is_eager and p.name and not p.hidden:
            long = max(p.opts, key=len).lstrip("-")  # as the user types it: --tp → tensor-parallel-size
            p.envvar = "_".join([ENVVAR_PREFIX, *path, long]).upper().replace("-", "_")
            p.show_envvar = True


def _no_bool_placeholder(cmd: Any) -> None:
    """A switch takes no value: no `<bool>` placeholder beside it in --help (-h/--help included)."""
    make = cmd.get_help_option

    def get_help_option(ctx: Any) -> Any:
        opt = make(ctx)
        if opt is not None:
            opt.metavar = ""
        return opt

    cmd.get_help_option = get_help_option
    for p in cmd.params:  # the group's own switches (--version, --install-completion) as well
        if isinstance(p, typer.core.TyperOption) and p.is_flag:
            p.metavar = ""


def _shown_type(p: Any) -> str:
    """What typer would show as the value placeholder (`<text|json>` for a choice)."""
    try:
        return str(p.display_type(None) or "")
    except Exception:
        return ""


def _usage_name(p: Any) -> str:
    name = p.metavar or p.name.upper()
    if p.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if p.required else f"[{name}]"


def command() -> Any:
    """The click command behind `observe`, with the environment variables wired."""
    cmd = typer.main.get_command(app)
    with_envvars(cmd)
    return cmd


def main() -> None:
    command()(prog_name="observe")
