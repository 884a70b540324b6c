"""Edge: the tail's wake-ups — a watchdog observer on the directories of the followed patterns sets
an event when a file there changes, so the Follower reads at once instead of at its next poll.
Without watchdog (or where the platform refuses a watch) the Follower just polls."""

from __future__ import annotations

import glob
import os
import threading
from typing import Any

_WAKING = frozenset({"modified", "created", "moved", "deleted", "closed"})


class Waker:
    """Watches the static directories of ``patterns``; ``wake`` is set on a change there. Errors
    go into ``stats`` (``watchdog``, ``last_error``), never up."""

    def __init__(self, patterns: list[str], wake: threading.Event, stats: Any) -> None:
        self.patterns = patterns
        self._wake = wake
        self.stats = stats
        self._observer: Any = None
        self._handler: Any = None
        self._watched: set[str] = set()

    def start(self) -> None:
        try:
            from watchdog.events import FileSystemEventHandler
            from watchdog.observers import Observer
        except ImportError:
            return
        wake = self._wake

        class _Handler(FileSystemEventHandler):
            def on_any_event(self, event) -> None:
                if event.event_type in _WAKING:  # not opened/closed: our own reads make those
                    wake.set()

        try:
            obs = Observer()
            obs.daemon = True
            self._handler = _Handler()
            self._observer = obs
            self.watch_dirs()
            obs.start()
            self.stats.watchdog = True
        except Exception as e:
            try:
                obs.unschedule_all()
            except Exception:
                pass
            self._observer = None
            self.stats.watchdog = False
            self.stats.last_error = f"watchdog unavailable, polling instead: {e}"

    def watch_dirs(self) -> None:
        """Watch the directories that exist now (a pattern's directory may appear later)."""
        if self._observer is None:
            return
        for pat in self.patterns:
            d = static_dir(pat)
            if d in self._watched or not os.path.isdir(d):
                continue
            try:
                self._observer.schedule(self._handler, d, recursive=glob.has_magic(os.path.dirname(pat)))
                self._watched.add(d)
            except Exception as e:
                self.stats.last_error = f"cannot watch {d}: {e}"
                self._watched.add(d)

    def stop(self) -> None:
        obs, self._observer = self._observer, None
        if obs is not None:
            try:
                obs.stop()
                obs.join(timeout=2)
            except Exception:
                pass


def static_dir(pattern: str) -> str:
    """The deepest directory of `pattern` without glob characters."""
    d = os.path.dirname(pattern)
    while glob.has_magic(d):
        d = os.path.dirname(d)
    return d or "."
