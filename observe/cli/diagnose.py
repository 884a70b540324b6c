"""`observe diagnose`: vLLM logs (and snapshots, or a Prometheus' history) → the report."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer

from observe import errors
from observe.cli.common import FailOn, Fmt, config_option, emit, user_errors
from observe.errors import ConfigError, InputError


@user_errors
def diagnose(
    paths: list[Path] = typer.Argument(None, metavar="PATH..."),
    metrics: list[Path] = typer.Option([], "--metrics"),
    prometheus: str | None = typer.Option(None, "--prometheus"),
    since: str | None = typer.Option(None, "--since"),
    start: str | None = typer.Option(None, "--start"),
    end: str | None = typer.Option(None, "--end"),
    selector: str | None = typer.Option(None, "--selector"),
    step: str | None = typer.Option(None, "--step"),
    fmt: Fmt = typer.Option(Fmt.text, "--format"),
    output: Path | None = typer.Option(None, "--output", "-o"),
    fail_on: FailOn | None = typer.Option(None, "--fail-on"),
    progress: bool = typer.Option(True, "--progress/--no-progress"),
    config: Path | None = config_option(),
    partial_ok: bool = typer.Option(False, "--partial-ok"),
) -> None:
    """Read vLLM logs (any version), say what is wrong and which flags to change."""
    from observe import pipeline, report, settingsfile
    from observe.metrics import promhistory as ph
    from observe.report.progressbar import progress_bar

    if not paths and not prometheus:
        raise ConfigError(
            "give at least one log file or folder (or `-` for standard input, or --prometheus URL)"
        )
    settings = settingsfile.load(config)
    history = ph.from_options(
        prometheus, since=since, start=start, end=end, selector=selector, step=step, now=datetime.now(UTC)
    )
    with progress_bar(progress) as bar:
        diag = pipeline.diagnose_paths(paths or [], metrics, progress=bar, settings=settings, history=history)
    if fmt == Fmt.text and output is None:
        report.print_rich(diag)
    else:
        emit(report.render(diag, fmt.value, settings=settings), output)
    not_read = pipeline.not_read_text(diag.unreadable)
    if not_read and not partial_ok:
        raise InputError(not_read)
    if fail_on is not None and report.worst_at_least(diag, fail_on.value):
        raise typer.Exit(errors.EXIT_FOUND)
