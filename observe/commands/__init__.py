"""What a command does once observe/cli/ has parsed its options, where it composes several edges
(the sidecar with the Kubernetes API, the settings file and the token file) and prints.

A command here takes its options as keyword-only parameters named and typed as the CLI's
(observe.cli.common.passes checks the two agree) and returns the exit code; nothing here knows
typer."""

from __future__ import annotations

import sys
from enum import Enum
from pathlib import Path

from observe.errors import ObserveError


def emit(text: str, output: Path | None = None) -> None:
    """`text` on stdout (ending in a newline), or into the file `output`."""
    if output is None:
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as e:
        raise ObserveError(f"cannot write {output}: {e.strerror or e}")


def say(line: str) -> None:
    """One line for the operator, on stderr."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


# the choices of --format and --fail-on


class Fmt(str, Enum):
    text, json, markdown, html = "text", "json", "markdown", "html"


class TextOrJson(str, Enum):
    text, json = "text", "json"


class FailOn(str, Enum):
    info, warning, critical = "info", "warning", "critical"


class AlertFormat(str, Enum):
    prometheus, prometheus_operator = "prometheus", "prometheus-operator"
