"""What the commands share: one line on stderr for a user's error, the --config option, a command's
options passed by name to the function below the CLI that runs it (`passes`)."""

from __future__ import annotations

import functools
import importlib
import inspect
from collections.abc import Callable
from typing import Any

import typer

from observe import errors
from observe.commands import AlertFormat, FailOn, Fmt, TextOrJson, emit
from observe.errors import ObserveError

__all__ = [
    "AlertFormat",
    "FailOn",
    "Fmt",
    "TextOrJson",
    "config_option",
    "emit",
    "fail",
    "passes",
    "user_errors",
]

CONFIG_HELP = "YAML file of settings (thresholds, SLOs, alert knobs); `observe config show` lists them."


def config_option() -> Any:  # --config FILE, as every command that judges by settings takes it
    return typer.Option(None, "--config", help=CONFIG_HELP)


def fail(msg: str, code: int = errors.EXIT_USAGE) -> typer.Exit:
    typer.echo(f"observe: error: {msg}", err=True)
    return typer.Exit(code)


def user_errors(fn: Callable) -> Callable:
    """Turn ObserveError (and OSError from user paths) into one line on stderr, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ObserveError as e:
            raise fail(str(e), e.exit_code)
        except KeyboardInterrupt:
            raise fail("interrupted", errors.EXIT_INTERRUPTED)
        except BrokenPipeError:
            raise typer.Exit(0)

    return wrapper


BOUND: list[tuple[Callable[..., None], str]] = []  # every command `passes` binds (tests/test_cli_passes.py)


def passes(module: str) -> Callable[[Callable[..., None]], Callable[..., None]]:
    """The command's options go, each by its name, to the function of the same name in `module`
    below the CLI (imported when the command runs), whose keyword-only parameters are the same names
    with the same types (`target` checks; the click context, `ctx`, goes as it is); the code it
    returns is the exit code."""

    def bind(fn: Callable[..., None]) -> Callable[..., None]:
        BOUND.append((fn, module))

        @functools.wraps(fn)
        def command(**options: Any) -> None:
            code = target(fn, module)(**options)
            if code:
                raise typer.Exit(code)

        return command

    return bind


def target(fn: Callable[..., None], module: str) -> Callable[..., int]:
    """The function `fn`'s options go to; TypeError when the two disagree on a name or a type."""
    to = getattr(importlib.import_module(module), fn.__name__)
    ours, theirs = inspect.signature(fn).parameters, inspect.signature(to).parameters
    odd = [
        n
        for n in {*ours, *theirs}
        if n not in ours or n not in theirs or theirs[n].kind != theirs[n].KEYWORD_ONLY
    ]
    odd += [n for n in ours if n != "ctx" and n in theirs and ours[n].annotation != theirs[n].annotation]
    if odd:
        raise TypeError(f"{fn.__name__} and {module}.{fn.__name__} disagree on {sorted(odd)}")
    return to
