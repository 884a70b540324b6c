"""Advice that holds still: the live sidecar's recommendations across successive diagnoses.

Each diagnosis of a rolling window proposes values; a tuning recommendation (one answering
findings of the load: KV pressure, queues, batch size, latency) is shown only when it

- comes from a window without an outage: a hung or stalled engine, a crash, a failed start or vLLM
  down (`outage`). Such a window yields no tuning finding and no tuning recommendation, and the
  ones after it neither until the outage has left the window (`exclude_s`, the sidecar's window);
- persisted: the same value (within `Settings.advice_margin`) in `Settings.advice_confirm`
  consecutive diagnoses;
- moves a value shown before only after `Settings.advice_dwell_s` and by more than the margin;
- contradicts no finding beside it (a lower --max-num-seqs beside a queue bound by it).

Other recommendations (the engine did not start, an error) pass through at once. Pure: "now" is a
parameter (seconds, any clock), the state is a plain object the caller keeps.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from observe.advise.units import parse_bytes
from observe.findingids import FindingId
from observe.model import Finding, Recommendation
from observe.settings import Settings

__all__ = ["OUTAGE", "TUNING", "Steady", "contradicts", "hold", "outage"]

#: findings that say the engine did not serve: the window says nothing about tuning
_DOWN = (
    FindingId.ENGINE_STUCK,
    FindingId.ENGINE_STALLED,
    FindingId.ENGINE_CRASHED,
    FindingId.ENGINE_STARTUP_FAILED,
)
OUTAGE = frozenset(_DOWN)

#: findings of the load: what the window's traffic says about the flags
TUNING = frozenset(
    {
        FindingId.KV_CACHE_SATURATED,
        FindingId.PREEMPTIONS,
        FindingId.PREEMPTIONS_LIKELY,
        FindingId.SILENT_PREEMPTIONS,
        FindingId.LOW_MAX_CONCURRENCY,
        FindingId.QUEUE_MEMORY_BOUND,
        FindingId.QUEUE_SEQ_BOUND,
        FindingId.QUEUE_PREFILL_BOUND,
        FindingId.TOO_MANY_SEQS,
        FindingId.THROUGHPUT_COLLAPSE,
        FindingId.MAX_MODEL_LEN_UNUSED,
        FindingId.ITL_HIGH,
        FindingId.TTFT_SPIKES,
    }
)

_SEQ_FLAGS = ("--max-num-seqs", "--max-num-active-seqs")


@dataclass
class _Seen:
    rec: Recommendation | None  # None: the flag is to be left alone
    since: float  # when first seen (candidate) or shown
    count: int = 1


@dataclass
class Steady:
    """What one instance shows, and what is waiting to replace it."""

    shown: dict[str, _Seen] = field(default_factory=dict)
    pending: dict[str, _Seen] = field(default_factory=dict)
    outage_until: float | None = None  # tuning held back until then (the outage leaves the window)
    changes: list[tuple[float, str, Any, Any]] = field(default_factory=list)  # (at, flag, from, to)


def outage(findings: Sequence[Finding], *, up: bool | None = True) -> str | None:
    """Why the window says nothing about tuning (an outage finding, or vLLM not answering); None."""
    hit = next((f.id for f in findings if f.id in OUTAGE), None)
    if hit is not None:
        return str(hit)
    return "vLLM down" if up is False else None


def tuning(r: Recommendation) -> bool:
    return bool(r.finding_ids) and all(i in TUNING for i in r.finding_ids)


def _num(v: Any) -> float | None:
    if isinstance(v, bool):
        return None
    if isinstance(v, (int, float)):
        return float(v)
    b = parse_bytes(v)
    return float(b) if b is not None else None


def _same(a: Recommendation | None, b: Recommendation | None, margin: float) -> bool:
    """Whether two proposals for a flag are the same advice: both none, or values within `margin`×."""
    if a is None or b is None:
        return a is b
    x, y = _num(a.suggested), _num(b.suggested)
    if x is None or y is None or x <= 0 or y <= 0:
        return bool(a.suggested == b.suggested)
    return max(x, y) / min(x, y) < margin


def contradicts(r: Recommendation, findings: Sequence[Finding]) -> str | None:
    """The finding beside it that a recommendation pulls against (None: none does): a lower sequence
    cap beside a queue bound by --max-num-seqs, a higher one beside throughput that falls with more
    sequences (and no such queue)."""
    if r.flag not in _SEQ_FLAGS:
        return None
    ids = {f.id: f for f in findings}
    new, cur = _num(r.suggested), _num(r.current)
    queue = ids.get(FindingId.QUEUE_SEQ_BOUND)
    if cur is None and queue is not None:  # a new admission cap: below the --max-num-seqs in force
        cur = _num(queue.data.get("max_num_seqs"))
    if new is None or cur is None:
        return None
    if new < cur and FindingId.QUEUE_SEQ_BOUND in ids:
        return str(FindingId.QUEUE_SEQ_BOUND)
    if new > cur and FindingId.TOO_MANY_SEQS in ids and FindingId.QUEUE_SEQ_BOUND not in ids:
        return str(FindingId.TOO_MANY_SEQS)
    return None


def _step(st: Steady, flag: str, rec: Recommendation | None, now: float, s: Settings) -> None:
    """Fold one diagnosis's proposal for `flag` into what is shown."""
    shown = st.shown.get(flag)
    if shown is not None and _same(shown.rec, rec, s.advice_margin):
        st.pending.pop(flag, None)  # the advice shown still holds
        return
    if shown is None and rec is None:
        st.pending.pop(flag, None)
        return
    p = st.pending.get(flag)
    if p is not None and _same(p.rec, rec, s.advice_margin):
        p.count += 1
        p.rec = rec  # the latest words for the same advice
    else:
        p = st.pending[flag] = _Seen(rec, now)
    if p.count < s.advice_confirm or (shown is not None and now - shown.since < s.advice_dwell_s):
        return
    old = shown.rec.suggested if shown is not None and shown.rec is not None else None
    st.changes.append((now, flag, old, rec.suggested if rec is not None else None))
    del st.changes[:-100]  # the latest hundred are kept
    del st.pending[flag]
    if rec is None:
        st.shown.pop(flag, None)
    else:
        st.shown[flag] = _Seen(rec, now)


def hold(
    st: Steady,
    findings: Sequence[Finding],
    recs: Sequence[Recommendation],
    now: float,
    settings: Settings,
    *,
    why_out: str | None = None,
    exclude_s: float = 0.0,
) -> tuple[list[Finding], list[Recommendation]]:
    """The findings and recommendations to show for one diagnosis at `now`, `st` updated.

    ``why_out`` (see `outage`) marks the window as an outage: its tuning findings are left out, and
    the tuning advice neither moves nor shows until ``exclude_s`` after the last such window."""
    if why_out is not None:
        st.outage_until = now + exclude_s
    held_back = st.outage_until is not None and now < st.outage_until
    if held_back:
        findings = [f for f in findings if f.id not in TUNING]
        return findings, [r for r in recs if not tuning(r)]
    st.outage_until = None
    proposed = {r.flag: r for r in recs if tuning(r)}
    for flag in dict.fromkeys([*st.shown, *st.pending, *proposed]):
        _step(st, flag, proposed.get(flag), now, settings)
    out = [r for r in recs if not tuning(r)]
    taken = {r.flag for r in out}
    out += [
        x.rec
        for flag, x in st.shown.items()
        if x.rec is not None and flag not in taken and not contradicts(x.rec, findings)
    ]
    return list(findings), out
