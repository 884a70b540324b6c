"""Python logging's own report of a log call that failed to format: the call stack of a log call, not a traceback.

When a handler cannot emit a record (a message whose ``%d`` meets None, too few arguments), ``logging.Handler.
handleError`` (CPython's Lib/logging/__init__.py, 3.8 → 3.13) writes to stderr ``--- Logging error ---``, the
formatting exception's traceback, ``Call stack:`` and ``traceback.print_stack`` of the frame that called the logger
(its frames printed as a traceback's: ``File "…", line N, in f`` and the source line, the deepest the logging call
itself), then ``Message: %r`` and ``Arguments: %s`` — and returns: the record is lost, the program goes on. Bare
frames followed by ``Message: '…'`` and then ``Arguments: …`` (nothing else prints that pair after a stack) are that
call stack (vLLM's own ``logger.info`` in a config's ``__init__``, its argument None): no failure of the engine's,
even under a start-up function (``reporting.FailureReporter`` holds a bare stack's lines until a line ends it). Pure:
a line in, a bool out.
"""

from __future__ import annotations

import re

__all__ = ["LITERALS", "arguments_line", "message_line"]

#: handleError's ``'Message: %r\n'``: the record's msg, as repr prints a str
_MESSAGE_RE = re.compile(r"Message: (?P<q>['\"]).*(?P=q)", re.ASCII)
#: handleError's ``'Arguments: %s\n'``: the record's args (a tuple, a dict, None)
_ARGUMENTS_RE = re.compile(r"Arguments: (?:\(.*\)|\{.*\}|\[.*\]|None)", re.ASCII)
#: what a line must hold for the reporter to see handleError's message and arguments lines
LITERALS: tuple[str, ...] = ("Message: ", "Arguments: ")


def message_line(text: str) -> bool:
    """Whether text (a line, stripped) is handleError's ``Message: %r`` line."""
    return _MESSAGE_RE.fullmatch(text) is not None


def arguments_line(text: str) -> bool:
    """Whether text (a line, stripped) is handleError's ``Arguments: %s`` line."""
    return _ARGUMENTS_RE.fullmatch(text) is not None
