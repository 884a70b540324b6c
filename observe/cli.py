"""The `observe` command line. typer lives here and nowhere else; nothing below this module prints.

Each command is a thin shell: parse options, call one function of the core or an edge module,
print or write what it returns. ObserveError becomes one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import functools
import sys
from enum import Enum
from pathlib import Path
from typing import Callable, List, Optional

import typer

from observe.errors import ObserveError

app = typer.Typer(
    name="observe",
    help="Observability stack and tuning advisor for vLLM servers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
generate_app = typer.Typer(help="Write dashboards/*.json or alerts/*.yml from the generators.", no_args_is_help=True)
app.add_typer(generate_app, name="generate")


def _err(msg: str, code: int = 2) -> "typer.Exit":
    typer.echo(f"observe: error: {msg}", err=True)
    return typer.Exit(code)


def user_errors(fn: Callable) -> Callable:
    """Turn ObserveError (and OSError from user paths) into one line on stderr, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ObserveError as e:
            raise _err(str(e), e.exit_code)
        except KeyboardInterrupt:
            raise _err("interrupted", 130)
        except BrokenPipeError:
            raise typer.Exit(0)

    return wrapper


def _emit(text: str, output: Optional[Path]) -> None:
    if output is None:
        sys.stdout.write(text)
        if not text.endswith("\n"):
            sys.stdout.write("\n")
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as e:
            raise ObserveError(f"cannot write {output}: {e.strerror or e}")


class Fmt(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


class FailOn(str, Enum):
    info = "info"
    warning = "warning"
    critical = "critical"


# ---------------------------------------------------------------- diagnose (issue 2)
@app.command()
@user_errors
def diagnose(
    paths: List[Path] = typer.Argument(..., help="Log files (plain or .gz) or folders of vLLM logs."),
    metrics: List[Path] = typer.Option([], "--metrics", help="Saved /metrics snapshots (text exposition)."),
    fmt: Fmt = typer.Option(Fmt.text, "--format", help="Report format."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
    fail_on: Optional[FailOn] = typer.Option(None, "--fail-on", help="Exit 1 when a finding of this severity or worse is found."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr for large inputs."),
) -> None:
    """Read vLLM logs (any version), say what is wrong and which flags to change."""
    from observe import pipeline, report

    diag = pipeline.diagnose_paths(paths, metrics, progress=_progress_cb() if progress else None)
    if fmt == Fmt.text and output is None:
        report.print_rich(diag)
    else:
        _emit(report.render(diag, fmt.value), output)
    if fail_on is not None and report.worst_at_least(diag, fail_on.value):
        raise typer.Exit(1)


def _progress_cb():
    """A rich progress bar on stderr, shown only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    state: dict = {}

    def cb(name: str, done: int, total: int) -> None:
        if "p" not in state:
            p = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                         TimeRemainingColumn(), transient=True, console=_stderr_console())
            p.start()
            state["p"] = p
        p = state["p"]
        tid = state.get(name)
        if tid is None:
            tid = state[name] = p.add_task(Path(name).name, total=total or None)
        p.update(tid, completed=done)
        if total and done >= total:
            p.stop() if all(t.finished for t in p.tasks) else None

    return cb


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


# ---------------------------------------------------------------- capacity (issue 3)
# ---------------------------------------------------------------- sidecar (issue 4)
# ---------------------------------------------------------------- generate (issue 5)
# ---------------------------------------------------------------- run / recommend / compare (issue 6)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
