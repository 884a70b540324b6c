"""engine_stuck, offline: a wedged engine read from the stats lines, saved /metrics snapshots and
vLLM's own hang warnings, judged by the one rule of observe.metrics.progress. Pure.

Five readings, each turned into :class:`observe.metrics.progress.Point` values (or an incident directly):

- ``stats``: consecutive stats lines at 0 tokens/s while Running or Waiting is above 0 (the token
  counter is the lines' throughput integrated over time);
- ``silence``: a stats line at 0 tokens/s with requests in flight, then no stats line for a long
  time. V1 logs a zero-throughput interval once and then goes quiet (the next ones go to DEBUG), V0
  logs only when a step completes, so the silence itself says that nothing was produced; it ends at
  the next stats line (one interval before it: that line's average covers only its own interval)
  or at the log's last timestamped line;
- ``metrics``: snapshots whose vllm:prompt_tokens_total + vllm:generation_tokens_total do not move
  while vllm:num_requests_running / _waiting are above 0;
- ``hang_warning``: the parser's ``engine_hang`` events (vLLM's "No available shared memory
  broadcast block found in 60 seconds ... processes are hanging"), once the engine serves or when
  they span Settings.stuck_after_s (at start-up one of them is usually a long compilation) and the start-up did not
  move on after them (a later start-up fact, or another failure: the workers were running a long step).
- ``stats_end``, offline only (``Context.log_ended``: a log read to its end, never the sidecar's window): the log
  ends in at least three stats lines (``END_LINES``, ``END_SPAN_S``) at 0 prompt and 0 generation tokens/s with
  requests running, none waiting, KV use unchanged — where vLLM's own scheduling says that no step finished in
  them (``stats_end``); shorter than stuck_after_s, which live readings keep.

One finding for the instance (the longest incident; ``incidents`` counts them), built by
:func:`finding` (the one builder of ``engine_stuck``: the sidecar's own /metrics reading uses it
too), and what the incident explains: ``explains()`` tells rules.latency that a TTFT spike right
after a stuck period is the stall (requests waited for the engine, not for prefill), and
``reconcile()`` drops ``engine_stalled`` for gaps the stuck incident already reports.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from observe.failures.kinds import FailureKind
from observe.findingids import FindingId
from observe.flags import vllmflags
from observe.metrics import names
from observe.metrics.progress import Point, Stuck, from_scrape, stretches
from observe.model import Finding

if TYPE_CHECKING:
    import pandas as pd

    from observe.rules.context import Context
else:
    from observe.timeline import pd  # imported on first use

__all__ = ["Incident", "engine_stuck", "explains", "finding", "incidents", "reconcile"]

_WAITED = re.compile(r"found in (\d+(?:\.\d+)?) seconds")
HANG_WAIT_S = 60.0  # vLLM's VLLM_RINGBUFFER_WARNING_INTERVAL default, when the message gives none


@dataclass(frozen=True, slots=True)
class Incident:
    stuck: Stuck
    source: str  # "stats" | "silence" | "metrics" | "hang_warning"
    where: str | None
    warnings: int = 0  # hang warnings (hang_warning only)
    running_known: bool = True


def _f(v: Any) -> float | None:
    if v is None:
        return None
    try:
        x = float(v)
    except (TypeError, ValueError):
        return None
    return None if math.isnan(x) else x


def _naive(t: datetime | None) -> datetime | None:
    if t is None:
        return None
    from observe.timeline import naive

    return naive(t)


def normal_interval_s(c: Context, df: pd.DataFrame) -> float:
    """How often vLLM logs a stats line while it works (the release data's default for the log's
    engine, V1 10 s, V0 5 s), times the frame's stride."""
    engine = "v1" if "v1" in c.summary.stats_formats else "v0"
    return vllmflags.stats_interval_s(engine) * float(df.attrs.get("stride", 1))


def log_points(c: Context) -> tuple[list[Point], set[datetime], dict[datetime, str]]:
    """The stats lines as Points (tokens = throughput integrated over time), with the points that
    stand for a silence, and each line's place in the log."""
    df = c.frame
    if df is None or "running" not in df.columns or not isinstance(df.index, pd.DatetimeIndex) or len(df) < 1:
        return [], set(), {}
    if "generation_tps" not in df.columns:
        return [], set(), {}
    normal = normal_interval_s(c, df)
    after = c.settings.stuck_after_s
    prompt = df["prompt_tps"] if "prompt_tps" in df.columns else pd.Series(float("nan"), index=df.index)
    waiting = df["waiting"] if "waiting" in df.columns else pd.Series(float("nan"), index=df.index)
    wheres = df["where"] if "where" in df.columns else pd.Series(None, index=df.index, dtype=object)
    pts: list[Point] = []
    silent: set[datetime] = set()
    where: dict[datetime, str] = {}
    total = 0.0
    prev: Point | None = None
    prev_rate: float | None = None
    for ts, p_tps, g_tps, run, wait, w in zip(
        df.index,
        prompt.values,
        df["generation_tps"].values,
        df["running"].values,
        waiting.values,
        wheres.values,
    ):
        t = ts.to_pydatetime()
        g, pr = _f(g_tps), _f(p_tps)
        rate = None if g is None else g + (pr or 0.0)
        if prev is not None and prev_rate == 0.0 and prev.tokens is not None:
            gap = (t - prev.t).total_seconds()
            end = t - timedelta(seconds=normal)
            if gap >= after and end > prev.t:  # quiet: nothing produced until the last interval
                s = Point(end, prev.running, prev.waiting, prev.tokens)
                pts.append(s)
                silent.add(end)
        if prev is not None and rate is not None:
            total += rate * max(0.0, (t - prev.t).total_seconds())
        cur = Point(t, _f(run), _f(wait), None if rate is None else total)
        pts.append(cur)
        if isinstance(w, str):
            where[t] = w
        prev, prev_rate = cur, rate
    # the log goes on (other stamped lines) but the stats lines stopped at 0 tokens/s with requests in flight
    last = _naive(c.summary.last_ts)
    if (
        prev is not None
        and prev_rate == 0.0
        and prev.tokens is not None
        and last is not None
        and last > prev.t
    ):
        pts.append(Point(last, prev.running, prev.waiting, prev.tokens))
        silent.add(last)
    return pts, silent, where


def metric_points(c: Context) -> tuple[list[Point], dict[datetime, str]]:
    """Saved /metrics snapshots as Points (tokens = prompt + generation token counters)."""
    timed = sorted(((s.at, s) for s in c.scrapes if s.ok and s.at is not None), key=lambda x: x[0])
    pts: list[Point] = []
    where: dict[datetime, str] = {}
    for _, s in timed:
        p = from_scrape(s)
        pts.append(p)
        where[p.t] = s.source
    return pts, where


def _stats_before(c: Context, t: datetime | None) -> tuple[float | None, float | None]:
    """Running and Waiting on the last stats line at or before t (the last line when t is None)."""
    df = c.frame
    if df is None or "running" not in df.columns or len(df) == 0:
        return None, None
    rows = df
    if t is not None and isinstance(df.index, pd.DatetimeIndex):
        rows = df[df.index <= pd.Timestamp(t)]
        if len(rows) == 0:
            return None, None
    r = rows.iloc[-1]
    return _f(r.get("running")), _f(r.get("waiting"))


def _moved_on(c: Context, last: datetime | None, source: str) -> bool:
    """Whether the start-up went on after the last hang warning: a start-up fact read later (the workers logged their
    next step: "Profiling CUDA graph memory", graph capture), or a start-up failure of another kind in the same log (a
    worker raised in a start-up step: it was running, not hung; a failed step while serving is no start-up's, eval32ax
    003). The engine core waited on its workers' long step (a max-autotune compile, a profile run), not on a hung
    worker (eval32ch 006)."""
    if last is None:
        return False
    fact = _naive(c.summary.startup_fact_ts)
    if fact is not None and fact > last:
        return True
    return any(
        e.kind != FailureKind.ENGINE_HANG
        and e.details.get("phase") not in (None, "serving", "unknown")
        and e.env.source == source
        and (t := _naive(e.env.ts)) is not None
        and t > last
        for e in c.summary.errors
    )


def hang_incident(c: Context) -> Incident | None:
    """vLLM's own hang warnings (the parser's engine_hang events) as one incident."""
    hangs = [e for e in c.summary.errors if e.kind == FailureKind.ENGINE_HANG]
    if not hangs:
        return None
    waits = []
    for e in hangs:
        w = _f(e.details.get("seconds"))
        if w is None:
            m = _WAITED.search(e.message or "")
            w = float(m.group(1)) if m else HANG_WAIT_S
        waits.append(w)
    first, last = hangs[0], hangs[-1]
    t0, t1 = _naive(first.env.ts), _naive(last.env.ts)
    if t0 is not None and t1 is not None:
        since, until = t0 - timedelta(seconds=waits[0]), t1
        seconds = (until - since).total_seconds()
    else:
        since = until = t0 or t1 or datetime.min
        seconds = sum(waits)
    serving_from = _naive(c.summary.stats_first_ts)
    serving = any(
        e.details.get("phase") == "serving"
        or (serving_from is not None and _naive(e.env.ts) is not None and _naive(e.env.ts) >= serving_from)  # type: ignore[operator]
        for e in hangs
    )
    if not serving and (
        seconds < c.settings.stuck_after_s or serving_from is not None or _moved_on(c, t1, first.env.source)
    ):
        return None  # at start-up: a long compilation, or the engine went on to serve after them
    running, waiting = _stats_before(c, t1)
    return Incident(
        Stuck(since=since, until=until, seconds=seconds, running=running or 0.0, waiting=waiting or 0.0),
        "hang_warning",
        f"{last.env.source}:{last.env.lineno}",
        warnings=len(hangs),
        running_known=running is not None or waiting is not None,
    )


#: the offline reading at the log's end: this many stats lines at least, covering this many seconds at least (each
#: line's average covers the interval since the line before it: three of vLLM's 10 s intervals)
END_LINES = 3
END_SPAN_S = 30.0
#: the KV cache device words of a stats line for which a step of tens of seconds cannot be a healthy one
_END_DEVICES = ("GPU",)


def _end_run(df: pd.DataFrame) -> int:
    """How many of the frame's last rows are at 0 prompt and 0 generation tokens/s with requests running, none
    waiting or swapped, running and KV use unchanged."""
    n, ref = 0, None
    for i in range(len(df) - 1, -1, -1):
        r = df.iloc[i]
        g, p, run, wait = (_f(r.get(k)) for k in ("generation_tps", "prompt_tps", "running", "waiting"))
        sw, kv = _f(r.get("swapped")), _f(r.get("kv_usage_pct"))
        if g != 0.0 or p != 0.0 or not run or wait != 0.0 or (sw or 0.0) != 0.0 or kv is None:
            break
        if ref is not None and (run, kv) != ref:
            break
        ref, n = (run, kv), n + 1
    return n


def end_incident(c: Context) -> Incident | None:
    """The ``stats_end`` reading (offline only). A finished log whose last stats lines, at least END_LINES of them
    over at least END_SPAN_S, are at 0.0 prompt and 0.0 generation tokens/s while the same requests run (Running
    unchanged, none waiting, swapped or pending) and KV use does not move, and that ends there (nothing stamped
    after them), on a GPU engine, when vLLM's own scheduling says no step finished in them:

    - V1 (the engine core's scheduler): the line's KV use is 0.0 %, so the running requests hold almost no blocks
      (a request's blocks are allocated as its tokens are scheduled, each step at most max_num_batched_tokens):
      a step over them is short, and a chunked prefill of a long prompt would have raised the KV use;
    - V0: the stats line before the run generated tokens with the same Running and the same KV use (no prompt was
      scheduled since: V0 allocates a prompt's blocks when it schedules it), so those requests were decoding, and a
      V0 decode step makes a token for every running sequence: a zero interval is one where no step finished.

    Not read: a V0 run with no decoding line before it (a prefill of a long prompt, not chunked, is one long step:
    eval32d 030), a non-GPU engine (a CPU backend's steps can be long), KV use that moves, a run that does not end
    the log, a launch whose start-up (its version or flags) the log holds less than stuck_after_s before the run
    (the first steps may compile), a frame merged by stride or joined to snapshots (their own readings judge)."""
    df = c.frame
    s = c.summary
    if not c.log_ended or c.scrapes or df is None or not isinstance(df.index, pd.DatetimeIndex):
        return None
    if df.attrs.get("stride", 1) != 1 or "generation_tps" not in df.columns or "running" not in df.columns:
        return None
    if s.kv_device not in _END_DEVICES or c.config.device not in (None, *_END_DEVICES):
        return None
    n = _end_run(df)
    if n < END_LINES:
        return None
    run = df.iloc[len(df) - n :]
    first, last = run.index[0].to_pydatetime(), run.index[-1].to_pydatetime()
    end = _naive(s.last_ts)
    if end is not None and end > last:
        return None  # the log goes on after them
    before = df.iloc[len(df) - n - 1] if len(df) > n else None
    since = (
        before.name.to_pydatetime()
        if before is not None
        else first - timedelta(seconds=normal_interval_s(c, df))
    )
    if (last - since).total_seconds() < END_SPAN_S:
        return None
    running, kv = _f(run.iloc[-1]["running"]), _f(run.iloc[-1]["kv_usage_pct"])
    if "v1" in s.stats_formats:
        if s.stats_formats != {"v1"} or kv != 0.0:
            return None
    elif before is None or not (_f(before.get("generation_tps")) or 0.0) > 0.0:
        return None
    elif (_f(before.get("running")), _f(before.get("kv_usage_pct"))) != (running, kv):
        return None
    started = _naive(s.first_ts)
    if (c.config.version or c.config.flags) and started is not None:
        if (since - started).total_seconds() < c.settings.stuck_after_s:
            return None
    wheres = run["where"] if "where" in run.columns else None
    where = wheres.iloc[0] if wheres is not None and isinstance(wheres.iloc[0], str) else None
    st = Stuck(
        since=since, until=last, seconds=(last - since).total_seconds(), running=running or 0.0, waiting=0.0
    )
    return Incident(st, "stats_end", where)


def incidents(c: Context) -> list[Incident]:
    """Every stuck period the log, the snapshots and vLLM's warnings show, in time order (computed
    once per Context: the detectors that discount a stall all ask)."""
    cached = c.__dict__.get("_stuck_incidents")
    if cached is not None:
        return list(cached)
    after = c.settings.stuck_after_s
    out: list[Incident] = []
    pts, silent, where = log_points(c)
    for st in stretches(pts, after):
        quiet = any(st.since <= t <= st.until for t in silent)
        out.append(Incident(st, "silence" if quiet else "stats", where.get(st.since)))
    mpts, mwhere = metric_points(c)
    for st in stretches(mpts, after):
        out.append(Incident(st, "metrics", mwhere.get(st.until)))
    h = hang_incident(c)
    if h is not None:
        out.append(h)
    e = end_incident(c)
    if e is not None and not any(i.stuck.until >= e.stuck.since for i in out):
        out.append(e)
    out.sort(key=lambda i: i.stuck.since)
    c.__dict__["_stuck_incidents"] = tuple(out)
    return out


def _t(t: datetime) -> str:
    return t.strftime("%m-%d %H:%M:%S")


def _flight(st: Stuck) -> str:
    return f"Running {st.running:g}, Waiting {st.waiting:g}"


def _evidence(i: Incident, origin: str | None = None) -> str:
    st = i.stuck
    span = f"{st.seconds:.0f} s ({_t(st.since)} → {_t(st.until)})"
    if i.source == "stats":
        return (
            f"stats lines at 0 tokens/s for {span} while requests were in flight ({_flight(st)} at the end): "
            "the engine produced nothing"
        )
    if i.source == "silence":
        return (
            f"nothing produced for {span}: a stats line at 0 tokens/s with requests in flight ({_flight(st)}), "
            "then no stats line (vLLM stops printing them while nothing is produced)"
        )
    if i.source == "stats_end":
        return (
            f"the log ends in stats lines at 0 prompt and 0 generation tokens/s for {span} with the same requests "
            f"running ({_flight(st)}, KV use unchanged): no engine step finished (read at the log's end, offline; "
            "a live reading waits stuck_after_s)"
        )
    if i.source == "metrics":
        return (
            f"/metrics{' at ' + origin if origin else ''}: requests in flight ({_flight(st)}) while "
            f"{names.PROMPT_TOKENS_TOTAL} + {names.GENERATION_TOKENS_TOTAL} did not move for {span}"
        )
    flight = f" ({_flight(st)} on the last stats line)" if i.running_known else ""
    return (
        f'vLLM warned {i.warnings}× that no shared-memory broadcast block was free ("processes are '
        f'hanging") over {span}{flight}'
    )


def finding(
    i: Incident,
    *,
    origin: str | None = None,
    ongoing: bool = True,
    periods: int = 1,
    seen_in: Iterable[str] | None = None,
) -> Finding:
    """The engine_stuck finding of one incident — the one builder, offline (`engine_stuck`) and in
    the sidecar (its own reads of /metrics, `origin` the URL it reads). Its source and evidence
    pieces (where, hang warnings, whether Running/Waiting are known) are the incident's; `ongoing`:
    the period reaches the end of what was read; `periods`: separate stuck periods in all;
    `seen_in`: every reading that shows this one (default: the incident's own source)."""
    st = i.stuck
    more = f"; {periods} such periods in all" if periods > 1 else ""
    return Finding(
        id=FindingId.ENGINE_STUCK,
        severity="critical",
        title="Engine stuck: requests in flight, no tokens produced" + ("" if ongoing else " (then resumed)"),
        evidence=_evidence(i, origin) + more,
        start=st.since,
        end=st.until,
        where=i.where,
        data={
            "since": st.since.isoformat(),
            "until": st.until.isoformat(),
            "seconds": round(st.seconds, 1),
            "running": st.running,
            "waiting": st.waiting,
            "source": i.source,
            "incidents": periods,
            "ongoing": ongoing,
            "seen_in": sorted(seen_in) if seen_in is not None else [i.source],
        },
    )


def engine_stuck(c: Context) -> list[Finding]:
    """Requests running or waiting while no token is produced for at least Settings.stuck_after_s,
    or vLLM's hang warning while serving. Data: since (ISO time), seconds, running, waiting, source
    ("stats" | "silence" | "metrics" | "hang_warning": the reading of the longest incident), incidents
    (how many separate stuck periods), until, ongoing (the period reaches the end of what was read),
    seen_in (every reading that shows this period)."""
    found = incidents(c)
    if not found:
        return []
    main = max(found, key=lambda i: i.stuck.seconds)
    st = main.stuck
    ends = [t for t in (_naive(c.summary.last_ts), _naive(c.summary.stats_last_ts)) if t is not None]
    ends += [p.t for p in metric_points(c)[0][-1:]]
    ongoing = bool(ends) and st.until >= max(ends)
    periods = _periods(found)  # the readings of one period (log, snapshots, warnings) count once
    sources = {i.source for i in found if i.stuck.since <= st.until and i.stuck.until >= st.since}
    return [finding(main, ongoing=ongoing, periods=periods, seen_in=sources)]


def _periods(found: Sequence[Incident]) -> int:
    """How many separate stuck periods: overlapping incidents are one."""
    n, end = 0, None
    for i in sorted(found, key=lambda x: x.stuck.since):
        if end is None or i.stuck.since > end:
            n += 1
            end = i.stuck.until
        else:
            end = max(end, i.stuck.until)
    return n


def explains(c: Context, times: Sequence[datetime], pad_s: float) -> list[bool]:
    """For each time: whether it falls in a stuck period or within pad_s after it (requests that
    waited for the wedged engine get their first token right after it resumes)."""
    spans = [(i.stuck.since, i.stuck.until + timedelta(seconds=pad_s)) for i in incidents(c)]
    return [any(a <= t <= b for a, b in spans) for t in times]


# load shapes a wedged engine also shows (requests wait, nothing is produced): inside the stuck
# period they are the same incident, not a prefill or batch-size problem
_SAME_INCIDENT = (FindingId.QUEUE_PREFILL_BOUND, FindingId.QUEUE_SEQ_BOUND, FindingId.THROUGHPUT_COLLAPSE)


def reconcile(findings: list[Finding]) -> list[Finding]:
    """One finding for one incident: engine_stalled's gaps that overlap the stuck period, and queue
    or throughput shapes seen only inside it, are the incident engine_stuck reports."""
    stuck = next((f for f in findings if f.id == FindingId.ENGINE_STUCK), None)
    if stuck is None or stuck.start is None or stuck.end is None:
        return findings
    a, b = stuck.start, stuck.end
    out = []
    for f in findings:
        if f.start is not None and f.end is not None:
            if f.id == FindingId.ENGINE_STALLED and f.start <= b and f.end >= a:
                continue
            if f.id in _SAME_INCIDENT and a <= f.start and f.end <= b:
                continue
        out.append(f)
    return out
