"""Core: the traffic a vLLM served, as a `vllm bench serve` workload (`observe tune --workload-from`).

Pure: two /metrics reads (Scrapes, each with its own time) and, where a log gives them, the
seconds at which requests arrived, in; the figures of a random-dataset workload out. What is
measured and what is estimated (docs/tune.md, "Tuning on the traffic the server gets"):

- **lengths** (`--random-input-len`, `--random-output-len`): the mean prompt and output length of
  the requests that finished between the reads, exact (`_sum` / `_count` increase of
  `vllm:request_prompt_tokens` and `vllm:request_generation_tokens`, which vLLM observes once per
  finished request);
- **spread** (`--random-range-ratio`): estimated. vLLM 0.32's random dataset
  (`vllm/benchmarks/datasets/utils.py`, `get_sampling_params`) draws each length uniformly from the
  integers in [floor(L·(1−r)), ceil(L·(1+r))]; the fit is the r in [0, 0.99] whose bucket shares,
  for that uniform around the measured mean, come closest (least squares over the cumulative
  shares at each bucket bound) to the histogram's. The buckets are vLLM's 1-2-5 series (…, 50, 100,
  200, 500, …), so r is only known within them: when several r fit equally well the middle one is
  taken and the range is kept (`range_ratio_bounds`);
- **rate** (`--request-rate`): requests that finished between the reads (`vllm:request_success_total`,
  else the e2e latency histogram's `_count`) over the seconds between the reads' own stamps. It
  equals the arrival rate when the server keeps up (what finished ≈ what arrived over the window);
- **burstiness** (`--burstiness`, the client's gamma shape k; 1 is Poisson, larger is more regular):
  estimated from the `Received request` lines vLLM logs with `--enable-log-requests`. Their stamps
  carry whole seconds, so the gaps themselves are not seen; the requests counted per second from
  the first to the last arrival are, and for a renewal process the counts' variance-to-mean ratio
  tends to the gaps' CV² = 1/k: burstiness = mean / variance of the per-second counts. Without such
  lines it is not estimated (the client's default, Poisson);
- **num_prompts**: enough requests for `seconds` of that traffic, bounded.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from observe.errors import InputError
from observe.metrics import metricmath, names
from observe.model import Scrape
from observe.parse.envelope import PREFIX_RE

__all__ = [
    "PROMPT",
    "OUTPUT",
    "Lengths",
    "Traffic",
    "TrafficError",
    "arrival_seconds",
    "burstiness",
    "derive",
    "fit_range_ratio",
    "lengths",
]

PROMPT = names.REQUEST_PROMPT_TOKENS
OUTPUT = names.REQUEST_GENERATION_TOKENS
FINISHED = names.REQUEST_SUCCESS_TOTAL
E2E = names.E2E_REQUEST_LATENCY_SECONDS
#: the message vLLM's request logger writes once per API request (`--enable-log-requests`,
#: vllm/entrypoints/serve/utils/request_logger.py `log_inputs`)
RECEIVED = "Received request "

MAX_RANGE_RATIO = 0.99  # the client takes r in [0, 1)
MIN_ARRIVALS = 20  # fewer arrivals in the log: burstiness is not estimated
MIN_SECONDS = 10  # nor over fewer whole seconds
BURSTINESS_BOUNDS = (0.05, 100.0)


class TrafficError(InputError):
    """What a vLLM recorded is too little to take a workload from (one read, no requests)."""


@dataclass(frozen=True)
class Lengths:
    """One length histogram over the requests that finished between two reads."""

    requests: int
    mean: float
    range_ratio: float
    range_ratio_bounds: tuple[float, float]
    p50: float | None
    p90: float | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "requests": self.requests,
            "mean": round(self.mean, 1),
            "range_ratio": self.range_ratio,
            "range_ratio_bounds": list(self.range_ratio_bounds),
            "p50": None if self.p50 is None else round(self.p50, 1),
            "p90": None if self.p90 is None else round(self.p90, 1),
        }


@dataclass(frozen=True)
class Traffic:
    """What the instance served between two reads, and the workload that replays it."""

    source: str
    seconds: float
    requests: int
    request_rate: float
    rate_from: str
    prompt: Lengths
    output: Lengths
    burstiness: float | None
    burstiness_from: str
    num_prompts: int

    def workload(self) -> dict[str, Any]:
        """The fields of `tune.bench.Workload` this traffic fills (the random dataset, paced by
        the rate, no concurrency cap: the rate is what real clients sent)."""
        return {
            "dataset": "random",
            "input_len": max(1, round(self.prompt.mean)),
            "output_len": max(1, round(self.output.mean)),
            "range_ratio": self.prompt.range_ratio,
            "output_range_ratio": self.output.range_ratio,
            "request_rate": f"{self.request_rate:.4g}",
            "burstiness": self.burstiness,
            "max_concurrency": None,
            "num_prompts": self.num_prompts,
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "from": self.source,
            "window_seconds": round(self.seconds, 1),
            "requests": self.requests,
            "request_rate": round(self.request_rate, 4),
            "rate_from": self.rate_from,
            "prompt_tokens": self.prompt.to_dict(),
            "output_tokens": self.output.to_dict(),
            "burstiness": self.burstiness,
            "burstiness_from": self.burstiness_from,
        }

    def summary(self) -> str:
        """One line: what the workload replays."""
        b = f"burstiness {self.burstiness:g}" if self.burstiness is not None else "Poisson arrivals (assumed)"
        return (
            f"{self.requests} requests in {self.seconds:.0f} s: {self.request_rate:.3g} requests/s, "
            f"prompts {self.prompt.mean:.0f} tokens ±{self.prompt.range_ratio:.0%}, "
            f"outputs {self.output.mean:.0f} tokens ±{self.output.range_ratio:.0%}, {b}"
        )


# ---------------------------------------------------------------- lengths


def _increase(prev: Scrape, cur: Scrape, name: str) -> float | None:
    a, b = metricmath.value(prev, name), metricmath.value(cur, name)
    if a is None or b is None:
        return None
    return metricmath.counter_increase([a, b])


def lengths(prev: Scrape, cur: Scrape, family: str) -> Lengths | None:
    """`family`'s observations between the reads (reset-aware): their exact mean and the fitted
    range ratio; None when the histogram is absent or saw nothing in between."""
    end = metricmath.buckets(cur, family)
    if not end:
        return None
    delta = metricmath.bucket_delta(metricmath.buckets(prev, family), end)
    count = _increase(prev, cur, family + "_count")  # a decrease is a restart: the new life alone
    total = _increase(prev, cur, family + "_sum")
    if not count or total is None:
        return None
    mean = total / count
    r, lo, hi = fit_range_ratio(mean, delta)
    return Lengths(
        requests=int(round(count)),
        mean=mean,
        range_ratio=r,
        range_ratio_bounds=(lo, hi),
        p50=metricmath.histogram_quantile(0.5, delta),
        p90=metricmath.histogram_quantile(0.9, delta),
    )


def _uniform_cdf(le: float, low: int, high: int) -> float:
    """P(X ≤ le) for X uniform over the integers low..high."""
    if le < low:
        return 0.0
    if le >= high:
        return 1.0
    return (math.floor(le) - low + 1) / (high - low + 1)


def fit_range_ratio(mean: float, cumulative: Sequence[tuple[float, float]]) -> tuple[float, float, float]:
    """(r, low, high): the client's range ratio r whose uniform lengths around `mean` match the
    cumulative buckets [(le, count), …] best, and the range of r that match exactly as well.

    The client draws from [floor(mean·(1−r)), ceil(mean·(1+r))]; r runs over 0, 0.01 … 0.99."""
    fixed = sorted(cumulative)
    n = fixed[-1][1] if fixed else 0.0
    edges = [(le, c / n) for le, c in fixed if not math.isinf(le)] if n > 0 else []
    grid = [i / 100 for i in range(round(MAX_RANGE_RATIO * 100) + 1)]
    losses = []
    for r in grid:
        low = max(1, math.floor(mean * (1 - r)))
        high = max(low, math.ceil(mean * (1 + r)))
        losses.append(sum((share - _uniform_cdf(le, low, high)) ** 2 for le, share in edges))
    best = min(range(len(grid)), key=lambda i: losses[i])
    tie = losses[best] + 1e-12
    lo = hi = best
    while lo > 0 and losses[lo - 1] <= tie:
        lo -= 1
    while hi < len(grid) - 1 and losses[hi + 1] <= tie:
        hi += 1
    return round((grid[lo] + grid[hi]) / 2, 2), grid[lo], grid[hi]


# ---------------------------------------------------------------- arrivals


def arrival_seconds(lines: Iterable[str]) -> list[int]:
    """The whole second of each `Received request` line of a generation or pooling request (a
    `/tokenize` call logs one with `params: None`: not counted). vLLM's stamps carry no year:
    seconds from the start of a leap year, enough to count arrivals per second."""
    out = []
    for line in lines:
        if RECEIVED not in line:
            continue
        m = PREFIX_RE.search(line)
        if m is None:
            continue
        msg = line[m.end() :]
        if not msg.startswith(RECEIVED) or ": params: None," in msg:  # /tokenize: no generation
            continue
        try:
            t = datetime(2000, int(m["mo"]), int(m["dd"]), int(m["hh"]), int(m["mi"]), int(m["ss"]))
        except ValueError:
            continue
        out.append(int((t - datetime(2000, 1, 1)).total_seconds()))
    return out


def burstiness(seconds: Sequence[int]) -> float | None:
    """The client's gamma shape for arrivals at these whole seconds: mean / variance of the
    requests counted per second, from the first to the last arrival (the two edge seconds, partly
    outside the traffic, left out). None with fewer than MIN_ARRIVALS arrivals or MIN_SECONDS seconds."""
    if len(seconds) < MIN_ARRIVALS:
        return None
    per = Counter(seconds)
    first, last = min(per), max(per)
    counts = [per.get(s, 0) for s in range(first + 1, last)]
    if len(counts) < MIN_SECONDS:
        return None
    mean = sum(counts) / len(counts)
    var = sum((c - mean) ** 2 for c in counts) / (len(counts) - 1)
    if mean <= 0:
        return None
    lo, hi = BURSTINESS_BOUNDS
    k = hi if var <= 0 else min(hi, max(lo, mean / var))
    return round(k, 2)


# ---------------------------------------------------------------- the workload


def derive(
    prev: Scrape,
    cur: Scrape,
    *,
    source: str,
    arrivals: Sequence[int] | None = None,
    arrivals_from: str = "",
    seconds: float = 60.0,
    prompts: tuple[int, int] = (20, 1000),
) -> Traffic:
    """The traffic between two reads of one vLLM's /metrics (`prev` before `cur`, each stamped),
    with `arrivals` (`arrival_seconds` of its log) when there are any; `num_prompts` covers
    `seconds` of that traffic within `prompts` (at least, at most).

    TrafficError (one line, what was missing) when the reads carry no times, are not apart, lack
    vLLM's length histograms, or no request finished between them."""
    if prev.at is None or cur.at is None:
        raise TrafficError(f"{source}: a /metrics read carries no time; the rate needs two stamped reads")
    secs = (cur.at - prev.at).total_seconds()
    if secs <= 0:
        raise TrafficError(f"{source}: the two /metrics reads are not apart in time ({secs:g} s)")
    finished = _increase(prev, cur, FINISHED)
    rate_from = FINISHED
    if finished is None:
        finished, rate_from = _increase(prev, cur, E2E + "_count"), E2E + "_count"
    if finished is None:
        raise TrafficError(
            f"{source}: the /metrics reads have no {FINISHED} nor {E2E} (not a vLLM's /metrics?)"
        )
    if finished <= 0:
        raise TrafficError(
            f"{source}: no request finished between the two /metrics reads ({secs:.0f} s apart): "
            "no traffic to take a workload from (read over a busier window)"
        )
    prompt, output = lengths(prev, cur, PROMPT), lengths(prev, cur, OUTPUT)
    if prompt is None or output is None:
        missing = PROMPT if prompt is None else OUTPUT
        raise TrafficError(f"{source}: no {missing} observations between the two /metrics reads")
    rate = finished / secs
    k = burstiness(arrivals) if arrivals else None
    if k is not None:
        how = f"{len(arrivals or ())} `Received request` lines of {arrivals_from or 'the log'}"
    elif arrivals:
        how = f"not estimated: {len(arrivals)} `Received request` lines are too few"
    else:
        how = "not estimated: no `Received request` lines (vLLM's --enable-log-requests); Poisson assumed"
    lo, hi = prompts
    return Traffic(
        source=source,
        seconds=secs,
        requests=int(round(finished)),
        request_rate=rate,
        rate_from=rate_from,
        prompt=prompt,
        output=output,
        burstiness=k,
        burstiness_from=how,
        num_prompts=int(min(hi, max(lo, math.ceil(rate * seconds)))),
    )
