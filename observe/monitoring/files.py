"""The generated artefacts' one way to disk: named texts written into a folder (made if missing), a
failed write one clear ConfigError naming what and where."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from observe.errors import ConfigError


def write_texts(out_dir: Path, texts: Mapping[str, str], what: str) -> list[Path]:
    """Write each ``name → text`` of ``texts`` into ``out_dir``; return the paths, in order."""
    out_dir = Path(out_dir)
    try:
        out_dir.mkdir(parents=True, exist_ok=True)
        paths = []
        for name, text in texts.items():
            path = out_dir / name
            path.write_text(text, encoding="utf-8")
            paths.append(path)
        return paths
    except OSError as e:
        raise ConfigError(f"cannot write {what} to {out_dir}: {e.strerror or e}") from e
