"""The messages that begin a shutdown, and which of them say the stop was asked for (the error grammar,
observe.parse.failures, reads an engine-dead error after a requested stop as noise)."""

from __future__ import annotations

#: shutdown messages that say the stop was asked for (a signal, Ctrl-C, the API server told to stop):
#: an EngineDeadError after one is noise. vLLM's own "[shutdown] MPClient: engine core exited
#: unexpectedly" / "Process manager: send sigterm" steps after a killed engine core are not.
REQUESTED_LITERALS = (
    "Shutting down",
    "Waiting for application shutdown",
    "shutdown triggered",
    "received signal",
    "Received KeyboardInterrupt",
)
#: shutdown messages vLLM prints whoever stopped it: the Ray executor's teardown ("Shutting down Ray
#: distributed executor. … this is the expected termination process in Ray.", ray_distributed_executor.py
#: 0.7.3 → v1/executor/ray_executor.py) runs after an engine death too; so does V0's client closing
#: ("Shutting down MQLLMEngineClient output handler.", engine/multiprocessing/client.py 0.6 → 0.10: the output
#: loop cancelled by close(), which build_async_engine_client's ``finally`` runs after a failed start as well).
#: A shutdown, never a request.
CLEANUP_LITERALS = (
    "Shutting down Ray distributed executor",
    "Shutting down MQLLMEngineClient output handler",
)
#: the exception line a Ctrl-C leaves (SIGINT's KeyboardInterrupt), and vLLM's SIGTERM handler's ("KeyboardInterrupt:
#: terminated", V0's api_server): the traceback's last line, alone on it — a stop asked for
INTERRUPT = "KeyboardInterrupt"
#: messages that begin a shutdown (vLLM's "[shutdown] …" steps, uvicorn's stop)
_BEGINS = ("[shutdown]", *REQUESTED_LITERALS)
#: what a line must hold to be read as one (``triggers.TRIGGERS``): those, or a KeyboardInterrupt's exception line
SHUTDOWN_LITERALS = (*_BEGINS, INTERRUPT)


def _interrupted(msg: str) -> bool:
    text = msg.strip()
    return text == INTERRUPT or text.startswith(INTERRUPT + ":")


def begins_shutdown(msg: str) -> bool:
    return any(lit in msg for lit in _BEGINS) or _interrupted(msg)


def requested_shutdown(msg: str) -> bool:
    """Whether a shutdown message says the stop was asked for (see REQUESTED_LITERALS; never vLLM's own
    clean-up, CLEANUP_LITERALS), or is a KeyboardInterrupt's exception line."""
    told = any(lit in msg for lit in REQUESTED_LITERALS) and not any(lit in msg for lit in CLEANUP_LITERALS)
    return told or _interrupted(msg)
