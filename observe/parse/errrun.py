"""A run of 5xx answers on the inference routes ending the stream, none answered otherwise: a server that cannot serve.

uvicorn's access line is the server's answer to one request; a 5xx on an OpenAI route (``/v1/…``) is the request
failing in the server, not the client's fault: vLLM's launcher answers EngineDeadError, EngineGenerateError and an
errored engine's RuntimeError with a bare 500 (entrypoints/launcher.py ``_add_shutdown_handlers``), and starlette's
ServerErrorMiddleware answers any other exception a handler let out with "500 Internal Server Error". One such answer,
or a few (an SDK retries a failed request: the OpenAI client twice by default, so three answers), is one request's
error among a working server's (eval32ay 014, eval32k 026: not failing). ``RUN`` of them in a row, every request of
the run failing, with no access line answered below 500 after them (none on any route: any answer that is not an
error ends the run) is a server that cannot serve at the stream's end (eval32bb 018: twelve chat requests answered
500 and nothing else). Its cause is not in the access lines: the server's own ERROR records or the engine core's
traceback decide it. Reported only when nothing else in the stream was read as a failure (``reporting``: a death or
an error already told explains the 5xx), and not when a requested stop had begun during the run.

Pure: the parser tells it each access line (``answer``) and each batch it only counted (``counted``: all below 500).
"""

from __future__ import annotations

from observe.failures.kinds import FailureKind
from observe.model import Envelope
from observe.parse.failtypes import Failure

#: this many 5xx answers on /v1/ routes in a row, nothing answered below 500 between or after them
RUN = 8
_ROUTE = "/v1/"
_TEXT = (
    "{n} requests in a row on the OpenAI routes answered HTTP 5xx (the last: {last}), none answered otherwise "
    "up to the end of the log: the server could not serve — its own ERROR records or the engine core's traceback "
    "decide the cause"
)


class Answers:
    """The stream's run of 5xx answers on /v1/ routes since its last answer below 500."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """A (re)start, or an answer below 500: no run."""
        self._n = 0
        self._late = False  # a 5xx of the run answered once a requested stop had begun
        self._last: tuple[str, Envelope] | None = None  # the run's last answer: "METHOD path" status, where

    def answer(self, env: Envelope, method: str, path: str, status: int, requested: bool) -> None:
        """One access line (requested: a requested stop had begun)."""
        if status < 500:
            self.reset()
        elif path.startswith(_ROUTE):
            self._n += 1
            self._late = self._late or requested
            self._last = (f"{method} {path.split('?', 1)[0]} answered {status}", env)

    def counted(self) -> None:
        """Access lines counted without being read (the byte scan's: each answered below 500)."""
        self.reset()

    def failure(self) -> tuple[Failure, str, Envelope] | None:
        """End of stream: the run's failure (its last answer's text and place), or None."""
        if self._n < RUN or self._late or self._last is None:
            return None
        text, env = self._last
        d = {
            "text": _TEXT.format(n=self._n, last=text),
            "phase": "serving",
            "alone": True,
            "answers": self._n,
        }
        return Failure(FailureKind.ERROR_LINE, d, False, ("answers", "5xx")), text, env
