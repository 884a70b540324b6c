"""Core: what `observe top` shows for each server — pure, no I/O, no clock, no terminal.

`TopState.observe(name, scrape)` folds one `/metrics` read into that server's view: gauges (KV
usage, running, waiting) from the read itself, STUCK (`progress.stuck`: requests in flight while the
token counters have not moved for `Settings.stuck_after_s`, over the reads' own stamps), rates (tokens/s, preemptions/s) and latency
quantiles (TTFT, ITL p50 / p99 of the requests finished between two reads) from it and the
previous good read, timed by the reads' own stamps. A failed read marks the server down and
keeps its last numbers. `findings(name, doc)` takes an `observe.diagnosis/v1` document (the
sidecar's `/api/diagnosis`, or an in-process analysis of the logs) and keeps the worst findings
and the first recommendation. The terminal view (`observe.top.view`) only renders a `ServerView`.
"""

from __future__ import annotations

import collections
from dataclasses import dataclass, field
from typing import Any

from observe.metrics import metricmath as mm
from observe.metrics import progress
from observe.model import Scrape, severity_rank
from observe.settings import Settings

__all__ = ["TopState", "ServerView", "sparkline", "HISTORY"]

HISTORY = 40  # points kept per sparkline
_SPARKS = "▁▂▃▄▅▆▇█"
_SHOWN = ("ttft_p50", "ttft_p99", "itl_p50", "itl_p99")  # of metricmath.QUANTILES, what a row has room for


def sparkline(values: list[float | None], width: int = HISTORY) -> str:
    """Unicode bars scaled from 0 to the largest value; a missing point is a space."""
    vals = values[-width:]
    top = max((v for v in vals if v is not None), default=None)
    out = []
    for v in vals:
        if v is None:
            out.append(" ")
        elif not top:
            out.append(_SPARKS[0])
        else:
            out.append(_SPARKS[min(len(_SPARKS) - 1, int(v / top * (len(_SPARKS) - 1) + 0.5))])
    return "".join(out)


@dataclass
class ServerView:
    """One server's row on the screen. None: not known (yet)."""

    name: str
    up: bool | None = None  # None: not read yet
    error: str | None = None  # why the last read failed
    reads: int = 0
    model: str | None = None
    kv_usage_pct: float | None = None
    running: float | None = None
    waiting: float | None = None
    generation_tps: float | None = None
    prompt_tps: float | None = None
    preemptions_per_s: float | None = None
    preemptions_total: float | None = None
    ttft_p50_s: float | None = None
    ttft_p99_s: float | None = None
    itl_p50_s: float | None = None
    itl_p99_s: float | None = None
    latency_since_start: bool = False  # the quantiles are over vLLM's whole life (one read so far)
    stuck: progress.Stuck | None = None  # requests in flight, token counters flat for stuck_after_s
    points: collections.deque = field(default_factory=lambda: collections.deque(maxlen=2_000))
    history: dict[str, collections.deque] = field(
        default_factory=lambda: {
            k: collections.deque(maxlen=HISTORY)
            for k in ("kv_usage_pct", "ttft_p50_s", "ttft_p99_s", "itl_p50_s", "itl_p99_s")
        }
    )
    findings: list[tuple[str, str, str]] = field(default_factory=list)  # (severity, id, title)
    recommendation: str | None = None
    findings_source: str | None = None  # where findings come from ("sidecar URL", "logs")
    findings_error: str | None = None
    _prev: Scrape | None = None


class TopState:
    """Every server's view, in the order the servers were given."""

    def __init__(self, names: list[str], *, stuck_after_s: float = Settings().stuck_after_s) -> None:
        self.servers: dict[str, ServerView] = {n: ServerView(n) for n in names}
        self.stuck_after_s = stuck_after_s

    def observe(self, name: str, sc: Scrape) -> ServerView:
        """Fold one /metrics read (good or failed) into server `name`'s view."""
        v = self.servers[name]
        v.reads += 1
        if not sc.ok:
            v.up, v.error, v.stuck = False, sc.error or "no answer", None
            return v
        v.up, v.error = True, None
        prev, v._prev = v._prev, sc
        # the rates and the quantiles between this read and the one before; on the first read the
        # quantiles over vLLM's whole life are all there is to show (there are no rates yet)
        r = mm.reading(prev, sc)
        v.kv_usage_pct, v.running, v.waiting = r["kv_usage_pct"], r["running"], r["waiting"]
        v.preemptions_total = r["preemptions_total"]
        v.model = next((s.labels["model_name"] for s in sc.samples if s.labels.get("model_name")), v.model)
        if sc.at is not None:
            v.points.append(progress.from_scrape(sc))
            v.stuck = progress.stuck(list(v.points), self.stuck_after_s)
        secs = (sc.at - prev.at).total_seconds() if prev and prev.at and sc.at else 0.0
        if prev is None or secs > 0:  # two reads stamped alike: keep the numbers shown
            v.latency_since_start = prev is None
            if prev is not None:
                v.generation_tps, v.prompt_tps = r["generation_tps"], r["prompt_tps"]
                v.preemptions_per_s = r["preemptions_per_s"]
            for tag in _SHOWN:
                setattr(v, f"{tag}_s", r[tag])
        for k, dq in v.history.items():
            dq.append(getattr(v, k))
        return v

    def findings(
        self, name: str, doc: dict[str, Any] | None, *, source: str, error: str | None = None
    ) -> None:
        """Take the findings and first recommendation of a diagnosis document (per-instance part)."""
        v = self.servers[name]
        v.findings_source, v.findings_error = source, error
        if doc is None:
            return
        insts = doc.get("instances") or []
        inst = insts[0] if insts else {}
        fs = sorted(inst.get("findings") or [], key=lambda f: -severity_rank(f.get("severity", "")))
        v.findings = [(f.get("severity", ""), f.get("id", ""), f.get("title") or "") for f in fs]
        recs = inst.get("recommendations") or []
        if recs:
            r = recs[0]
            cur, sug = r.get("current"), r.get("suggested")
            v.recommendation = (
                (str(r.get("flag")) if sug is True else f"{r.get('flag')} {sug}")
                + (f" (now {cur})" if cur is not None else "")
                + (f": {r['reason']}" if r.get("reason") else "")
            )
        else:
            v.recommendation = None
