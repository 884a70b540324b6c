"""Edge: the settings a command judges by — the defaults, or the YAML file `--config` names (read
here; `settings.from_yaml` parses it) — and the settings written out as that file (`to_yaml`) or as
rows (`describe`: `observe config show`)."""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import yaml

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


def describe(s: Settings) -> list[dict[str, Any]]:
    """Every setting with its value, default, section and note (for `observe config show`)."""
    out = []
    for f in dataclasses.fields(Settings):
        out.append(
            {
                "name": f.name,
                "value": getattr(s, f.name),
                "default": f.default,
                "section": f.metadata.get("section"),
                "note": f.metadata.get("note"),
            }
        )
    return out


_SECTION_TITLES = {
    "kv": "KV cache",
    "engine": "engine behaviour",
    "slo": "latency SLOs",
    "alerts": "alert rules",
    "input": "reading logs",
    "tune": "observe tune",
}


def to_yaml(s: Settings) -> str:
    """The settings as a commented YAML file that ``--config`` reads back unchanged."""
    lines = ["# observe settings (observe config show); pass with --config FILE", ""]
    section = None
    rows = describe(s)
    order = {sec: i for i, sec in reversed(list(enumerate(r["section"] for r in rows)))}
    for row in sorted(rows, key=lambda r: order[r["section"]]):  # each section once, fields in order
        if row["section"] != section:
            section = row["section"]
            lines.append(f"# ---- {_SECTION_TITLES.get(section, section)}")
        lines.append(f"# {row['note']}")
        value = row["value"]
        if row["name"] == "rule_labels":
            value = dict(value)
        elif isinstance(value, tuple):
            value = [list(x) if isinstance(x, tuple) else x for x in value]
        dumped = yaml.safe_dump({row["name"]: value}, default_flow_style=True, sort_keys=False).strip()
        if dumped.startswith("{") and dumped.endswith("}"):
            dumped = dumped[1:-1]
        lines.append(dumped)
    return "\n".join(lines) + "\n"
