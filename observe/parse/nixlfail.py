"""NixlConnector's record of one KV transfer that failed: that request's KV is recomputed (or that request fails), the
engine serves on.

vLLM's NIXL connector (distributed/kv_transfer/kv_connector/v1/nixl_connector.py, 2026; later split under
``nixl/``) reports every transfer failure through one helper, ``NixlConnectorWorker._log_failure``:
``logger.error("NIXL transfer failure: %s | Context: %s", failure_type, context, exc_info=..., stacklevel=2)``, the
failure type a snake-case word (``transfer_setup_failed``, ``handshake_setup_failed``, ``handshake_failed``, …)
followed by ". <msg>" when the caller gave one ("Marking blocks as invalid"), the context a dict of the request, the
engine and the remote. Each caller then handles it for the requests it names: the READ that could not be set up
marks that request's local blocks invalid and adds it to the failed receives (``_handle_failed_transfer``), a
handshake with a remote engine that failed fails the requests waiting on it (their blocks marked invalid); the
scheduler's ``kv_load_failure_policy`` then recomputes those blocks or fails those requests, and the engine core
steps on. So the record is one request's (or one remote's requests') KV transfer lost, phase serving (a transfer
only runs for a request a prefill engine handed over), never the engine's failure nor a failed start:
``request_error``, its own traceback (``exc_info``, same call site) explained by it. The engine's own death near it
(a fail-stop the connector raises, an engine core's traceback) is told by its own lines, which other rows read.

Pure: a row's pattern and its reader.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["LITERAL", "PATTERN", "transfer_failed"]

#: _log_failure's words
LITERAL = "NIXL transfer failure: "
#: the failure type (snake case), the caller's message after ". " if any, then the context (or the line's end: cut)
PATTERN = r"NIXL transfer failure: [a-z]+(?:_[a-z]+)+(?:\. [^|]*)?(?: \| Context: |\s*$)"


def transfer_failed(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """One request's (or one remote's requests') KV transfer failed: those requests' error, the engine serves on."""
    return Failure(FailureKind.REQUEST_ERROR, {"phase": "serving", "kv_transfer_failed": True}, False, None)
