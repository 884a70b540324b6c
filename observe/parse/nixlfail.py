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

The handshake before a transfer (0.11.x's ``nixl_connector.py``, before ``_log_failure``): the decode side asks the
prefill instance's side channel (``VLLM_NIXL_SIDE_CHANNEL_HOST``, default "localhost", and ``…_PORT``) for its agent
metadata in a background thread; ``_nixl_handshake`` raises "Remote NIXL agent engine ID mismatch. Expected …,received
…." when the instance that answered is not the engine the request named (raised there only, in every release: 0.32
moves it to ``nixl/base_worker.py``, reported through ``_log_failure``), and the futures' callbacks log
``logger.exception("Handshake with %s failed", eid)`` and ``"Handshake failed for request %s, marking blocks as
invalid"`` (the request's blocks invalid, the request in the failed receives). The engine serves on, but every request
that remote prefills loses its transfer: the disaggregated setup is broken, not one request. Read as the engine's error
the engine went on from (an ERROR line marked ``alone``: failing.engine_error's warning, never critical), with the
cause and the fix (the side channel's address). The two records only under ``nixl_connector.py``'s logger; the
exception's words wherever they stand (its traceback's last line under the record, or relayed).

Pure: rows' patterns and their readers.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = [
    "HANDSHAKE",
    "LITERAL",
    "MISMATCH",
    "PATTERN",
    "handshake_failed",
    "handshake_record",
    "transfer_failed",
]

#: _log_failure's words
LITERAL = "NIXL transfer failure: "
#: the failure type (snake case), the caller's message after ". " if any, then the context (or the line's end: cut)
PATTERN = r"NIXL transfer failure: [a-z]+(?:_[a-z]+)+(?:\. [^|]*)?(?: \| Context: |\s*$)"


def transfer_failed(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """One request's (or one remote's requests') KV transfer failed: those requests' error, the engine serves on."""
    return Failure(FailureKind.REQUEST_ERROR, {"phase": "serving", "kv_transfer_failed": True}, False, None)


#: the handshake's two callback records (literal, pattern), read under nixl_connector.py's logger only
HANDSHAKE = ("Handshake ", r"^Handshake (?:failed for request \S+|with \S+ failed\s*$)")
#: _nixl_handshake's own exception (literal, pattern), its type's prefix or not
MISMATCH = (
    "Remote NIXL agent engine ID mismatch",
    r"^(?:RuntimeError: )?Remote NIXL agent engine ID mismatch\.",
)
_CAUSE = (
    "the decode instance's NIXL handshake with a prefill instance failed (its side channel answered for another engine "
    "than the request named, or not at all): those requests' KV blocks are marked invalid and recomputed or failed "
    "(kv_load_failure_policy), so the prefill-decode transfer does nothing for them"
)
_FIX = (
    "make each prefill instance's NIXL side channel reachable at the address the decode side is given: "
    "VLLM_NIXL_SIDE_CHANNEL_HOST set to that node's own routable address (its default, localhost, reaches the decode "
    "node's own instance when prefill and decode run on different nodes) and VLLM_NIXL_SIDE_CHANNEL_PORT unique per "
    "instance on a host; no vLLM flag helps"
)


def handshake_record(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """0.11.x's handshake callback records, under nixl_connector.py's logger only (``handshake_failed``)."""
    return handshake_failed(m, msg, ctx, run) if ctx.logger_file == "nixl_connector.py" else None


def handshake_failed(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """A NIXL handshake that failed (0.11.x's callback records, or the engine-ID mismatch it raised): the engine's error
    it serves on, the transfers of that remote's requests lost."""
    d = {
        "text": msg.strip()[:300],
        "phase": "serving",
        "alone": True,
        "kv_transfer_failed": True,
        "cause": _CAUSE,
        "fix": _FIX,
    }
    return Failure(FailureKind.ERROR_LINE, d, False, ("nixl", "handshake"))
