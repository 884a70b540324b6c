"""Edge: the settings a command judges by — the defaults, or the YAML file `--config` names (read
here; `settings.from_yaml` parses it)."""

from __future__ import annotations

from pathlib import Path

from observe import settings as settings_mod
from observe.errors import ObserveError
from observe.settings import Settings


def load(path: Path | None) -> Settings:
    """The defaults, overridden by the file at `path` when given; one-line ObserveError otherwise."""
    if path is None:
        return settings_mod.Settings()
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ObserveError(f"cannot read --config {path}: {getattr(e, 'strerror', None) or e}")
    return settings_mod.from_yaml(text, source=str(path))
