"""The edge that reads a model's Hugging Face config.json for `observe capacity`: a file or the
folder that holds one, named by the user; the capacity model (pure) sizes what this returns."""

from __future__ import annotations

import json
from os import PathLike
from pathlib import Path
from typing import Any

from observe.capacity.tables import ModelSpec, spec_from_config
from observe.errors import ConfigError


def load_config(path: str | PathLike) -> dict[str, Any]:
    """Read a Hugging Face config.json; any problem becomes one ConfigError."""
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        raise ConfigError(f"config file not found: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"cannot read {path}: {getattr(e, 'strerror', None) or e}") from None
    except json.JSONDecodeError as e:
        raise ConfigError(f"{path} is not valid JSON (line {e.lineno}: {e.msg})") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path} holds no JSON object (expected a Hugging Face config.json)")
    return data


def model_argument(model: str | None) -> str | ModelSpec | None:
    """`--model` as the capacity model takes it: a folder or a `.json` path → the ModelSpec of its
    config.json (named by the path); a built-in model name (or None) unchanged."""
    if model is None:
        return None
    if Path(model).is_dir():
        model = str(Path(model) / "config.json")
    if model.strip().endswith(".json"):
        return spec_from_config(load_config(model), name=model)
    return model
