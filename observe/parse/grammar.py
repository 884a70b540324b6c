"""Structured output's grammar refusing a token of one request: that request ended with an error, the engine goes on.

V1's xgrammar backend (v1/structured_output/backend_xgrammar.py ``XgrammarGrammar.accept_tokens``) logs "Failed to
advance FSM for request %s for tokens %s. Please file an issue." (logger.error) when the request's matcher refuses a
sampled token, and returns False. The scheduler (v1/core/sched/scheduler.py ``update_from_output``, 2026) then logs
"Unexpected: grammar rejected tokens %s for request %s. Terminating request." (logger.error; a warning without the
last sentence before), sets that request FINISHED_ERROR and stops it; the API server answers it "Request %s failed
with an internal error during generation" and a 500, and the engine core steps on with the other requests (vllm#42619:
a terminated matcher refusing one more token ends every such request so, with no dead engine). Each names one request
and neither is raised: ``request_error``, phase serving (the scheduler only advances a grammar after a step's output),
never the engine's failure nor a failed start. The engine's own death near them is told by its own lines (an engine
core's traceback, EngineDeadError), which other rows read.

Pure: rows' patterns and one reader.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

#: (literal, pattern) of each message
FSM = (
    "Failed to advance FSM for request ",
    r"Failed to advance FSM for request \S+ for tokens? \S+\. Please file",
)
REJECTED = (
    "Terminating request.",
    r"Unexpected: grammar rejected tokens \[[\d, ]*\] for request \S+\. Terminating request\.",
)


def request_ended(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """One request's grammar refused a token: that request ended with an error, the engine serves on."""
    return Failure(FailureKind.REQUEST_ERROR, {"phase": "serving", "grammar_rejected": True}, False, None)
