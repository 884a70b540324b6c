"""Core: arithmetic on scraped Prometheus samples — counter rates, histogram quantiles, picking.

Pure functions, no I/O, no clock. They follow Prometheus's own semantics so that what the sidecar
reports agrees with what a PromQL query over the same series would say:

- a counter that goes down has been reset (process restart); the new value counts from zero
  (PromQL `rate()` / `increase()` do the same);
- `histogram_quantile` interpolates linearly inside the bucket that holds the rank, takes 0 as
  the lower bound of the first bucket, and answers the upper bound of the highest finite bucket
  when the rank falls into `+Inf`.

A Scrape holds canonical names (see `names.py`); histogram series keep Prometheus's suffixes
(`<family>_bucket`, `_count`, `_sum`), so these helpers take the family name and add them.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from observe.metrics import names
from observe.model import Sample, Scrape

__all__ = [
    "counter_increase",
    "rate",
    "rate_between",
    "histogram_quantile",
    "bucket_delta",
    "samples",
    "value",
    "buckets",
    "running_config",
    "QUANTILES",
    "latency_quantiles",
    "reading",
    "window_summary",
]

#: The one quantile set of the latency histograms (names.LATENCY_HISTOGRAMS): the timeline's
#: columns, the window summary's keys and `top` all come from `latency_quantiles` over it.
QUANTILES: tuple[float, ...] = names.LATENCY_QUANTILES

_CACHE_CONFIG_INFO = names.CACHE_CONFIG_INFO


def counter_increase(values: Iterable[float]) -> float:
    """Total increase of a counter across successive readings, counting resets as from zero.

    >>> counter_increase([10, 15, 3, 7])   # reset after 15: 5 + 3 + 4
    12.0
    """
    total = 0.0
    prev: float | None = None
    for v in values:
        if v is None or (isinstance(v, float) and math.isnan(v)):
            continue
        if prev is not None:
            total += v - prev if v >= prev else v
        prev = v
    return float(total)


def rate(points: Sequence[tuple[datetime | float, float]]) -> float | None:
    """Per-second rate of a counter over (time, value) points (time as datetime or epoch seconds).

    None when fewer than two points or no time passes between the first and the last.
    """
    if len(points) < 2:
        return None
    t0, t1 = _secs(points[0][0]), _secs(points[-1][0])
    if t1 <= t0:
        return None
    return counter_increase(v for _, v in points) / (t1 - t0)


def rate_between(prev: float | None, cur: float | None, seconds: float) -> float | None:
    """Rate from two readings `seconds` apart; a decrease is a reset (new value counts from 0)."""
    if prev is None or cur is None or seconds <= 0:
        return None
    return (cur - prev if cur >= prev else cur) / seconds


def histogram_quantile(q: float, cumulative: Sequence[tuple[float, float]]) -> float | None:
    """Quantile `q` (0..1) from cumulative buckets [(le, count), ...] as PromQL computes it.

    Buckets may come in any order; `+Inf` must be present for a meaningful answer (Prometheus
    returns NaN without it; we return None). None also when there are no observations.
    """
    if not 0.0 <= q <= 1.0:
        raise ValueError(f"quantile must be within 0..1, got {q}")
    fixed = _monotonic(cumulative)
    return _quantile(q, fixed) if fixed else None


def _monotonic(cumulative: Sequence[tuple[float, float]]) -> list[tuple[float, float]] | None:
    """The buckets sorted by bound with counts that never decrease (Prometheus's ensureMonotonic);
    None without a `+Inf` bucket or without observations."""
    bs = sorted(cumulative, key=lambda b: b[0])
    if not bs or not math.isinf(bs[-1][0]):
        return None
    fixed: list[tuple[float, float]] = []
    high = 0.0
    for le, c in bs:
        high = max(high, c)
        fixed.append((le, high))
    return fixed if fixed[-1][1] > 0 else None


def _quantile(q: float, fixed: list[tuple[float, float]]) -> float | None:
    """`histogram_quantile` over buckets `_monotonic` has checked."""
    rank = q * fixed[-1][1]
    for i, (le, c) in enumerate(fixed):
        if c >= rank:
            break
    if math.isinf(le):
        return fixed[-2][0] if len(fixed) >= 2 else None
    lower, below = (0.0, 0.0) if i == 0 else fixed[i - 1]
    if i == 0 and le <= 0:
        return le
    in_bucket = c - below
    if in_bucket <= 0:
        return le
    return lower + (le - lower) * (rank - below) / in_bucket


def bucket_delta(
    prev: Sequence[tuple[float, float]], cur: Sequence[tuple[float, float]]
) -> list[tuple[float, float]]:
    """Cumulative buckets of the observations made between two scrapes (reset-aware).

    When any bucket went down the histogram was reset, and `cur` alone is the delta.
    """
    before = dict(prev)
    if any(c < before.get(le, 0.0) for le, c in cur):
        return sorted(cur)
    return sorted((le, c - before.get(le, 0.0)) for le, c in cur)


def samples(scrape: Scrape, name: str, labels: Mapping[str, str] | None = None) -> list[Sample]:
    """Samples of the canonical series `name` whose labels include `labels`."""
    if not labels:
        return [s for s in scrape.samples if s.name == name]
    want = dict(labels)
    return [
        s for s in scrape.samples if s.name == name and all(s.labels.get(k) == v for k, v in want.items())
    ]


def value(
    scrape: Scrape, name: str, labels: Mapping[str, str] | None = None, *, agg: str = "sum"
) -> float | None:
    """One number for a series: the sum (or max/min) over its matching samples; None if absent."""
    vals = [s.value for s in samples(scrape, name, labels) if not math.isnan(s.value)]
    if not vals:
        return None
    if agg == "sum":
        return float(sum(vals))
    if agg == "max":
        return float(max(vals))
    if agg == "min":
        return float(min(vals))
    raise ValueError(f"unknown aggregation {agg!r}")


def buckets(
    scrape: Scrape, family: str, labels: Mapping[str, str] | None = None
) -> list[tuple[float, float]]:
    """Cumulative buckets of histogram `family`, summed over matching series by `le`."""
    acc: dict[float, float] = {}
    for s in samples(scrape, family + "_bucket", labels):
        try:
            le = float(s.labels.get("le", "nan"))
        except ValueError:
            continue
        if math.isnan(le):
            continue
        acc[le] = acc.get(le, 0.0) + s.value
    return sorted(acc.items())


def _secs(t: datetime | float) -> float:
    return t.timestamp() if isinstance(t, datetime) else float(t)


def running_config(scrape: Scrape) -> dict[str, Any]:
    """The engine's cache configuration from `vllm:cache_config_info` labels, typed.

    Values "None" become None, "True"/"False" bools, numbers int or float. When several engines
    expose it, engine "0" (or the first) wins. `kv_cache_tokens` is added from
    `kv_cache_size_tokens` or num_gpu_blocks × block_size. Empty dict when the metric is absent.
    """
    rows = [s for s in scrape.samples if s.raw_name == _CACHE_CONFIG_INFO or s.name == _CACHE_CONFIG_INFO]
    if not rows:
        return {}
    rows.sort(key=lambda s: (s.labels.get("engine", "0") != "0", s.labels.get("engine", "")))
    cfg = {k: _typed(v) for k, v in rows[0].labels.items()}
    tokens = cfg.get("kv_cache_size_tokens")
    if not isinstance(tokens, int):
        blocks, size = cfg.get("num_gpu_blocks"), cfg.get("block_size")
        tokens = blocks * size if isinstance(blocks, int) and isinstance(size, int) else None
    cfg["kv_cache_tokens"] = tokens
    return cfg


def _typed(v: str) -> Any:
    if v == "None":
        return None
    if v in ("True", "False"):
        return v == "True"
    try:
        return int(v)
    except ValueError:
        pass
    try:
        f = float(v)
        return f if math.isfinite(f) else v
    except ValueError:
        return v


def _round(v: float | None, nd: int) -> float | None:
    return round(v, nd) if v is not None else None


def quantile_tag(key: str, q: float) -> str:
    """``ttft``, 0.99 → ``ttft_p99``: how every consumer names a latency quantile."""
    return f"{key}_p{round(q * 100)}"


def latency_quantiles(prev: Scrape | None, cur: Scrape) -> dict[str, float | None]:
    """Every latency histogram's QUANTILES (``ttft_p50`` ... ``e2e_p99``, seconds) over the requests
    observed between ``prev`` and ``cur`` (reset-aware), or over vLLM's whole life when ``prev`` is
    None. None where the histogram is absent or saw nothing."""
    out: dict[str, float | None] = {}
    for key, fam in names.LATENCY_HISTOGRAMS.items():
        end = buckets(cur, fam)
        obs = end if prev is None else bucket_delta(buckets(prev, fam), end)
        fixed = _monotonic(obs) if obs else None
        for q in QUANTILES:
            out[quantile_tag(key, q)] = _quantile(q, fixed) if fixed else None
    return out


_GAUGES = (names.KV_CACHE_USAGE_PERC, names.NUM_REQUESTS_RUNNING, names.NUM_REQUESTS_WAITING)
_RATES = {
    "generation_tps": names.GENERATION_TOKENS_TOTAL,
    "prompt_tps": names.PROMPT_TOKENS_TOTAL,
    "preemptions_per_s": names.NUM_PREEMPTIONS_TOTAL,
}
_READ = frozenset(
    (*_GAUGES, *_RATES.values(), *(fam + "_bucket" for fam in names.LATENCY_HISTOGRAMS.values()))
)


def _slim(sc: Scrape) -> Scrape:
    """The scrape with only the series `reading` reads (one pass, so the lookups after it are short)."""
    return Scrape(at=sc.at, samples=[s for s in sc.samples if s.name in _READ], source=sc.source)


def reading(prev: Scrape | None, cur: Scrape) -> dict[str, float | None]:
    """What one good /metrics read says, with the read before it (None: the first read) — the one
    scrape-pair arithmetic behind the timeline's metric columns and `top`:

    - gauges from ``cur``: ``kv_usage_pct`` (the busiest engine, in %), ``running``, ``waiting``,
      ``preemptions_total``;
    - counter rates per second between the two reads' own stamps (reset-aware; None on the first
      read or when no time passed): ``generation_tps``, ``prompt_tps``, ``preemptions_per_s``;
    - `latency_quantiles` between the reads, or since vLLM started on the first read (the
      caller says which it shows).
    """
    prev, cur = (_slim(prev) if prev is not None else None), _slim(cur)
    kv = value(cur, names.KV_CACHE_USAGE_PERC, agg="max")
    out: dict[str, float | None] = {
        "kv_usage_pct": None if kv is None else 100.0 * kv,
        "running": value(cur, names.NUM_REQUESTS_RUNNING),
        "waiting": value(cur, names.NUM_REQUESTS_WAITING),
        "preemptions_total": value(cur, names.NUM_PREEMPTIONS_TOTAL),
    }
    secs = (cur.at - prev.at).total_seconds() if prev is not None and prev.at and cur.at else 0.0
    for key, name in _RATES.items():
        out[key] = rate_between(value(prev, name), value(cur, name), secs) if prev is not None else None
    out.update(latency_quantiles(prev, cur))
    return out


def window_summary(scrapes: Sequence[Scrape]) -> dict[str, Any]:
    """What a window of `/metrics` scrapes says — the one summary `diagnose`, the sidecar's
    `/api/diagnosis`, `compare` and the README quote.

    Two kinds of number, labelled as such:
    - over the window (first → last scrape): `generation_tps`, `preemptions`, `requests_finished`,
      `<ttft|itl|e2e>_p<q>_s` from the bucket increase between the first and last scrape;
    - since vLLM started (the counters' values at the last scrape): `preemptions_since_start`,
      `requests_finished_since_start`, `<...>_p<q>_since_start_s`.
    Scrapes are taken in time order; two stamped with the same time (saved snapshots carry
    whole seconds) are one point, the later one.
    """
    by_time: dict[float, Scrape] = {}
    for sc in scrapes:
        if sc.ok and sc.samples and sc.at is not None:
            by_time[_secs(sc.at)] = sc
    ok = [by_time[k] for k in sorted(by_time)]
    out: dict[str, Any] = {"scrapes": len(ok)}
    if not ok:
        return out
    first, last = ok[0], ok[-1]
    out["window_seconds"] = round(_secs(last.at) - _secs(first.at), 1)  # type: ignore[arg-type]
    gen = [(s.at, v) for s in ok if (v := value(s, names.GENERATION_TOKENS_TOTAL)) is not None]
    out["generation_tps"] = _round(rate(gen), 1) if len(gen) >= 2 else None  # type: ignore[arg-type]
    for key, name in (
        ("preemptions", names.NUM_PREEMPTIONS_TOTAL),
        ("requests_finished", names.REQUEST_SUCCESS_TOTAL),
    ):
        vals = [v for v in (value(s, name) for s in ok) if v is not None]
        out[key] = int(counter_increase(vals)) if len(vals) >= 2 else None
        since = value(last, name)
        out[f"{key}_since_start"] = int(since) if since is not None else None
    kv = [v for v in (value(s, names.KV_CACHE_USAGE_PERC, agg="max") for s in ok) if v is not None]
    out["kv_usage_max_pct"] = round(100 * max(kv), 1) if kv else None
    window = latency_quantiles(first, last) if len(ok) >= 2 else {}
    for tag, since in latency_quantiles(None, last).items():
        out[f"{tag}_s"] = _round(window.get(tag), 4)
        out[f"{tag}_since_start_s"] = _round(since, 4)
    return out
