"""What the commands share: one line on stderr for a user's error, output to stdout or a file,
the --config option, the small choice types."""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Any

import typer

from observe import errors
from observe.errors import ObserveError

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


def emit(text: str, output: Path | None = None) -> None:
    """`text` on stdout (ending in a newline), or into the file `output`."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ObserveError(f"cannot write {output}: {e.strerror or e}")


# the choices of --format and --fail-on
Fmt = Enum("Fmt", {v: v for v in ("text", "json", "markdown", "html")}, type=str)  # type: ignore[misc]
TextOrJson = Enum("TextOrJson", {v: v for v in ("text", "json")}, type=str)  # type: ignore[misc]
FailOn = Enum("FailOn", {v: v for v in ("info", "warning", "critical")}, type=str)  # type: ignore[misc]
