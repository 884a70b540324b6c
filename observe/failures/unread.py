"""When the fallback's traceback counts (``parse.unread``): a vLLM frame no rule read is a failure only
when nothing else in the run is one, and what its finding says decides it. Pure."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from observe.failures import shutdown


def counts(e: Any, errors: Sequence[Any]) -> bool:
    """Whether e counts as a failure: any error but the fallback's does; the fallback's only when every
    other error of the run is a requested stop's noise (no rule explained or reported anything)."""
    if not e.details.get("unread"):
        return True
    return all(x is e or shutdown.is_noise(x) for x in errors)


def cut_note(cut: dict[str, Any]) -> str:
    """What the catch-all says of a cut traceback (cut: its innermost telling frame's details): where it
    raised, and what decides the cause and, when the frame does not tell it, the phase."""
    if cut.get("asgi"):
        where = (
            "the engine aborted the request just before: it failed inside the engine"
            if cut.get("in_engine")
            else "no request was aborted in the engine: the handler raised in the HTTP layer (a bad input, an "
            "unreachable URL) and the server went on"
        )
        return (
            "; uvicorn logged 'Exception in ASGI application': a request's handler raised in the server (not a "
            f"client gone), its traceback cut before the handler's own frames (at most the route decorator's wrapper) and the "
            f"cause; {where}"
        )
    if cut.get("unread") and cut.get("frame") == "warmup" and cut.get("alone"):
        return (
            "; the frames are the API server's chat-template warm-up (a dummy chat rendered while the server is "
            "built), whose except logs its traceback and lets the start-up go on: typically a model with no chat "
            "template (give one with --chat-template); its exception line (the full traceback's last line) names it"
        )
    if cut.get("unread"):
        return (
            f"; the frames show it raised in {cut['frame']}() (vLLM's own code), in a traceback no rule reads: "
            "its exception line (the full traceback's last line) decides the cause"
            + (
                "; the phase is unknown: a /metrics snapshot (or a stats line) says whether the engine had served"
                if cut["phase"] == "unknown"
                else ""
            )
        )
    return (
        f"; the frames show it raised in {cut['frame']}(), but the paste is cut off "
        + ("" if cut.get("headed") else "above the traceback's header and ")
        + "before its exception line: the full traceback (its last line) decides the cause"
        + (
            f"; {cut['frame']}() runs both at start-up and while serving, so the phase is unknown"
            if cut["phase"] == "unknown"
            else ""
        )
    )
