"""What a rule reads: the window of one instance (``Context``) and the helpers every family uses
to place a finding in time and in the log. Pure; shared by diagnose and the sidecar.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any, TypeVar

from observe import timeline as tl
from observe.metrics import names
from observe.model import EngineConfig, Scrape
from observe.quote import quote
from observe.rules.facts import Facts
from observe.rules.state import State
from observe.rules.summary import Summary
from observe.settings import Settings

if TYPE_CHECKING:
    import pandas as pd
else:
    from observe.timeline import pd  # imported on first use

S = TypeVar("S", bound=State[Any])


@dataclass
class Context:
    summary: Summary  # what the rules share; a rule's own counts: state()
    config: EngineConfig
    frame: pd.DataFrame | None
    metrics: pd.DataFrame | None = None
    scrapes: Sequence[Scrape] = ()
    now: datetime | None = None
    settings: Settings = field(default_factory=Settings)
    # the log was read to its end and nothing more will come (`observe diagnose`: pipeline.diagnose_paths sets it
    # for the latest launch); False for the sidecar's window, whose stream goes on, and for an earlier launch
    log_ended: bool = False

    def state(self, kind: type[S]) -> S:
        """A rule's own accumulator (``Rule.states``), as the diagnosis fed it."""
        return self.summary.state(kind)

    def metrics_preemptions(self) -> int | None:
        """Preemptions counted by vllm:num_preemptions_total over the scrapes (reset-aware)."""
        if self.metrics is None:
            return None
        col = tl.series(self.metrics, "m_preemptions_total")
        if len(col) == 0:
            return None
        total, prev = 0.0, None
        for v in col:
            if prev is not None:
                total += v - prev if v >= prev else v  # counter reset: count from zero
            prev = v
        if len(col) == 1:
            total = col.iloc[0]
        return int(total)

    def request_length(self) -> tuple[float | None, str | None]:
        """A request's length in tokens for sizing, and where it was measured:

        - the stats lines: the most KV a running request held (KV usage × KV tokens / running, the
          largest over the samples) — what the cache itself held per request;
        - else /metrics: mean prompt + mean generation, exact, from the increases of the histograms'
          ``_sum`` / ``_count`` over the window (the last scrape's totals when only one was read).

        A percentile from the histograms' coarse 1-2-5 buckets is never the length (prompts of 512
        tokens all fall in 500–1000). Never above --max-model-len: no request is longer."""
        got: float | None = self.summary.max_tokens_per_running
        source: str | None = "KV per running request, stats lines" if got else None
        if not got:
            got = self.mean_request_tokens()
            source = "mean from /metrics _sum/_count" if got else None
        cap = self.config.max_model_len
        if got and cap:
            got = min(got, float(cap))
        return (got or None), source

    def _mean_of(self, family: str) -> float | None:
        """Mean observation of a histogram over the window: increase of ``_sum`` / increase of
        ``_count`` between the first and the last scrape (reset-aware); one scrape: its totals."""
        from observe.metrics import metricmath

        ok = sorted((s for s in self.scrapes if s.ok), key=lambda s: s.at or datetime.min)
        reads = ok[-1:] if len(ok) < 2 else [ok[0], ok[-1]]
        sums = [metricmath.value(s, family + "_sum") for s in reads]
        counts = [metricmath.value(s, family + "_count") for s in reads]
        if not reads or None in sums or None in counts:
            return None
        total = metricmath.counter_increase(sums) if len(reads) == 2 else sums[0]  # type: ignore[arg-type]
        n = metricmath.counter_increase(counts) if len(reads) == 2 else counts[0]  # type: ignore[arg-type]
        return total / n if total is not None and n else None

    def mean_request_tokens(self) -> float | None:
        """Mean prompt + mean generation over the window (/metrics _sum/_count); None without both."""
        parts = [self._mean_of(f) for f in (names.REQUEST_PROMPT_TOKENS, names.REQUEST_GENERATION_TOKENS)]
        return sum(p for p in parts if p is not None) if None not in parts else None

    def prompt_tokens_mean(self) -> float | None:
        """Mean prompt length in tokens over the window (vllm:request_prompt_tokens _sum / _count)."""
        return self._mean_of(names.REQUEST_PROMPT_TOKENS)

    def length_buckets(self) -> dict[str, list[tuple[float, float]]] | None:
        """The last scrape's cumulative (le, count) buckets of vllm:request_prompt_tokens and
        vllm:request_generation_tokens ("prompt", "generation"); None without both."""
        from observe.metrics import metricmath

        ok = [s for s in self.scrapes if s.ok]
        if not ok:
            return None
        last = max(ok, key=lambda s: s.at or datetime.min)
        got = {
            k: metricmath.buckets(last, fam)
            for k, fam in (
                ("prompt", names.REQUEST_PROMPT_TOKENS),
                ("generation", names.REQUEST_GENERATION_TOKENS),
            )
        }
        return got if all(got.values()) else None

    def _at(self, col: str, i: int) -> float | None:
        """A stats column at the first (0) or last (-1) sample that has it; None without one."""
        if self.frame is None or col not in self.frame:
            return None
        a = self.frame[col].to_numpy(dtype=float, na_value=math.nan)
        ok = a == a  # what dropna keeps (NaN is not itself), found without building a shorter Series
        if not ok.any():
            return None
        return float(a[int(ok.argmax()) if i == 0 else len(ok) - 1 - int(ok[::-1].argmax())])

    def facts(self) -> Facts:
        """What the levers read of this window (see Facts)."""
        s = self.summary
        length, source = self.request_length()
        return Facts(
            prompt_tokens_mean=self.prompt_tokens_mean(),
            max_kv_pct=s.max_kv,
            kv_pct_first=self._at("kv_usage_pct", 0),
            kv_pct_last=self._at("kv_usage_pct", -1),
            waiting_first=self._at("waiting", 0),
            waiting_last=self._at("waiting", -1),
            max_running=s.max_running,
            running_last=self._at("running", -1),
            max_waiting=s.max_waiting,
            max_in_flight=s.max_in_flight,
            request_tokens=length,
            request_tokens_source=source,
            length_buckets=self.length_buckets(),
        )


def when(df: pd.DataFrame | None, mask: pd.Series) -> tuple[datetime | None, datetime | None]:
    if df is None or not isinstance(df.index, pd.DatetimeIndex) or not mask.any():
        return None, None
    idx = df.index[mask.values]
    return idx.min().to_pydatetime(), idx.max().to_pydatetime()


def fmt_t(t: datetime | None) -> str:
    return t.strftime("%m-%d %H:%M:%S") if t else "?"


def where(s: Summary) -> str | None:
    if s.first_where is None:
        return None
    return s.first_where if s.first_where == s.last_where else f"{s.first_where} … {s.last_where}"


def span(a, b) -> str:
    return f" ({fmt_t(a)} → {fmt_t(b)})" if a and b else ""


def stats_dict(s: Summary, settings: Settings) -> dict:
    """A Summary's numbers as the report shows them (`stats`)."""
    return {
        "samples": s.samples,
        "max_kv_cache_usage_pct": s.max_kv,
        "max_running": s.max_running,
        "max_waiting": s.max_waiting,
        "max_swapped": s.max_swapped,
        "max_prompt_throughput": s.max_prompt_tps,
        "max_generation_throughput": s.max_gen_tps,
        "mean_generation_throughput": round(s.sum_gen_tps / s.gen_samples, 2) if s.gen_samples else None,
        "kv_high_pct": settings.kv_high_pct,
        "kv_full_pct": settings.kv_full_pct,
        "samples_kv_high": s.kv_high,
        "samples_kv_full": s.kv_full,
        "mean_prefix_cache_hit_pct": round(s.prefix_hit_sum / s.prefix_hit_samples, 2)
        if s.prefix_hit_samples
        else None,
        "first": s.first_ts.isoformat() if s.first_ts else None,
        "last": s.last_ts.isoformat() if s.last_ts else None,
        "stats_first": s.stats_first_ts.isoformat() if s.stats_first_ts else None,
        "stats_last": s.stats_last_ts.isoformat() if s.stats_last_ts else None,
    }


def events_dict(s: Summary, ctx: Context, silent_preemptions: int) -> dict:
    """A Summary's events as the report shows them (`events`), with what the scrapes counted and the
    requests preempted without a warning (kv.Silent's count: the caller reads it, kv imports this)."""
    return {
        "preemption_warnings": s.preemption_warnings,
        "cumulative_preemptions": s.cumulative_preemptions,
        "interval_preemptions": s.interval_preemptions or None,
        "metrics_preemptions": ctx.metrics_preemptions(),
        "oom_errors": s.oom_errors,
        "errors": [
            {
                "kind": e.kind,
                "message": quote(e.message, 2000),
                "where": f"{e.env.source}:{e.env.lineno}",
                "time": e.env.ts.isoformat() if e.env.ts else None,
                "fatal": e.fatal,
                "details": {
                    k: v for k, v in e.details.items() if isinstance(v, (int, float, str, bool, type(None)))
                },
            }
            for e in s.errors
        ],
        "error_kinds": dict(s.error_kinds),
        "spec_decode_lines": s.spec_decode_lines,
        "access_log_lines": s.access_lines,
        "silent_preemptions": silent_preemptions or None,
        "hints": list(s.hints),
        "oom_phases": list(s.oom_phases),
        "kv_by_worker": dict(s.kv_by_worker) if len(s.kv_by_worker) > 1 else None,
        "kv_worst_worker": s.kv_worst_worker,
    }
