"""Safe readers for the Python reprs vLLM logs: dict reprs, ``key=value`` config / Namespace reprs.

Nothing from a log line is executed: values go through ``ast.literal_eval`` (or ``json.loads``)
only, and a repr cut short by a paste yields its complete prefix, never a number with digits missing.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

#: text longer than this is not evaluated (a pathological line must stay cheap)
MAX_LITERAL = 200_000

_SPECIAL_RE = re.compile(r"[,'\"()\[\]{}<>\\]")


def _split_top(s: str) -> tuple[list[str], bool]:
    """Split a repr body on top-level ", " (outside brackets and quotes).

    Returns the pieces and whether the text ended balanced (no open bracket or quote)."""
    parts, start, balanced, _ = _walk(s)
    tail = s[start:].strip()
    if tail:
        parts.append(tail)
    return parts, balanced


def _walk(s: str) -> tuple[list[str], int, bool, bool]:
    """One walk over s: its top-level pieces before the last top-level comma, where the last piece
    starts, whether s ends balanced, and whether s without its last character does. Only the special
    characters are visited (a regex finds them), so long config lines stay cheap."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    skip_to = -1
    last = len(s) - 1
    before_last = None  # balanced before the last character, if that is a special one
    for m in _SPECIAL_RE.finditer(s):
        i = m.start()
        if i == last:
            before_last = depth == 0 and not quote
        if i < skip_to:
            continue
        c = s[i]
        if quote:
            if c == "\\":
                skip_to = i + 2
            elif c == quote:
                quote = ""
        elif c == "'" or c == '"':
            quote = c
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(s[start:i].strip())
            start = i + 1
    balanced = depth == 0 and not quote
    return parts, start, balanced, balanced if before_last is None else before_last


# the literal forms config reprs are mostly made of, read without literal_eval's compile (exactly
# what _evaluated gives for them: tests/test_reprs.py compares the two)
_INT_RE = re.compile(r"-?(?:0|[1-9][0-9]*)", re.ASCII)
_FLOAT_RE = re.compile(r"-?[0-9]+\.[0-9]+", re.ASCII)
_NAMES = {"None": None, "True": True, "False": False, "true": True, "false": False, "null": None}


def literal(text: str) -> Any:
    """A Python/JSON literal from a log line — literal_eval only, never eval; else the raw text."""
    t = text.strip()
    if not t or len(t) > MAX_LITERAL:
        return t
    if t in _NAMES:
        return _NAMES[t]
    q = t[0]
    if (q == "'" or q == '"') and len(t) >= 2 and t[-1] == q and q not in t[1:-1] and "\\" not in t:
        return t[1:-1]  # a plain quoted string
    if _INT_RE.fullmatch(t):
        return int(t)
    if _FLOAT_RE.fullmatch(t):
        return float(t)
    return _evaluated(t)


def _evaluated(t: str) -> Any:
    """t (stripped, not too long) through literal_eval, then JSON; else t itself."""
    if t and (t[0] in "'\"[{(-0123456789" or t in ("None", "True", "False")):
        try:
            return ast.literal_eval(t)
        except Exception:
            pass
        if t[0] in "[{":
            try:
                return json.loads(t)
            except Exception:
                pass
    if t in ("true", "false", "null"):
        return _NAMES[t]
    return t


def parse_dict_repr(text: str) -> dict[str, Any]:
    """``{'max_model_len': 2048, …}`` → dict, safely; a truncated repr yields its complete prefix."""
    t = text.strip()
    if not t.startswith("{") or len(t) > MAX_LITERAL:
        return {}
    try:
        v = ast.literal_eval(t)
        return v if isinstance(v, dict) else {}
    except Exception:
        pass
    # cut at top-level ", '" boundaries from the end until what remains evaluates
    body = t[1:]
    if len(body) > MAX_LITERAL // 4:
        return {}
    cuts = [m.start() for m in re.finditer(r", '", body)]
    for cut in reversed(cuts[-64:]):
        try:
            v = ast.literal_eval("{" + body[:cut] + "}")
        except Exception:
            continue
        if isinstance(v, dict):
            return v
    return {}


def parse_kv_repr(text: str, keys: frozenset[str] | tuple[str, ...] | None = None) -> dict[str, Any]:
    """``model='x', max_seq_len=2048, …`` (a config or Namespace repr) → dict of literal values.

    The last pair is dropped when the text looks cut short (a paste truncated mid-value), so a
    number is never read with digits missing."""
    t = text.rstrip()
    closed = False
    parts, start, balanced, before_last = _walk(t)
    if t.endswith(")") and before_last:
        # "Namespace(…)" body or the old "…, seed=0)" config form: the ")" closes the repr
        t, closed, balanced = t[:-1], True, True
    tail = t[start:].strip()
    if tail:
        parts.append(tail)
    ends_clean = closed or t.endswith((")", "}", "]", "'", '"', ",", ">"))
    if parts and (not balanced or not ends_clean):
        parts = parts[:-1]
    out: dict[str, Any] = {}
    for p in parts:
        k, sep, v = p.partition("=")
        k = k.strip()
        if not sep or not k.isidentifier() or (keys is not None and k not in keys):
            continue
        out[k] = literal(v.strip())
    return out
