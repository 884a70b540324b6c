"""Launch flags as a log shows them → one spelling (``{"--max-model-len": 2048, …}``), through the
project's one command-line vocabulary (observe.flags.cmdline).

Two sources: the args dict / Namespace vLLM logs at startup (already read by ``reprs``), and a
``vllm serve …`` command pasted above a log (only tokenised, never run).
"""

from __future__ import annotations

import shlex
from typing import Any

from observe.flags import cmdline
from observe.parse.reprs import MAX_LITERAL


def flags_from_args(d: dict[str, Any], *, explicit: bool = True) -> dict[str, Any]:
    """``non-default args`` (explicit) or a ``Namespace`` (every argument, explicit=False) → flags."""
    return cmdline.from_kwargs(d, explicit=explicit)


def flags_from_command(args: str, env_text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``MODEL --max-model-len 2048 --enforce-eager`` → ({"--model": …, "--max-model-len": 2048, …}, env);
    env_text is the ``NAME=value`` assignments written before the command."""
    env = dict(kv.split("=", 1) for kv in env_text.split() if "=" in kv)
    text = args.strip().rstrip("\\").strip()
    if len(text) > MAX_LITERAL:
        return {}, env
    try:
        toks = shlex.split(text, comments=True)
    except ValueError:
        toks = text.split()
    model, flags = cmdline.from_argv(toks)
    return ({"--model": model, **flags} if model is not None else flags), env
