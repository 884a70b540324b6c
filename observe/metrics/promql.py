"""Core: the small PromQL meanings every generator and reader shares — pure text, no I/O.

- `fold` / `name_regex`: one expression over every name a metric has been exposed under (vLLM renamed
  several; `names.py` keeps the dated aliases, newest first). Dashboards and rules join one
  expression per alias with ``or``; the history reader matches them all with one ``__name__`` regex.
- `parse_duration` / `duration_seconds` / `format_duration`: the one duration grammar (``500ms``,
  ``90s``, ``1h30m``, ``2d``, ``1w``, ``1y``). Text that goes into PromQL must be Prometheus's own
  form (whole numbers, ``strict``); what people type on a command line may also use decimals
  (``1.5h``), and where a caller allows it a plain number of seconds.
- `parse_selector` / `selector_text` / `unbraced`: the one label-selector grammar
  (``name="value"`` pairs with ``=``, ``!=``, ``=~``, ``!~``, comma separated, braces optional); a
  selector picks instances, never metrics, so ``__name__`` is refused.
"""

from __future__ import annotations

import re

from observe.errors import ConfigError
from observe.metrics import names

__all__ = [
    "fold",
    "name_regex",
    "parse_duration",
    "duration_seconds",
    "format_duration",
    "parse_selector",
    "selector_text",
    "unbraced",
]

# ------------------------------------------------------------------ renamed metrics


def fold(canonical: str, template: str) -> str:
    """``template`` (``{m}`` = the metric name) for every name vLLM exposed ``canonical`` under,
    newest first, joined by ``or`` — one expression whatever release the server runs."""
    return " or ".join(template.replace("{m}", m) for m in names.exposed_names(canonical))


def name_regex(canonical: str, suffix: str = "") -> str:
    """A ``__name__`` regex matching every exposed name of ``canonical`` (sorted; the canonical name
    itself when the catalog does not know it), followed by the regex ``suffix``
    (e.g. ``(_bucket|_sum|_count)?`` for a histogram)."""
    alts = "|".join(sorted(names.exposed_names(canonical) or [canonical]))
    return f"({alts}){suffix}"


# ------------------------------------------------------------------ durations

_UNIT_S = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0, "d": 86400.0, "w": 604800.0, "y": 31536000.0}
_PART = re.compile(r"(\d+(?:\.\d+)?)(ms|s|m|h|d|w|y)")


def duration_seconds(text: str, *, strict: bool = False, numbers: bool = False) -> float | None:
    """Seconds in a duration, or None when ``text`` is not one.

    ``strict``: Prometheus's own form only (whole numbers, units in any of ms s m h d w y, no
    spaces), for text that goes into a rule or query. Otherwise decimals are allowed and case is
    ignored; ``numbers`` also takes a plain number as seconds. Zero is a duration here (``0s``);
    callers that need a positive one say so.
    """
    t = text.strip() if not strict else text
    if not strict:
        t = t.lower()
        if numbers:
            try:
                return float(t)
            except ValueError:
                pass
    pos, total = 0, 0.0
    for m in _PART.finditer(t):
        if m.start() != pos or (strict and "." in m.group(1)):
            return None
        total += float(m.group(1)) * _UNIT_S[m.group(2)]
        pos = m.end()
    if not t or pos != len(t):
        return None
    return total


def parse_duration(text: str | float | int, *, what: str = "duration", numbers: bool = False) -> float:
    """A positive duration in seconds (see `duration_seconds`); anything else is one ConfigError.
    A number (int or float) is taken as seconds when ``numbers`` is set."""
    if isinstance(text, (int, float)) and not isinstance(text, bool) and numbers:
        secs: float | None = float(text)
    else:
        secs = duration_seconds(str(text), numbers=numbers)
    if secs is None:
        raise ConfigError(f"{what} {text!r} is not a duration (examples: 15s, 30m, 6h, 1h30m, 2d)")
    if not secs > 0:
        raise ConfigError(f"{what} must be positive, got {text!r}")
    return secs


def format_duration(seconds: float) -> str:
    """Seconds as a Prometheus duration in the largest whole unit: 180 → 3m, 90 → 90s, 0 → 0s."""
    n = max(0, int(round(seconds)))
    if n and n % 3600 == 0:
        return f"{n // 3600}h"
    if n and n % 60 == 0:
        return f"{n // 60}m"
    return f"{n}s"


# ------------------------------------------------------------------ label selectors

_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!=|!~|=)\s*"((?:[^"\\]|\\.)*)"\s*(?:,|$)')


def unbraced(text: str | None) -> str:
    """The selector without surrounding whitespace and outer braces, otherwise as written."""
    t = (text or "").strip()
    if t.startswith("{") and t.endswith("}"):
        t = t[1:-1].strip()
    return t


def parse_selector(text: str | None) -> list[tuple[str, str, str]]:
    """A label selector (``namespace="llm",model_name=~"llama.*"``, braces optional) as
    (label, operator, quoted value without quotes) triples; empty text is no matcher. A malformed
    selector, or one naming ``__name__``, is one ConfigError."""
    t = unbraced(text)
    pos, out = 0, []
    while pos < len(t):
        m = _MATCHER.match(t, pos)
        if not m or m.end() == pos:
            raise ConfigError(
                f'not a label selector: {text!r} (expected name="value" pairs, e.g. '
                'namespace="llm",model_name="llama-3-70b")'
            )
        if m.group(1) == "__name__":
            raise ConfigError("the selector picks instances, not metrics: leave __name__ out")
        out.append((m.group(1), m.group(2), m.group(3)))
        pos = m.end()
    return out


def selector_text(text: str | None) -> str:
    """The selector checked and written back without braces or spaces: ``a="b",c=~"d"``."""
    return ",".join(f'{k}{op}"{v}"' for k, op, v in parse_selector(text))
