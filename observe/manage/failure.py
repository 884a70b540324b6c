"""Why a vLLM launch failed or crashed, read from its log, as one sentence."""

from __future__ import annotations

from typing import Any

from observe import parse
from observe.failures import kinds as failurekinds
from observe.failures import shutdown
from observe.failures.kinds import FailureKind
from observe.model import EngineError

# log lines that say why vLLM went away when the parser found no error event (a killed engine, the OOM killer)
_CRASH_HINTS = (
    ("engine core exited unexpectedly", "the EngineCore process died"),
    ("EngineDeadError", "the EngineCore process died"),
    ("Killed", "the process was killed (out of memory?)"),
)
_ERROR_WORDS = ("Error:", "ValueError", "RuntimeError", "Exception", "ERROR", "error:")


def failure_cause(log_text: str, *, source: str = "vllm.log") -> str:
    """The cause of a failed start or a crash, read from vLLM's log, as one sentence.

    Uses the log parser's EngineError events (kind, message, and the largest max-model-len that
    fits when vLLM estimated it); else a line that says the engine died or was killed; else the
    last error-looking line.
    """
    try:
        events = parse.parse_text(log_text, source)
    except Exception:  # the cause of a crash must be reported even if the parser trips on the log
        events = []
    errors = [
        e
        for e in events
        if isinstance(e, EngineError)
        and not shutdown.is_noise(e)
        and e.kind not in (*failurekinds.RAW, FailureKind.ENGINE_HANG)
    ]
    if errors and all(e.kind == FailureKind.ENGINE_CRASHED for e in errors):
        e = errors[0]  # killed or crashed with no failure of its own in the log: what vLLM said of it
        what = "a worker process died" if "Worker" in e.message else "the EngineCore process died"
        return f"{what}: {_clip(e.message)}" + (
            f" ({e.details['signal']})" if e.details.get("signal") else ""
        )
    if errors:
        best = max(
            errors,
            key=lambda e: (
                e.kind not in failurekinds.WRAPPERS,
                e.fatal,
            ),
        )
        msg = f"{best.kind}: {_clip(best.message)}"
        fits = _max_len_that_fits(best.details)
        if fits is not None:
            msg += f" (the largest --max-model-len that fits: {fits})"
        return msg
    for needle, what in _CRASH_HINTS:
        line = next((ln for ln in reversed(log_text.splitlines()) if needle in ln), None)
        if line is not None:
            return f"{what}: {_clip(line.split('] ', 1)[-1].strip())}"
    return _last_error_line(log_text)


def _max_len_that_fits(details: dict[str, Any]) -> int | None:
    v = details.get("estimated_max_model_len")
    return int(v) if isinstance(v, (int, float)) else None


def _last_error_line(text: str) -> str:
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in reversed(lines):
        if any(k in ln for k in _ERROR_WORDS) and "Traceback" not in ln:
            return _clip(ln)
    return _clip(lines[-1]) if lines else "no output"


def _clip(s: str, n: int = 400) -> str:
    s = "".join(ch if ch.isprintable() else "?" for ch in s)
    return s if len(s) <= n else s[: n - 1] + "…"
