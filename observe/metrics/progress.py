"""One pure rule for "no progress": requests in flight while no token is produced.

The offline detector (stats lines, saved /metrics snapshots), the sidecar, ``/healthz``, ``top``'s
STUCK and the ``VLLMEngineStuck`` alert all judge a wedged engine by this one rule and by
``Settings.stuck_after_s``. Pure: the caller turns what it read into :class:`Point` values (a
/metrics read: :func:`from_scrape`, the one reading of vLLM's counters as progress).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from observe.metrics import metricmath, names
from observe.model import Scrape
from observe.timeline import naive  # (pandas is imported only on first use there)

__all__ = ["Point", "Stuck", "from_scrape", "stretches", "stuck"]


@dataclass(frozen=True, slots=True)
class Point:
    t: datetime
    running: float | None
    waiting: float | None
    tokens: float | None  # cumulative prompt+generation tokens (a counter), None if unknown


@dataclass(frozen=True, slots=True)
class Stuck:
    since: datetime  # first point of the flat stretch with requests in flight
    until: datetime  # the last point
    seconds: float
    running: float
    waiting: float


def from_scrape(sc: Scrape, at: datetime | None = None) -> Point:
    """One good /metrics read as a Point: vllm:num_requests_running and _waiting, and the tokens
    vllm:prompt_tokens_total + vllm:generation_tokens_total (unknown without the generation
    counter). Timed by the read's own stamp (``at`` when it has none), as naive UTC."""
    t = sc.at or at
    if t is None:
        raise ValueError("a /metrics read without a time cannot be a progress point")
    gen = metricmath.value(sc, names.GENERATION_TOKENS_TOTAL)
    prompt = metricmath.value(sc, names.PROMPT_TOKENS_TOTAL)
    return Point(
        naive(t),
        metricmath.value(sc, names.NUM_REQUESTS_RUNNING),
        metricmath.value(sc, names.NUM_REQUESTS_WAITING),
        None if gen is None else gen + (prompt or 0.0),
    )


def _in_flight(p: Point) -> bool:
    return (p.running or 0.0) + (p.waiting or 0.0) > 0


def stuck(points: Sequence[Point], after_s: float) -> Stuck | None:
    """The trailing stretch over which requests were in flight (running+waiting > 0) at every point
    and the token counter did not move, if it lasts at least after_s; counter resets (value drops)
    end a stretch.

    A point whose token counter is unknown cannot show a flat counter, so it ends a stretch too
    (unknown is never read as "no progress"). ``points`` are in time order.
    """
    if not points:
        return None
    last = points[-1]
    if last.tokens is None or not _in_flight(last):
        return None
    first = last
    for p in reversed(points[:-1]):
        # p.tokens > first.tokens is a reset between p and first; less is progress: both end it
        if _breaks(p, first):
            break
        first = p
    seconds = (last.t - first.t).total_seconds()
    if seconds < after_s:
        return None
    return Stuck(
        since=first.t,
        until=last.t,
        seconds=seconds,
        running=float(last.running or 0.0),
        waiting=float(last.waiting or 0.0),
    )


def _breaks(prev: Point, cur: Point) -> bool:
    """Whether ``prev`` cannot belong to the flat stretch that ``cur`` is in."""
    return prev.tokens is None or not _in_flight(prev) or prev.tokens != cur.tokens


def stretches(points: Sequence[Point], after_s: float) -> list[Stuck]:
    """Every stretch :func:`stuck` would report had the points ended there: each maximal flat
    stretch with requests in flight lasting at least after_s, in time order (an offline reading
    of a whole run; the live side asks :func:`stuck` of the points so far)."""
    out: list[Stuck] = []
    for i, p in enumerate(points):
        last_of_stretch = i + 1 == len(points) or _breaks(p, points[i + 1])
        if not last_of_stretch or p.tokens is None or not _in_flight(p):
            continue
        j = i
        while j > 0 and not _breaks(points[j - 1], points[j]):
            j -= 1
        got = stuck(points[j : i + 1], after_s)
        if got is not None:
            out.append(got)
    return out
