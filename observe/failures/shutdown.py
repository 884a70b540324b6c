"""Shutdown noise is not an error: the one rule. Pure.

When vLLM stops as asked (a signal, Ctrl-C, "shutdown triggered", uvicorn's "Shutting down") it
can print what reads like a failure: the shutdown race the parser tags ``shutdown_noise``, or an
exception raised while stopping (the parser sets ``details["requested_shutdown"]``). Neither says
the engine failed; whoever counts failures asks ``is_noise``.
"""

from __future__ import annotations

from typing import Any

from observe.failures.kinds import FailureKind

NOISE_KIND = FailureKind.SHUTDOWN_NOISE


def is_noise(e: Any) -> bool:
    """Whether an EngineError is what a requested stop prints, not a failure of the engine."""
    return e.kind == NOISE_KIND or bool(e.details.get("requested_shutdown"))
