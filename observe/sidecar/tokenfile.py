"""The edge that reads the sidecar's /api/diagnosis bearer token: a file the user names, else the
environment the caller passes; what the text means is observe.sidecar.config's (pure)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from observe.errors import ConfigError
from observe.sidecar.config import api_token_from_env, parse_api_token


def read_api_token(path: str | Path | None, environ: Mapping[str, str]) -> str | None:
    """The /api/diagnosis bearer token: the first line of `path`, else $OBSERVE_API_TOKEN, else None."""
    if path is None:
        return api_token_from_env(environ)
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ConfigError(f"--api-token-file {str(path)!r}: cannot read it ({e})") from None
    return parse_api_token(text, source=f"--api-token-file {str(path)!r}")
