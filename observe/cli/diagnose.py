"""`observe diagnose`: vLLM logs (and snapshots, or a Prometheus' history) → the report."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import typer

from observe import errors
from observe.cli.common import FailOn, Fmt, config_option, emit, user_errors
from observe.errors import ConfigError, InputError


# fmt: off
@user_errors
def diagnose(
    paths: list[Path] = typer.Argument(None, metavar="PATH...", help="Log files (plain or .gz) or folders of vLLM logs; `-` reads standard input."),
    metrics: list[Path] = typer.Option([], "--metrics", help="Saved /metrics snapshots (text exposition)."),
    prometheus: str | None = typer.Option(None, "--prometheus", help="Read vLLM's history from this Prometheus (or Thanos Query / Mimir) URL. Credentials from OBSERVE_PROMETHEUS_TOKEN or OBSERVE_PROMETHEUS_USER/_PASSWORD."),
    since: str | None = typer.Option(None, "--since", help="With --prometheus: the last DURATION (default 6h)."),
    start: str | None = typer.Option(None, "--start", help="With --prometheus: ISO 8601 start time."),
    end: str | None = typer.Option(None, "--end", help="With --prometheus: ISO 8601 end time (default now)."),
    selector: str | None = typer.Option(None, "--selector", help='With --prometheus: label selector, e.g. namespace="llm",model_name="m".'),
    step: str | None = typer.Option(None, "--step", help="With --prometheus: query step (default: raw samples up to 6h, else a step from the range)."),
    fmt: Fmt = typer.Option(Fmt.text, "--format", help="Report format."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
    fail_on: FailOn | None = typer.Option(None, "--fail-on", help="Exit 1 when a finding of this severity or worse is found."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr for large inputs."),
    config: Path | None = config_option(),
    partial_ok: bool = typer.Option(False, "--partial-ok", help="Exit 0 even when a file could be read only in part (a truncated .gz) or not at all."),
) -> None:
    """Read vLLM logs (any version), say what is wrong and which flags to change."""
    from observe import pipeline, report, settingsfile
    from observe import promhistory as ph
    from observe.report.progressbar import progress_bar

    if not paths and not prometheus:
        raise ConfigError("give at least one log file or folder (or `-` for standard input, or --prometheus URL)")
    settings = settingsfile.load(config)
    history = ph.from_options(prometheus, since=since, start=start, end=end, selector=selector, step=step, now=datetime.now(UTC))
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
# fmt: on
