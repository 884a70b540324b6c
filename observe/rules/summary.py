"""``Summary``: the exact aggregates over one launch's events that several rules, the report and the
launch history read (counts, maxima, first and last times, the errors), and the per-rule
accumulators (``State``) in ``states``. Pure; the diagnosis fills it as the log streams.

A count only one rule reads is that rule's ``State``, declared in its own module, not a field here.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, TypeVar, cast

from observe.rules.state import State

S = TypeVar("S", bound=State[Any])


@dataclass
class Summary:
    """Exact aggregates over every event of one instance (constant memory)."""

    samples: int = 0
    kv_samples: int = 0
    kv_high: int = 0  # samples with KV usage >= Settings.kv_high_pct
    kv_full: int = 0  # samples with KV usage >= Settings.kv_full_pct
    max_kv: float | None = None
    max_running: int | None = None
    max_waiting: int | None = None
    max_in_flight: int | None = None  # the most running + waiting in one stats sample (not the two maxima)
    max_swapped: int | None = None
    max_prompt_tps: float | None = None
    max_gen_tps: float | None = None
    sum_gen_tps: float = 0.0
    gen_samples: int = 0
    prefix_hit_sum: float = 0.0
    prefix_hit_samples: int = 0
    interval_preemptions: int = 0  # V1 `Preemptions: N` fields summed
    preemption_warnings: int = 0
    cumulative_preemptions: int | None = None
    oom_errors: int = 0
    errors: list = field(default_factory=list)  # EngineError (bounded)
    error_kinds: dict = field(default_factory=dict)
    spec_decode_lines: int = 0
    shutdown_noise: int = 0
    access_lines: int = 0
    access_errors: int = 0  # HTTP 5xx
    first_ts: datetime | None = None
    last_ts: datetime | None = None
    stats_first_ts: datetime | None = None
    stats_last_ts: datetime | None = None
    first_where: str | None = None
    last_where: str | None = None
    stats_formats: set = field(default_factory=set)
    stats_loggers: set = field(default_factory=set)  # the logger files of the stats lines ("metrics.py", …)
    kv_device: str | None = None
    # tokens per running request, from KV usage (needs kv_cache_tokens): max over samples
    max_tokens_per_running: float | None = None
    _kv_usage_running: list = field(default_factory=list)  # (kv_pct, running) for later, bounded
    hints: list = field(default_factory=list)  # hint facts' dicts, each (flag, direction, value) once
    phase: str | None = None  # the startup phase last seen (a "phase" fact; "serving" after a stats line)
    ready_where: tuple[str, int] | None = (
        None  # (source, line) of the last "Starting vLLM API server" (a "ready" fact)
    )
    # the time of the last start-up fact read before any stats line (the start-up moving on: failures.stuck)
    startup_fact_ts: datetime | None = None
    oom_phases: list = field(default_factory=list)  # the phase at each OOM error, in order
    call_sites: set = field(default_factory=set)  # (logger file, line) pairs seen, bounded
    processes: set = field(default_factory=set)
    stats_clauses: set = field(default_factory=set)  # "throughput", "swapped", "preemptions", ...
    kv_by_worker: dict = field(default_factory=dict)  # "Worker_TP1 pid=7" → available KV GiB it printed
    kv_worst_worker: str | None = None  # the worker with the least, when several printed theirs
    # no line of the log is vLLM's own: what failed is read from the host program's lines (diagnose only)
    host_only: bool = False
    # each rule's own accumulator (Rule.states), by its class: fed by the diagnosis, read by ctx.state
    states: dict[type[State[Any]], State[Any]] = field(default_factory=dict)

    MAX_ERRORS = 50
    MAX_HINTS = 50
    MAX_SITES = 200

    def state(self, kind: type[S]) -> S:
        """A rule's accumulator (KeyError: no rule of the table declares it)."""
        return cast(S, self.states[kind])
