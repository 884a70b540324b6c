"""Core: which engine errors are a crash or a rejected launch, in bounded words an alert can carry.

The sidecar counts crashes in ``observe_engine_crashes_total{cause}`` and names the current
start-up failure in ``observe_engine_startup_failure_info{kind, reason, fix}``; the alerts
(``observe.monitoring.alerts``) page on both and quote these words. Label values must stay few: a crash's
cause is one of ``CAUSES``, a reason is one line cut at ``MAX_LABEL`` characters. Pure, no I/O.
"""

from __future__ import annotations

import re

from observe.failures import kinds as failurekinds
from observe.failures.kinds import CrashCause, FailureKind
from observe.model import EngineError

__all__ = [
    "CAUSES",
    "REJECT_KINDS",
    "STARTUP_KINDS",
    "GENERIC_STARTUP_KINDS",
    "MAX_LABEL",
    "crash_cause",
    "startup_kind",
    "reason_line",
    "one_line",
    "headline",
]

#: crash cause (label value) → what it means, one sentence (the runbook and the alert text)
CAUSES = failurekinds.CAUSES
#: engine-error kinds that mean vLLM refused the launch at start-up: the argument parser, config
#: validation, a value the model or the memory cannot take (a `rejected` launch, observe.launches)
REJECT_KINDS = failurekinds.REJECT_KINDS
#: the start-up failures that only say "it failed" (a specific kind of the same launch wins over them)
GENERIC_STARTUP_KINDS = failurekinds.GENERIC_STARTUP_KINDS
#: engine-error kinds that mean the launch was rejected or failed to start
STARTUP_KINDS = failurekinds.STARTUP_KINDS

#: the parser's forms of a running engine's own fatal error, its traceback below it (V1 core.py's
#: "EngineCore encountered a fatal error.", V0 async_llm_engine's "Engine background task failed")
FATAL_FORMS = ("fatal_error", "background_failed")

MAX_LABEL = 200  # characters of a label value taken from a log line

_OOM_KILLER = re.compile(r"oom[-_ ]?kill|Out of memory: Kill", re.I)
_PYDANTIC_TAIL = re.compile(r"\s*\[type=\w+,.*$")  # pydantic's "[type=value_error, input_value=…]"
#: the parser's form for vLLM 0.32's "[shutdown] MPClient: engine core exited unexpectedly; starting
#: cleanup" (vllm/v1/engine/core_client.py, monitor_engine_cores): the only line a SIGKILLed engine core leaves
_SILENT_EXIT = "mpclient_exited"
_SIGNAL = re.compile(r"\bSIG[A-Z]{2,6}\b|signal \d+|exit code -\d+|exitcode=-\d+", re.I)


def one_line(text: object, limit: int = MAX_LABEL) -> str:
    """A label-safe single line: whitespace folded, cut at ``limit`` characters."""
    s = " ".join(str(text or "").split())
    return s if len(s) <= limit else s[: limit - 1] + "…"


def crash_cause(ev: EngineError) -> str | None:
    """The cause (a key of CAUSES) when this error says a serving engine died unexpectedly; None
    for anything else (a start-up failure, a requested shutdown's noise, a non-fatal exception)."""
    if ev.kind == FailureKind.ENGINE_CRASHED:
        text = " ".join(str(v) for v in (ev.message, *ev.details.values()))
        if _OOM_KILLER.search(text):
            return CrashCause.OOM_KILLER
        if ev.details.get("signal") or _SIGNAL.search(text):
            return CrashCause.KILLED
        if ev.details.get("form") in FATAL_FORMS:
            return CrashCause.EXCEPTION
        if ev.details.get("form") == _SILENT_EXIT:
            # vLLM 0.32+: the API server's monitor saw the engine core process vanish. An engine core
            # that raised logs "EngineCore encountered a fatal error." first (counted as `exception`
            # before this line comes), and SIGTERM/SIGINT are logged by its own handler; gone without
            # a word, it was ended by a signal it could not catch (SIGKILL: kill -9, the OOM killer)
            return CrashCause.KILLED
        return CrashCause.ENGINE_DEAD
    if ev.kind == FailureKind.WORKER_EXCEPTION and ev.fatal:
        return CrashCause.EXCEPTION
    return None


def startup_kind(ev: EngineError) -> str | None:
    """The start-up failure kind this error reports: one of STARTUP_KINDS, or a worker's exception
    the diagnosis calls a failed start (failurekinds.failed_start: it raised in a start-up method;
    naming none, the engine's own failure to start that follows is the one reported); else None."""
    return ev.kind if ev.kind in STARTUP_KINDS or failurekinds.failed_start(ev) else None


def reason_line(ev: EngineError) -> str:
    """vLLM's own reason for a rejected launch, one line: the validator's or argparse's sentence
    when the parser read one (``details['reason_line' | 'text' | 'why']``), else the message. A
    worker's exception says only where it raised (its cause is in the traceback: observe.sidecar.launch.with_cause)."""
    if ev.kind == FailureKind.WORKER_EXCEPTION:
        method = ev.details.get("method")
        return one_line(f"a worker raised in {method}()" if method else "a worker raised")
    for key in ("reason_line", "text", "why"):
        v = ev.details.get(key)
        if isinstance(v, str) and v.strip():
            return one_line(_PYDANTIC_TAIL.sub("", v))
    return one_line(_PYDANTIC_TAIL.sub("", ev.message))


# vllm/v1/worker/cpu_worker.py @ v0.32.0 (determine_available_memory): the explicit branch names the
# requested size alone, the automatic one "(requested/worker) GiB"
_CPU_KV_TOO_BIG = re.compile(
    r"Available memory on node \d+ \(([\d.]+)/[\d.]+ GiB\) on kv cache allocation is less than "
    r"requested memory for kv \(([\d.]+)(/[\d.]+)? GiB\)"
)


def headline(text: str, flags: dict[str, object], env: dict[str, str] | None = None) -> str | None:
    """Cause and fix first, for a failure whose numbers vLLM states: ``KV cache 1000 GiB > 21.72 GiB
    available: lower VLLM_CPU_KVCACHE_SPACE``. The explicit KV size on CPU comes from
    --kv-cache-memory-bytes or, when the launch's flags (vLLM's non-default args) lack it, from the
    environment: vLLM 0.32 does not log its environment, and VLLM_CPU_KVCACHE_SPACE is the only
    variable that sets it (vllm/platforms/cpu.py); a pasted command's ``env`` gives its value.
    None for any other text."""
    m = _CPU_KV_TOO_BIG.search(text or "")
    if m is None:
        return None
    avail, req, auto = f"{float(m.group(1)):g}", f"{float(m.group(2)):g}", m.group(3)
    if auto:
        knob = "--gpu-memory-utilization (the CPU backend's share of memory)"
    elif "--kv-cache-memory-bytes" in flags:
        knob = "--kv-cache-memory-bytes"
    else:
        knob = "VLLM_CPU_KVCACHE_SPACE"
        if (env or {}).get(knob):
            knob += f" (set to {(env or {})[knob]})"
    return one_line(f"KV cache {req} GiB > {avail} GiB available: lower {knob}")
