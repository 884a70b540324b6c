"""A rich progress bar on stderr for `observe diagnose` over large inputs (pipeline's `progress`),
and a spinner for a wait of unknown length (`observe run` checking flags with vLLM's parser)."""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class ProgressBar:
    """One task per file, shown once a file is large enough to matter; `close()` removes it."""

    def __init__(self) -> None:
        self._p: Any = None
        self._tasks: dict[str, int] = {}

    def __call__(self, name: str, done: int, total: int) -> None:
        if self._p is None:
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

            self._p = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                transient=True,
                console=Console(stderr=True),
            )
            self._p.start()
        tid = self._tasks.get(name)
        if tid is None:
            tid = self._tasks[name] = self._p.add_task(Path(name).name, total=total or None)
        self._p.update(tid, completed=done)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()


@contextlib.contextmanager
def progress_bar(wanted: bool = True) -> Iterator[ProgressBar | None]:
    """A bar while the block runs, when wanted and stderr is a terminal (else None)."""
    bar = ProgressBar() if wanted and sys.stderr.isatty() else None
    try:
        yield bar
    finally:
        if bar is not None:
            bar.close()


@contextlib.contextmanager
def waiting(text: str) -> Iterator[None]:
    """A spinner saying `text` on stderr while the block runs, when stderr is a terminal."""
    if not sys.stderr.isatty():
        yield
        return
    from rich.console import Console

    with Console(stderr=True).status(text):
        yield
