"""The one severity style: a finding's colour in the HTML report and its plots (hex), and its
style on a terminal (rich), for the text report and `observe top` alike."""

from __future__ import annotations

__all__ = ["COLOR", "NEUTRAL", "TERMINAL", "css"]

#: hex colour per severity: HTML badges and borders, plot bands and threshold lines
COLOR: dict[str, str] = {"critical": "#d0312d", "warning": "#e8890c", "info": "#2f6fb3"}
#: rich style per severity: the text report's table and `observe top`
TERMINAL: dict[str, str] = {"critical": "bold red", "warning": "yellow", "info": "cyan"}
#: an unknown severity (and the default badge)
NEUTRAL = "#6a7280"


def css(selector: str, prop: str) -> str:
    """``selector.sev-<severity>{prop:<colour>}`` for each severity, most severe first."""
    return "".join(f"{selector}.sev-{sev}{{{prop}:{c}}}" for sev, c in COLOR.items())
