"""Launch flags as a log shows them → one spelling: ``{"--max-model-len": 2048, …}``.

Two sources: the args dict / Namespace vLLM logs at startup (already read by ``reprs``), and a
``vllm serve …`` command pasted above a log. Every normalisation of flag names and values the
parser does is here, so a shared command-line vocabulary can replace it in one place.
"""

from __future__ import annotations

import json
import shlex
from typing import Any

from observe.parse.reprs import MAX_LITERAL


def flags_from_args(d: dict[str, Any]) -> dict[str, Any]:
    """CLI args dict → {"--max-model-len": 2048}; vllm serve's positional model_tag is --model."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if not isinstance(k, str):
            continue
        if k == "model_tag":
            out.setdefault("--model", v)
            continue
        out["--" + k.replace("_", "-")] = v
    return out


def flags_from_command(args: str, env_text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``MODEL --max-model-len 2048 --enforce-eager`` → ({"--model": …, "--max-model-len": 2048, …}, env).

    Only tokenised (shlex), never run; ``--no-x`` becomes ``--x: False``, ``--a_b`` becomes ``--a-b``;
    env_text is the ``NAME=value`` assignments written before the command."""
    env = dict(kv.split("=", 1) for kv in env_text.split() if "=" in kv)
    text = args.strip().rstrip("\\").strip()
    if len(text) > MAX_LITERAL:
        return {}, env
    try:
        toks = shlex.split(text, comments=True)
    except ValueError:
        toks = text.split()
    flags: dict[str, Any] = {}
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.startswith("--") and len(t) > 2:
            name, eq, val = t.partition("=")
            name = "--" + name[2:].replace("_", "-")
            if eq:
                flags[name] = _cli_value(val)
            elif i + 1 < len(toks) and not toks[i + 1].startswith("--"):
                flags[name] = _cli_value(toks[i + 1])
                i += 1
            elif name.startswith("--no-"):
                flags["--" + name[5:]] = False
            else:
                flags[name] = True
        elif t in ("|", ">", ">>", "2>&1", "&", "&&", ";"):
            break
        elif "--model" not in flags and not t.startswith("-"):
            flags["--model"] = t
        i += 1
    return flags, env


def _cli_value(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    if v[:1] in "{[":
        try:
            return json.loads(v)
        except Exception:
            return v
    return {"true": True, "false": False, "True": True, "False": False}.get(v, v)
