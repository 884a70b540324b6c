"""What shows an engine had started and the server was taking requests, short of a stats line.

An excerpt pasted around an engine's death often holds no stats line, yet its own lines prove the
server was serving: an access-log line, a request handler among a traceback's frames or as the
logger of the ERROR record, V1's ``Added request``, Ray Serve's request failure, or the V1 output
handler re-raising the engine's death (``raise self._format_exception(outputs)`` in
``get_output_async``: the AsyncLLM's output handler reads the engine core's output socket only once
the client's start-up handshake has completed — ``core_client.py`` 0.8 → 0.32 — so an
``EngineDeadError`` from there is a death after start-up, never a failed start).

Pure: a message (and its logger file) in, a bool out. ``Parser`` keeps the answer in its run state.
"""

from __future__ import annotations

import re

#: the engine aborted a request it held (a client gone, or the request's handler raising while the engine generated
#: for it): V0 async_llm_engine.py "Aborted request %s." (0.2 → 0.10), V1 async_llm.py "Aborted request(s) %s." (0.8 →
#: 0.32); just before uvicorn's "Exception in ASGI application", the request failed inside the engine
ABORTED = "Aborted request"
#: literals of a message that show the server was serving (or its engine had finished starting)
SERVING_LITERALS: tuple[str, ...] = (
    # V1 async_llm.py (0.8 → 0.32): logger.info("Added request %s.", request_id)
    "Added request ",
    # the request handlers of the OpenAI server, as traceback frames (serving_chat.py, api_router.py,
    # serving_completion.py; chat_completion/serving.py from 0.20)
    "in create_chat_completion",
    "in chat_completion_stream_generator",
    "in create_completion",
    "in completion_stream_generator",
    # serving_chat.py: logger.exception("Error in chat completion stream generator.")
    "Error in chat completion stream generator",
    # Ray Serve LLM (ray/llm/_internal/serve/.../error_handling_utils.py): a replica's request failed
    "Encountered failure while handling request",
    "in handle_failure",
    # V1 core_client.py get_output_async: the engine's death read by the output handler
    "_format_exception(outputs)",
    ABORTED,
)
#: logger files of the request path: an ERROR record logged there was raised by a request
REQUEST_LOGGERS = frozenset(
    {"serving_chat.py", "serving_completion.py", "serving_engine.py", "api_router.py", "serving.py"}
)


#: a request handler's own frame, in its own file: ``create_chat_completion`` in serving_chat.py, ``create_completion``
#: in serving_completion.py. As the outermost frame of an ERROR record that file logged (the header read just above
#: it), it is the function whose except logged the record (logger.exception prints the traceback from the frame that
#: caught): in those handlers only the try around the request's preprocessing logs one ("Error in applying chat
#: template from request" 0.6 → 0.7, "Error in preprocessing prompt inputs" 0.8 → 0.10, then an error response; the
#: later create_chat_completion logs none) — one request's error; read when the record opens at its header (its
#: message line, which a row reads, cut off)
HANDLER_OWN = re.compile(
    r'\s*File "[^"]*/vllm/entrypoints/openai/(?P<file>serving_chat|serving_completion)\.py", line \d+, in '
    r"(?P<func>create_chat_completion|create_completion)\s*"
)
_HANDLER_FILES = {"serving_chat": "create_chat_completion", "serving_completion": "create_completion"}


def handler_own_frame(msg: str, logger_file: str | None) -> bool:
    """Whether msg is a request handler's own frame in the file that logged its record (``HANDLER_OWN``)."""
    m = HANDLER_OWN.fullmatch(msg)
    return m is not None and logger_file == f"{m['file']}.py" and _HANDLER_FILES[m["file"]] == m["func"]


def shows_serving(msg: str, logger_file: str | None) -> bool:
    """Whether the message (or the logger of an ERROR record) shows the server was serving requests."""
    return logger_file in REQUEST_LOGGERS or any(lit in msg for lit in SERVING_LITERALS)
