"""Edge: how `observe --help` reads — every option's OBSERVE_<COMMAND>_<OPTION> variable shown beside
it, a metavar named after the option, switches without a value placeholder, usage lines without
typer's braces. It works on the click command the CLI builds (duck-typed: typer stays in observe.cli)."""

from __future__ import annotations

import functools
from typing import Any

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
        if p.param_type_name == "argument":  # usage line: PATH..., not typer's {PATH...}
            p._usage_display_name = functools.partial(_usage_name, p)  # type: ignore[method-assign]
        is_opt = p.param_type_name == "option"
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
        if p.param_type_name == "option" and p.is_flag:
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
