"""observe.sidecar.config (was observe.config): the sidecar's settings, pure — the token file is read
at the edge (observe.sidecar.tokenfile), which hands its text over."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from observe.errors import ConfigError
from observe.sidecar import config as sidecarconfig

ROOT = Path(__file__).resolve().parents[1]


def test_the_token_is_parsed_from_text_and_the_environment() -> None:
    assert sidecarconfig.parse_api_token("\n  abc123  \nsecond\n", source="--api-token-file t") == "abc123"
    with pytest.raises(ConfigError, match="--api-token-file t is empty"):
        sidecarconfig.parse_api_token(" \n\n", source="--api-token-file t")
    assert sidecarconfig.api_token_from_env({"OBSERVE_API_TOKEN": " xyz "}) == "xyz"
    assert sidecarconfig.api_token_from_env({"OBSERVE_API_TOKEN": "  "}) is None
    assert sidecarconfig.api_token_from_env({}) is None


def test_the_sidecar_settings_read_no_file() -> None:
    tree = ast.parse((ROOT / "observe" / "sidecar" / "config.py").read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    called = {
        n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", "")
        for n in ast.walk(tree)
        if isinstance(n, ast.Call)
    }
    assert not imported & {"pathlib", "os", "io", "glob", "shutil"}, imported
    assert not called & {"open", "read_text", "read_bytes", "write_text"}, called
    assert not (ROOT / "observe" / "config.py").exists(), "observe.config was renamed observe.sidecar.config"
