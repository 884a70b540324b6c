"""Every failure kind the log parser reports (``model.EngineError.kind``): the one place each is
written, with what it means, the finding it feeds, the alert that pages on it and its runbook
section. The parser builds its events with these, the rules and the sidecar read them, and the sets
other modules used to restate (the kinds a traceback belongs to, the kinds reported once, a
rejected launch, a crash's wrappers) are derived here. Also the causes of a crash (the
``observe_engine_crashes_total{cause}`` label values). Pure, no I/O.

A new failure kind: a member of ``FailureKind``, its ``Kind`` row in ``KINDS``, and the parser's
row that emits it (observe/parse/failures.py); its finding's rule when it needs a new one.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from observe.findingids import FindingId

__all__ = [
    "FailureKind",
    "Kind",
    "KINDS",
    "CrashCause",
    "CAUSES",
    "ALERT_OOM",
    "ALERT_STARTUP_FAILED",
    "ALERT_CRASHED",
    "EXPLAINED_BY",
    "REPORTED_ONCE",
    "REJECT_KINDS",
    "GENERIC_STARTUP_KINDS",
    "STARTUP_KINDS",
    "WRAPPERS",
    "RAW",
    "KV_KINDS",
    "NOT_CAUSES",
    "STARTUP_METHODS",
    "failed_start",
    "kinds_feeding",
    "kinds_alerted",
    "runbook_section",
    "runbook",
    "alert_of",
]


class FailureKind(StrEnum):
    # vLLM refused the launch: its arguments, its config, what the model or the memory can take
    INVALID_LAUNCH_ARGS = "invalid_launch_args"
    INVALID_CONFIG = "invalid_config"
    MAX_POSITION_EXCEEDED = "max_position_exceeded"
    MAX_SEQ_LEN_EXCEEDS_KV = "max_seq_len_exceeds_kv"
    KV_NEEDED_EXCEEDS_AVAILABLE = "kv_needed_exceeds_available"
    NO_AVAILABLE_MEMORY = "no_available_memory"
    FREE_MEMORY_BELOW_UTILIZATION = "free_memory_below_utilization"
    # the launch failed to start, saying only that
    STARTUP_FAILED = "startup_failed"
    ENGINE_CORE_FAILED = "engine_core_failed"
    # failed or died
    OOM = "oom"
    WORKER_EXCEPTION = "worker_exception"
    ENGINE_CRASHED = "engine_crashed"
    # requests rejected; the engine waits on a peer
    PROMPT_TOO_LONG = "prompt_too_long"
    REQUEST_ERROR = "request_error"
    ENGINE_HANG = "engine_hang"
    # raw material: the catch-all's and a crash's root cause
    EXCEPTION = "exception"
    ERROR_LINE = "error_line"
    # an error logged while stopping as asked (observe.failures.shutdown)
    SHUTDOWN_NOISE = "shutdown_noise"


#: the worker methods vLLM's executor runs only while the engine is built, before it serves: V0's
#: ``_run_workers`` (gpu/ray/multiproc executors and ``LLMEngine._initialize_kv_caches``, 0.4 → 0.10)
#: and V1's ``collective_rpc`` from ``EngineCore.__init__`` / ``_initialize_kv_caches`` (0.8 → 0.32).
#: A worker that raised in one of them failed the start (vLLM's V1 says "EngineCore failed to start"),
#: so its ``worker_exception`` feeds engine_startup_failed, not the crash's engine_error.
STARTUP_METHODS = frozenset(
    {
        "init_worker",
        "init_device",
        "load_model",
        "determine_num_available_blocks",
        "initialize_cache",
        "determine_available_memory",
        "get_kv_cache_spec",
        "initialize_from_config",
        "compile_or_warm_up_model",
    }
)

#: the alerts that page on failure kinds (observe.monitoring.alerts; each is a heading of docs/runbooks.md)
ALERT_OOM = "VLLMEngineOOM"
ALERT_STARTUP_FAILED = "VLLMEngineStartupFailed"
ALERT_CRASHED = "VLLMEngineCrashed"


@dataclass(frozen=True)
class Kind:
    """What one failure kind means. ``fatal``: the engine does not survive it (the parser's events say
    so one by one: a pydantic header alone is not). ``phase``: when it happens ("startup" | "serving" |
    "shutdown" | "any"). ``explains``: its own finding explains the tracebacks and ERROR records near
    it (the catch-all leaves them out). ``once``: reported once per traceback (a re-logged or
    re-raised failure within parse.dedup's window counts once). ``rejected``: vLLM refused the launch
    (a ``rejected`` launch, observe.launches). ``wrapper``: it only says something failed; the cause
    is another kind or the first exception. ``raw``: an exception line or ERROR record no row knows
    (the catch-all's raw material). ``cause``: it names what went wrong (a crash's root cause can be
    it). ``findings``: the findings it feeds, its own first; ``title`` / ``severity``: that finding's
    when rules.failures.engine_errors builds it from the event (None: another rule does). ``alert``:
    the alert that pages on it (its runbook section is the alert's heading)."""

    meaning: str
    fatal: bool
    phase: str
    findings: tuple[FindingId, ...] = ()
    explains: bool = True
    once: bool = True
    rejected: bool = False
    wrapper: bool = False
    raw: bool = False
    cause: bool = True
    title: str | None = None
    severity: str = "critical"
    alert: str | None = None


_KV_TITLE = "Engine refused to start: --max-model-len does not fit the KV cache"
_NOT_STARTED = "Engine failed to start"

KINDS: dict[FailureKind, Kind] = {
    FailureKind.INVALID_LAUNCH_ARGS: Kind(
        "argparse rejected the command line (an unknown flag, an invalid value or choice)",
        True,
        "startup",
        (FindingId.LAUNCH_REJECTED,),
        rejected=True,
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.INVALID_CONFIG: Kind(
        "a config validation error: pydantic's or vLLM's own checks",
        True,
        "startup",
        (FindingId.LAUNCH_REJECTED,),
        rejected=True,
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.MAX_POSITION_EXCEEDED: Kind(
        "--max-model-len is longer than the model's derived context",
        True,
        "startup",
        (FindingId.MAX_MODEL_LEN_EXCEEDS_MODEL, FindingId.LAUNCH_REJECTED),
        rejected=True,
        title="--max-model-len exceeds the model's context",
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.MAX_SEQ_LEN_EXCEEDS_KV: Kind(
        "V0: the KV cache cannot hold one request of --max-model-len tokens",
        True,
        "startup",
        (FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,),
        rejected=True,
        title=_KV_TITLE,
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.KV_NEEDED_EXCEEDS_AVAILABLE: Kind(
        "V1: one request of --max-model-len tokens needs more KV-cache memory than is available",
        True,
        "startup",
        (FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,),
        rejected=True,
        title=_KV_TITLE,
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.NO_AVAILABLE_MEMORY: Kind(
        "no memory was left for the KV cache after the weights and activations",
        True,
        "startup",
        (FindingId.NO_KV_CACHE_MEMORY,),
        rejected=True,
        title="No memory left for the KV cache",
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.FREE_MEMORY_BELOW_UTILIZATION: Kind(
        "the device's free memory at start-up is below what --gpu-memory-utilization asks for",
        True,
        "startup",
        (FindingId.GPU_MEMORY_BUSY,),
        rejected=True,
        title="Free device memory is below --gpu-memory-utilization",
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.STARTUP_FAILED: Kind(
        "the launch failed to start (no more said)",
        True,
        "startup",
        (FindingId.ENGINE_STARTUP_FAILED,),
        once=False,
        wrapper=True,
        cause=False,
        title=_NOT_STARTED,
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.ENGINE_CORE_FAILED: Kind(
        "the engine core failed to initialise (its cause is logged before it)",
        True,
        "startup",
        (FindingId.ENGINE_STARTUP_FAILED,),
        wrapper=True,
        cause=False,
        title=_NOT_STARTED,
        alert=ALERT_STARTUP_FAILED,
    ),
    FailureKind.OOM: Kind(
        "the device ran out of memory (CUDA, HIP, XPU, MPS, NPU)",
        True,
        "any",
        (FindingId.CUDA_OOM,),
        title="Out of memory",
        alert=ALERT_OOM,
    ),
    FailureKind.WORKER_EXCEPTION: Kind(
        "a worker raised an exception (its traceback holds the cause); fatal: a crash, or a failed "
        "start when it raised in one of STARTUP_METHODS (or the engine core then failed to start)",
        True,
        "any",
        (FindingId.ENGINE_ERROR,),
        once=False,
        wrapper=True,
        cause=False,
        title="Worker raised an exception",
        alert=ALERT_CRASHED,
    ),
    FailureKind.ENGINE_CRASHED: Kind(
        "the engine core or a worker exited unasked: killed, crashed, or gone with the OOM killer",
        True,
        "any",
        (FindingId.ENGINE_CRASHED,),
        cause=False,
        alert=ALERT_CRASHED,
    ),
    FailureKind.PROMPT_TOO_LONG: Kind(
        "a request's prompt was rejected as longer than the limit",
        False,
        "serving",
        (FindingId.PROMPT_TOO_LONG,),
        once=False,
        title="Prompts rejected as too long",
        severity="warning",
    ),
    FailureKind.REQUEST_ERROR: Kind(
        "one request failed in the API server's preprocessing (its chat template, its tokenization) or in parsing "
        "its tool calls: vLLM logs the traceback and answers that request (an error response, or the text without "
        "tool calls); the engine serves on",
        False,
        "serving",
        explains=False,  # only its own record's traceback (failing.unexplained), never the errors near it
        once=False,
        cause=False,
    ),
    FailureKind.ENGINE_HANG: Kind(
        "vLLM's hang warning: a process waited that long for the shared-memory ring",
        False,
        "any",
        (FindingId.ENGINE_STUCK,),
        explains=False,
        once=False,
        cause=False,
    ),
    FailureKind.EXCEPTION: Kind(
        "an exception line no other row knows: a crash's root cause, or the catch-all's",
        False,
        "any",
        (FindingId.ENGINE_ERROR,),
        explains=False,
        raw=True,
    ),
    FailureKind.ERROR_LINE: Kind(
        "an ERROR / CRITICAL record no other row knows: the catch-all's raw material",
        False,
        "any",
        (FindingId.ENGINE_ERROR,),
        explains=False,
        raw=True,
        cause=False,
    ),
    FailureKind.SHUTDOWN_NOISE: Kind(
        "an engine-dead error logged while stopping as asked: not a failure",
        False,
        "shutdown",
        explains=False,
        cause=False,
    ),
}


class CrashCause(StrEnum):
    """Why a serving engine died (observe.failures.crashes.crash_cause): the label values of
    observe_engine_crashes_total{cause}."""

    KILLED = "killed"
    OOM_KILLER = "oom_killer"
    ENGINE_DEAD = "engine_dead"
    EXCEPTION = "exception"


#: crash cause (label value) → what it means, one sentence (the runbook and the alert text)
CAUSES: dict[str, str] = {
    CrashCause.KILLED: "the engine process was killed by a signal (kill -9, the OOM killer, a runtime) and logged no error of its own",
    CrashCause.OOM_KILLER: "the kernel's OOM killer ended the engine (host memory ran out)",
    CrashCause.ENGINE_DEAD: "the engine core process exited while serving, unasked (the log does not say how)",
    CrashCause.EXCEPTION: "an exception in the engine or a worker ended it",
}

#: crash cause → the page's headline: the cause and what to do, first (VLLMEngineCrashed's summary)
CAUSE_HEADLINES: dict[str, str] = {
    CrashCause.KILLED: "engine core killed by a signal (likely the OOM killer, or kill -9): check the host's "
    "memory and the pod's memory limit",
    CrashCause.OOM_KILLER: "engine core ended by the kernel's OOM killer: give the host or pod more memory, "
    "or lower the KV cache (VLLM_CPU_KVCACHE_SPACE, --gpu-memory-utilization) or --max-num-seqs",
    CrashCause.ENGINE_DEAD: "engine core exited unasked, no error logged: read the system log (dmesg) for a "
    "kill or a segfault",
    CrashCause.EXCEPTION: "an exception ended the engine: read its traceback before the exit "
    "(`observe diagnose` names it)",
}


def kinds_feeding(finding: FindingId) -> tuple[FailureKind, ...]:
    """The kinds that feed this finding."""
    return tuple(k for k, v in KINDS.items() if finding in v.findings)


def kinds_alerted(alert: str) -> tuple[FailureKind, ...]:
    """The kinds this alert pages on."""
    return tuple(k for k, v in KINDS.items() if v.alert == alert)


def runbook(alert: str) -> str:
    """An alert's runbook section: docs/runbooks.md's anchor of its heading."""
    return f"docs/runbooks.md#{alert.lower()}"


def runbook_section(kind: FailureKind) -> str | None:
    """The runbook section (docs/runbooks.md's anchor) for this kind: its alert's heading."""
    alert = KINDS[kind].alert
    return None if alert is None else runbook(alert)


def alert_of(finding: FindingId) -> str | None:
    """The alert that pages on the failure kinds whose own finding this is (None: none, or several)."""
    got = {v.alert for v in KINDS.values() if v.findings[:1] == (finding,) and v.alert is not None}
    return got.pop() if len(got) == 1 else None


def _where(**want: bool) -> tuple[FailureKind, ...]:
    return tuple(k for k, v in KINDS.items() if all(getattr(v, f) == b for f, b in want.items()))


#: kinds whose own finding explains the tracebacks and ERROR records around them
EXPLAINED_BY = frozenset(_where(explains=True))
#: kinds reported once per traceback (observe.parse.dedup)
REPORTED_ONCE = frozenset(_where(once=True))
#: kinds that mean vLLM refused the launch at start-up
REJECT_KINDS = _where(rejected=True)
#: the start-up failures that only say "it failed" (a specific kind of the same launch wins over them)
GENERIC_STARTUP_KINDS = tuple(k for k in _where(wrapper=True) if KINDS[k].phase == "startup")
#: kinds that mean the launch was rejected or failed to start
STARTUP_KINDS = REJECT_KINDS + GENERIC_STARTUP_KINDS
#: kinds whose finding is max_model_len_exceeds_kv_cache: the KV cache cannot hold one request
KV_KINDS = kinds_feeding(FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE)
#: kinds that only wrap a failure (its cause is another kind or the first exception)
WRAPPERS = _where(wrapper=True)
#: an exception line or ERROR record no row knows
RAW = _where(raw=True)
#: kinds a crash's root cause is never read from
NOT_CAUSES = frozenset(_where(cause=False))


def failed_start(ev: Any, errors: Iterable[Any] = ()) -> bool:
    """Whether this failure is a worker's exception that failed the launch's start (engine_startup_failed,
    paged as VLLMEngineStartupFailed) rather than one that crashed a serving engine (engine_error,
    VLLMEngineCrashed): raised in a method run only while the engine is built (STARTUP_METHODS), or,
    naming none, followed by the engine's own failure to start (a GENERIC_STARTUP_KINDS error in
    ``errors`` that is not a dead engine's). The one judgement: the diagnosis asks it with the launch's
    errors, the live sidecar (observe.sidecar.launch) as each error is read."""
    if ev.kind != FailureKind.WORKER_EXCEPTION:
        return False
    method = ev.details.get("method")
    if method is not None:
        return method in STARTUP_METHODS
    return any(x.kind in GENERIC_STARTUP_KINDS and not x.details.get("engine_dead") for x in errors)
