"""What a rule reads: the window of one instance (``Context``) and the helpers every family uses
to place a finding in time and in the log. Pure; shared by diagnose and the sidecar.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from observe import timeline as tl
from observe.model import EngineConfig, Scrape
from observe.rules.facts import Facts
from observe.settings import Settings

if TYPE_CHECKING:
    import pandas as pd
else:
    from observe.timeline import pd  # imported on first use


@dataclass
class Context:
    summary: Any  # diagnosis.Summary
    config: EngineConfig
    frame: pd.DataFrame | None
    metrics: pd.DataFrame | None = None
    scrapes: Sequence[Scrape] = ()
    now: datetime | None = None
    settings: Settings = field(default_factory=Settings)

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

    def request_tokens_p95(self) -> float | None:
        """Request length in tokens: p95 prompt + p95 generation from the /metrics histograms when
        given (vllm:request_prompt_tokens / vllm:request_generation_tokens; a family without buckets
        gives its mean, _sum/_count), else the most KV any running request held (KV usage × KV
        tokens / running, from the logs). Never above --max-model-len: no request is longer (the
        interpolation inside the last bucket can overshoot it)."""
        from observe import metricmath

        last = next(
            (
                s
                for s in sorted(
                    (s for s in self.scrapes if s.ok), key=lambda s: s.at or datetime.min, reverse=True
                )
            ),
            None,
        )
        got: float | None = None
        if last is not None:
            parts = []
            for fam in ("vllm:request_prompt_tokens", "vllm:request_generation_tokens"):
                q = metricmath.histogram_quantile(0.95, metricmath.buckets(last, fam))
                if q is None:
                    total, n = metricmath.value(last, fam + "_sum"), metricmath.value(last, fam + "_count")
                    q = total / n if total is not None and n else None
                parts.append(q)
            if all(p is not None for p in parts):
                got = float(sum(parts))  # type: ignore[arg-type]
        if got is None:
            got = self.summary.max_tokens_per_running
        cap = self.config.max_model_len
        if got is not None and cap:
            got = min(got, float(cap))
        return got

    def prompt_tokens_mean(self) -> float | None:
        """Mean prompt length in tokens from the last scrape's vllm:request_prompt_tokens _sum / _count."""
        from observe import metricmath

        ok = [(s.at, s) for s in self.scrapes if s.ok and s.at is not None]
        if not ok:
            return None
        last = max(ok, key=lambda pair: pair[0])[1]
        total = metricmath.value(last, "vllm:request_prompt_tokens_sum")
        count = metricmath.value(last, "vllm:request_prompt_tokens_count")
        return total / count if total is not None and count else None

    def length_buckets(self) -> dict[str, list[tuple[float, float]]] | None:
        """The last scrape's cumulative (le, count) buckets of vllm:request_prompt_tokens and
        vllm:request_generation_tokens ("prompt", "generation"); None without both."""
        from observe import metricmath

        ok = [s for s in self.scrapes if s.ok]
        if not ok:
            return None
        last = max(ok, key=lambda s: s.at or datetime.min)
        got = {
            k: metricmath.buckets(last, fam)
            for k, fam in (
                ("prompt", "vllm:request_prompt_tokens"),
                ("generation", "vllm:request_generation_tokens"),
            )
        }
        return got if all(got.values()) else None

    def _at(self, col: str, i: int) -> float | None:
        """A stats column at the first (0) or last (-1) sample that has it; None without one."""
        if self.frame is None or col not in self.frame:
            return None
        v = self.frame[col].dropna()
        return float(v.iloc[i]) if len(v) else None

    def facts(self) -> Facts:
        """What the levers read of this window (see Facts)."""
        s = self.summary
        return Facts(
            prompt_tokens_mean=self.prompt_tokens_mean(),
            max_kv_pct=s.max_kv,
            kv_pct_first=self._at("kv_usage_pct", 0),
            kv_pct_last=self._at("kv_usage_pct", -1),
            waiting_first=self._at("waiting", 0),
            waiting_last=self._at("waiting", -1),
            max_running=s.max_running,
            max_waiting=s.max_waiting,
            request_tokens=self.request_tokens_p95(),
            length_buckets=self.length_buckets(),
        )


def when(df: pd.DataFrame | None, mask: pd.Series) -> tuple[datetime | None, datetime | None]:
    if df is None or not isinstance(df.index, pd.DatetimeIndex) or not mask.any():
        return None, None
    idx = df.index[mask.values]
    return idx.min().to_pydatetime(), idx.max().to_pydatetime()


def fmt_t(t: datetime | None) -> str:
    return t.strftime("%m-%d %H:%M:%S") if t else "?"


def where(s) -> str | None:
    if s.first_where is None:
        return None
    return s.first_where if s.first_where == s.last_where else f"{s.first_where} … {s.last_where}"


def span(a, b) -> str:
    return f" ({fmt_t(a)} → {fmt_t(b)})" if a and b else ""
