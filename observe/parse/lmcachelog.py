"""LMCache's own record that its engine failed to initialize in a vLLM worker: the KV connector's start-up failed.

LMCache (the KV cache layer vLLM loads as ``LMCacheConnectorV1``) logs through its own logger, not vLLM's: its
format is ``[<date> <time>,<ms>] LMCache <LEVEL>: <message> (<file>:<line>:<logger>)`` (``lmcache/logging.py``
``build_format``), wrapped in colour codes (red for ERROR, ``\\x1b[31;20m``) that a paste may keep as a bare
``[31;20m`` remnant (``envelope`` strips both), and behind vLLM's process prefix (``(Worker_TP0 pid=N)``) when the
worker's output is captured. ``LMCacheEngine.mark_init_failed`` (``lmcache/v1/cache_engine.py``) logs
"LMCacheEngine marked as init failed: <reason>" at ERROR; ``LMCacheManager`` calls it when building the engine or its
``post_init`` (after vLLM registered the KV caches: the storage backends are created there) raised, its reason the
exception's text or, in later releases, the whole formatted traceback (its frames follow on their own lines), then
logs "Failed during post_init: … System will operate in degraded mode (recompute)." Nothing else logs those words.

So the record is the connector's start-up failing in a worker (phase startup, whatever the excerpt shows before
it). What follows decides the rest, and the record alone does not: LMCache means to go on without its engine, but
vLLM's connector bare-asserts on it (``start_load_kv`` / ``get_num_new_matched_tokens``, LMCache#2854,
vllm-project/vllm#44249, LMCache#3487), so the engine dies at its first request (EngineDeadError). Read as an error
of the engine at start-up, not as a failed start (the engine may still come up) and never as a crash while serving:
``failing.engine_error`` makes it critical unless the log shows the engine serving after it (then a warning: the
degraded mode held). Only that record of LMCache's logger, at ERROR; its other records (INFO, WARNING, other ERRORs)
stay unread. Pure: a row for ``failrows``.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["LITERAL", "PATTERN", "init_failed"]

#: mark_init_failed's words (cache_engine.py), with or without its reason
LITERAL = "LMCacheEngine marked as init failed"
#: LMCache's record head (lmcache/logging.py: "[%(asctime)s] LMCache %(levelname)s:"; ``envelope`` takes the bracketed
#: stamp as the line's outer time, a paste may have lost it), its level ERROR, then the words, a reason or the location
PATTERN = (
    r"^\s*(?:\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:,\d{1,6})?\] )?LMCache ERROR: LMCacheEngine marked as init failed"
    r"(?=:|\s*\(|\s*$)"
)
_CAUSE = (
    "LMCache's own ERROR record 'LMCacheEngine marked as init failed' (cache_engine.py mark_init_failed: building "
    "the LMCache engine or its post_init in a vLLM worker raised): the KV connector's start-up failed; LMCache goes "
    "on in a degraded (recompute) mode, but vLLM's LMCacheConnectorV1 asserts on the missing engine at the first "
    "request (LMCache#2854, vllm-project/vllm#44249): a later EngineDeadError, or the engine serving after it, "
    "decides whether the engine died or ran degraded"
)
#: what the record leaves open, said in the finding's evidence (failing.engine_error)
DECIDES = (
    "LMCache's KV connector failed to initialize in a worker (LMCache's own record); LMCache goes on degraded "
    "(recompute), but vLLM's LMCacheConnectorV1 fails at the first request (LMCache#2854): an EngineDeadError at "
    "the first request, or the engine serving after it, decides whether it died or ran degraded"
)


def init_failed(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """LMCache's record that its engine failed to initialize: an error of the engine at start-up (the connector's)."""
    text = msg.split("LMCache ERROR: ", 1)[1].strip()
    d = {"text": text[:300], "phase": "startup", "cause": _CAUSE, "decides": DECIDES}
    return Failure(FailureKind.ERROR_LINE, d, False, ("lmcache", "init_failed"))
