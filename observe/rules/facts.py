"""What the advisor's levers read besides the findings: the load seen, typed. Pure.

Built by ``Context.facts()`` from the window (the stats lines, /metrics scrapes and the summary).
The GPU's name is not a fact: it is ``EngineConfig.device`` (see flags.known.gpu_name). ``Facts.of`` takes a mapping of the same
names (tests, callers that build facts by hand); an unknown name is an error, never ignored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any


@dataclass(frozen=True)
class Facts:
    prompt_tokens_mean: float | None = None  # mean prompt length, /metrics _sum / _count
    max_kv_pct: float | None = None  # the fullest the KV cache got (stats lines)
    kv_pct_first: float | None = None  # KV usage at the first / last stats sample that has it
    kv_pct_last: float | None = None
    waiting_first: float | None = None  # requests waiting at the first / last stats sample
    waiting_last: float | None = None
    max_running: float | None = None
    running_last: float | None = None  # requests running at the last stats sample
    max_waiting: float | None = None
    # the most requests in the server at once: running + waiting in one stats sample (None: not
    # known, e.g. facts built by hand; the levers then take max_running + max_waiting, an upper bound)
    max_in_flight: float | None = None
    request_tokens: float | None = None  # a request's length: the KV a running request held, else the mean
    request_tokens_source: str | None = None  # where request_tokens was measured (Context.request_length)
    length_buckets: dict[str, list[tuple[float, float]]] | None = None  # prompt / generation histograms

    @classmethod
    def of(cls, given: Facts | Mapping[str, Any] | None) -> Facts:
        if given is None:
            return cls()
        if isinstance(given, Facts):
            return given
        names = {f.name for f in fields(cls)}
        unknown = sorted(set(given) - names)
        if unknown:
            raise TypeError(f"unknown facts: {', '.join(unknown)}")
        return cls(**dict(given))
