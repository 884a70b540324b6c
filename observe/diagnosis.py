"""From events (and scrapes) to a diagnosis of one vLLM instance. Pure: no I/O, `now` is a parameter.

`InstanceBuilder` consumes events one at a time (so `diagnose` streams a 1 GB log in flat memory):
exact whole-run aggregates go to `Summary` (each rule's own counts to its `State` there), shapes over time to a bounded `timeline.Timeline`,
startup facts to `EngineConfig`. `finish()` runs the rules (observe.rules) and the advisor once.
`analyze_instance()` is the same thing for a list of events (the sidecar's window).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from observe import advise as advise_mod
from observe import launches, timeline, versions
from observe.advise.rejected import rejected_flags
from observe.failures import shutdown
from observe.failures.kinds import KV_KINDS, FailureKind
from observe.flags import cmdline
from observe.launches import History
from observe.metrics import metricmath
from observe.model import (
    AccessLog,
    AdviceNote,
    EngineConfig,
    EngineError,
    Finding,
    Preemption,
    PrefixCacheSample,
    Recommendation,
    Scrape,
    SpecDecodeSample,
    StartupFact,
    StatsSample,
)
from observe.rules import table as rules
from observe.rules.base import State
from observe.rules.context import Context, events_dict, stats_dict
from observe.rules.kv import Silent
from observe.rules.summary import Summary
from observe.settings import Settings

__all__ = ["Diagnosis", "InstanceBuilder", "InstanceDiagnosis", "Summary", "analyze_instance"]

#: error kinds whose "startup" phase the start-up phase facts refine (loading_weights, profiling, …)
_PHASED = (FailureKind.EXCEPTION, FailureKind.ERROR_LINE, FailureKind.ENGINE_CRASHED)

if TYPE_CHECKING:  # pandas lives in timeline.py (and the detectors that read its frame)
    import pandas as pd


def _mx(a, b):
    if b is None:
        return a
    return b if a is None or b > a else a


@dataclass
class InstanceDiagnosis:
    name: str
    sources: list[dict]
    config: EngineConfig
    stats: dict
    events: dict
    findings: list[Finding]
    recommendations: list[Recommendation]
    command: str | None
    frame: pd.DataFrame | None
    summary: Summary | None = None
    scrapes: int = 0
    notes: list[AdviceNote] = field(default_factory=list)  # findings no flag change answers
    # every launch the log holds, in order (the last is this diagnosis); earlier ones are history
    launches: list[launches.Launch] = field(default_factory=list)
    launches_dropped: int = 0  # earlier launches beyond launches.MAX_LAUNCHES, not kept
    history: History = field(default_factory=History)  # every earlier launch, bounded


@dataclass
class Diagnosis:
    instances: list[InstanceDiagnosis]
    generated_at: datetime | None = None
    unreadable: list[dict] = field(default_factory=list)  # [{path, reason}]


class InstanceBuilder:
    """Streams events of one instance into a Summary, a bounded Timeline and an EngineConfig."""

    def __init__(self, name: str, *, max_rows: int = 20_000, settings: Settings | None = None) -> None:
        self.name = name
        self.settings = settings or Settings()
        self._route: dict[type, tuple[type[State[Any]], ...]] = {}  # event type → the states it feeds
        self.summary = self._fresh()
        self.timeline = timeline.Timeline(max_rows=max_rows)
        self.config = EngineConfig()
        self.facts: dict[str, Any] = {}
        self.sources: list[dict] = []
        self.scrapes: list[Scrape] = []
        self.history = History()  # the earlier launches of this log, summarised as each ended
        self._index = 1  # the current launch's number
        self._bound = launches.Boundary()
        self._held: StartupFact | None = None  # a version fact waiting for the next event
        self._first: tuple[datetime | None, str | None] | None = None  # the launch's first (time, where)

    # ---------------------------------------------------------------- launches
    @property
    def launch_count(self) -> int:
        """Launches read so far (the current one included)."""
        return self._index

    def add(self, ev) -> None:
        """One event, in log order; a launch-opening event after a launch's lines starts a new launch."""
        if self._held is not None:
            held, self._held = self._held, None
            if launches.engine_init(held, ev):
                self._take(held, banner=False)
            else:
                self._next_launch()
                self._take(held)
        verdict = self._bound.opens(ev)
        if verdict == launches.Boundary.HOLD:
            self._held = ev
            return
        if verdict:
            self._next_launch()
        self._take(ev)

    def _settle(self) -> None:
        """A held version fact with no engine-init line after it: a banner, so a new launch."""
        if self._held is not None:
            held, self._held = self._held, None
            self._next_launch()
            self._take(held)

    def _take(self, ev, *, banner: bool = True) -> None:
        self._bound.note(ev, banner=banner)
        env = getattr(ev, "env", None)
        if isinstance(ev, AccessLog) and ev.env.ts is None:
            env = None  # the byte scan counts these without events (count_access): no launch start
        if env is not None and (self._first is None or self._first[0] is None and env.ts is not None):
            where = self._first[1] if self._first else f"{env.source}:{env.lineno}"
            self._first = (env.ts, where)
        self._add(ev)

    def _next_launch(self) -> None:
        """Close the current launch (its own findings, advice and command) and start a fresh one."""
        self._finish_config()
        closed = self._diagnose(scrapes=(), now=None, ended=True)
        self.history.add(self._record(closed, current=False))  # its timeline and summary go
        self.summary = self._fresh()
        self.timeline = timeline.Timeline(max_rows=self.timeline.max_rows)
        self.config = EngineConfig()
        self.facts = {}
        self._bound.reset()
        self._first = None
        self._index += 1

    @staticmethod
    def _fresh() -> Summary:
        """A launch's empty Summary, with a fresh accumulator for each rule that declares one."""
        return Summary(states={k: k() for k in rules.states()})

    def _feed(self, ev: Any) -> None:
        """The rules' own accumulators that take this event's type, in table order."""
        kinds = self._route.get(type(ev))
        if kinds is None:
            kinds = self._route[type(ev)] = tuple(k for k in rules.states() if isinstance(ev, k.takes))
        for k in kinds:
            self.summary.states[k].add(ev, self.settings)

    def _record(self, d: InstanceDiagnosis, *, current: bool) -> launches.Launch:
        first = self._first or (None, None)
        return launches.record(self._index, first, self.summary, self.config, d, current=current)

    # ---------------------------------------------------------------- events
    def _add(self, ev) -> None:
        s = self.summary
        env = getattr(ev, "env", None)
        if env is not None and env.ts is not None:
            if s.first_ts is None:
                s.first_ts = env.ts
            s.last_ts = env.ts
        if env is not None:
            if env.logger_file and env.logger_line and len(s.call_sites) < Summary.MAX_SITES:
                s.call_sites.add((env.logger_file, env.logger_line))
            if env.process and len(s.processes) < Summary.MAX_SITES:
                s.processes.add(env.process)
        self._feed(ev)
        if isinstance(ev, StatsSample):
            self._stats(ev)
        elif isinstance(ev, Preemption):
            s.preemption_warnings += ev.env.repeat
            if ev.cumulative is not None:
                s.cumulative_preemptions = _mx(s.cumulative_preemptions, ev.cumulative)
            self.timeline.add_preemption(ev)
        elif isinstance(ev, StartupFact):
            self._fact(ev)
        elif isinstance(ev, EngineError) and ev.kind == shutdown.NOISE_KIND:
            s.shutdown_noise += 1  # the shutdown race vLLM prints on a clean stop: not a crash
        elif isinstance(ev, EngineError):
            if ev.details.get("phase") == "startup" and s.phase is not None and ev.kind in _PHASED:
                ev = dataclasses.replace(ev, details={**ev.details, "phase": s.phase})  # loading, profiling…
            s.error_kinds[ev.kind] = s.error_kinds.get(ev.kind, 0) + 1
            if ev.kind == FailureKind.OOM:
                s.oom_errors += 1
                s.oom_phases.append(s.phase if s.phase is not None or not s.samples else "serving")
            mml = ev.details.get("max_model_len") or ev.details.get("max_seq_len")
            if mml and self.config.max_model_len is None and ev.kind in KV_KINDS:
                self.config.max_model_len = int(mml)
            if len(s.errors) < Summary.MAX_ERRORS:
                s.errors.append(ev)
        elif isinstance(ev, PrefixCacheSample):
            hits = [x for x in (ev.gpu_pct, ev.cpu_pct) if x is not None]
            if hits:  # V0 CPU backend reports its hits under "CPU"
                s.prefix_hit_sum += max(hits)
                s.prefix_hit_samples += 1
        elif isinstance(ev, SpecDecodeSample):
            s.spec_decode_lines += 1
        elif isinstance(ev, AccessLog):
            s.access_lines += 1
            if ev.status >= 500:
                s.access_errors += 1

    def count_access(self, n: int) -> None:
        """n access lines with status below 500 and no timestamp, counted without their events."""
        self._settle()
        self._bound.ended = True
        self.summary.access_lines += n

    def _stats(self, ev: StatsSample) -> None:
        s = self.summary
        s.samples += 1
        where = f"{ev.env.source}:{ev.env.lineno}"
        if s.first_where is None:
            s.first_where = where
        s.last_where = where
        if ev.env.ts is not None:
            s.stats_first_ts = s.stats_first_ts or ev.env.ts
            s.stats_last_ts = ev.env.ts
        s.stats_formats.add(ev.fmt)
        if ev.env.logger_file and len(s.stats_loggers) < Summary.MAX_SITES:
            s.stats_loggers.add(ev.env.logger_file)
        if ev.kv_device:
            s.kv_device = ev.kv_device
        kv = ev.kv_usage_pct
        if kv is not None:
            s.kv_samples += 1
            s.max_kv = _mx(s.max_kv, kv)
            if kv >= self.settings.kv_high_pct:
                s.kv_high += 1
            if kv >= self.settings.kv_full_pct:
                s.kv_full += 1
            if ev.running and len(s._kv_usage_running) < 100_000:
                s._kv_usage_running.append((kv, ev.running))
        s.max_running = _mx(s.max_running, ev.running)
        s.max_waiting = _mx(s.max_waiting, ev.waiting)
        if ev.running is not None or ev.waiting is not None:  # at once: the peaks may be samples apart
            s.max_in_flight = _mx(s.max_in_flight, (ev.running or 0) + (ev.waiting or 0))
        s.max_swapped = _mx(s.max_swapped, ev.swapped)
        s.max_prompt_tps = _mx(s.max_prompt_tps, ev.prompt_tps)
        gen = ev.generation_tps if ev.generation_tps is not None else ev.throughput_tps
        s.max_gen_tps = _mx(s.max_gen_tps, gen)
        if gen is not None:
            s.sum_gen_tps += gen
            s.gen_samples += 1
        if ev.prefix_hit_pct is not None:
            s.prefix_hit_sum += ev.prefix_hit_pct
            s.prefix_hit_samples += 1
        if ev.preemptions:
            s.interval_preemptions += ev.preemptions
        s.phase = "serving"
        for clause, v in (
            ("throughput", ev.throughput_tps),
            ("swapped", ev.swapped),
            ("preemptions", ev.preemptions),
            ("deferred", ev.deferred),
            ("prefix_hit", ev.prefix_hit_pct),
            ("cpu_kv", ev.cpu_kv_usage_pct),
            ("engine_index", ev.engine_index),
        ):
            if v is not None:
                s.stats_clauses.add(clause)
        self.timeline.add_stats(ev)

    def _fact(self, ev: StartupFact) -> None:
        name, value = ev.name, ev.value
        c = self.config
        if not self.summary.samples and ev.env.ts is not None:
            self.summary.startup_fact_ts = ev.env.ts
        if name == "flags" and isinstance(value, dict):
            self.summary.kv_by_worker.clear()  # a launch: its workers report afresh
            self.summary.kv_worst_worker = None
            model = cmdline.model_name(value)
            c.flags.update(value)
            cmdline.apply_to_config(c, {k: v for k, v in value.items() if k != "--model"})
            if model:  # the flags name the model path; a config fact may have given the served name
                c.model = str(model)
        elif name == "release_flags" and isinstance(value, (tuple, list)):
            c.release_flags.update(str(x) for x in value)
        elif name == "memory_env" and isinstance(value, dict):
            c.memory_env.update(value)
        elif name in ("flags_damaged", "launcher"):  # launcher: "api_server", a pasted module command
            setattr(c, name, bool(value) if name == "flags_damaged" else str(value))
        elif name == "config" and isinstance(value, dict):
            cmdline.apply_to_config(c, cmdline.config_to_flags(value), overwrite=False)
        elif name == "version":
            c.version = str(value)
        elif name == "engine":
            c.engine = str(value)
        elif name in ("num_gpu_blocks", "block_size"):
            setattr(c, name, int(value))
        elif name == "kv_extended_gib":
            c.kv_extended_gib = float(value)
        elif name == "kv_cache_tokens":
            c.kv_cache_tokens = int(value)
        elif name == "max_concurrency":
            c.max_concurrency = float(value)
        elif name == "max_concurrency_len":
            c.max_concurrency_len = int(value)
        elif name == "available_kv_gib":
            # one line per worker: the worst rank decides (vLLM sizes the cache by the smallest)
            workers = self.summary.kv_by_worker
            label = (ev.env.process or "engine") + (f" pid={ev.env.pid}" if ev.env.pid is not None else "")
            workers[label] = float(value)
            worst = min(workers, key=lambda k: workers[k])
            c.available_kv_gib = workers[worst]
            self.summary.kv_worst_worker = worst if len(workers) > 1 else None
        elif name == "weights_gib":
            c.weights_gib = float(value)
        elif name == "total_gpu_memory_gib":
            c.total_gpu_memory_gib = float(value)
        elif name == "gpu_memory_utilization" and c.gpu_memory_utilization is None:
            c.gpu_memory_utilization = float(value)
        elif name == "max_model_len" and c.max_model_len is None:
            c.max_model_len = int(value)
        elif name == "max_num_batched_tokens" and c.max_num_batched_tokens is None:
            c.max_num_batched_tokens = int(value)
        elif name == "phase":
            self.summary.phase = str(value)
        elif name == "ready":
            self.summary.ready_where = (ev.env.source, ev.env.lineno)
        elif name == "weights_progress" and self.summary.phase is None:
            # an unfinished weight-loading bar with no phase told before it: an OOM read just before it (no
            # phase yet, nothing served) came while the weights loaded — tqdm's stderr lands after the record
            s = self.summary
            if s.oom_phases and s.oom_phases[-1] is None and not s.samples:
                s.oom_phases[-1] = "loading_weights"
        elif name == "hint" and isinstance(value, dict):
            hs = self.summary.hints
            key = (value.get("flag"), value.get("direction"), value.get("value"))
            if len(hs) < Summary.MAX_HINTS and all(
                (h["flag"], h["direction"], h["value"]) != key for h in hs
            ):
                hs.append(dict(value, where=f"{ev.env.source}:{ev.env.lineno}"))
        self.facts[name] = value

    def add_scrape(self, scrape: Scrape) -> None:
        self.scrapes.append(scrape)

    # ---------------------------------------------------------------- finish
    def finish(self, *, now: datetime | None = None, log_ended: bool = False) -> InstanceDiagnosis:
        """The diagnosis of the latest launch (with the scrapes), and every launch as `launches`. log_ended: the
        log was read to its end, offline (``Context.log_ended``); the sidecar's window never is."""
        self._settle()
        self._finish_config(self.scrapes)
        d = self._diagnose(scrapes=self.scrapes, now=now, log_ended=log_ended)
        d.launches = [*self.history.kept, self._record(d, current=True)]
        d.launches_dropped, d.history = self.history.dropped, self.history
        return d

    def finish_host_only(self, *, now: datetime | None = None) -> InstanceDiagnosis | None:
        """A log with no line of vLLM's own: its diagnosis when it shows a critical failure, read from
        the host program's lines (`Summary.host_only`: a phase it cannot tell is unknown), else None."""
        self.summary.host_only = True
        d = self.finish(now=now)
        return d if any(f.severity == "critical" for f in d.findings) else None

    def _finish_config(self, scrapes: Sequence[Scrape] = ()) -> None:
        s = self.summary
        cfg = self.config
        _complete_config(cfg, s, scrapes, self.facts)
        if s.max_tokens_per_running is None and cfg.kv_cache_tokens:
            per = [kv / 100.0 * cfg.kv_cache_tokens / r for kv, r in s._kv_usage_running if r]
            if per:
                s.max_tokens_per_running = max(per)

    def _diagnose(
        self, *, scrapes: Sequence[Scrape], now: datetime | None, ended: bool = False, log_ended: bool = False
    ) -> InstanceDiagnosis:
        """ended: a launch before the latest, diagnosed as it ends for what it failed of (rules.HISTORY)."""
        s = self.summary
        cfg = self.config
        logs = None if self.timeline.empty else self.timeline.frame()
        metrics = timeline.scrape_frame(scrapes) if scrapes else None
        frame = timeline.join(logs, metrics)
        ctx = Context(s, cfg, frame, metrics, scrapes, now, self.settings, log_ended)  # what every rule reads
        findings = rules.run(ctx, rules.HISTORY if ended else rules.RULES)
        advice = (
            advise_mod.Advice()  # an earlier launch that failed of nothing: nothing to advise it
            if ended and not findings
            else advise_mod.plan(cfg, findings, facts=ctx.facts(), settings=self.settings)
        )
        recs = advice.recommendations
        drop = rejected_flags(findings)
        command = (
            advise_mod.command_line(cfg, recs, drop=drop)
            if recs or any(f in cfg.flags for f in drop)
            else None
        )
        # an earlier launch keeps its findings, advice and command (launches.record), not these
        stats = {} if ended else stats_dict(s, self.settings)
        if scrapes:
            stats["metrics"] = metricmath.window_summary(scrapes)
        return InstanceDiagnosis(
            name=self.name,
            sources=self.sources,
            config=cfg,
            stats=stats,
            events={} if ended else events_dict(s, ctx, ctx.state(Silent).requests),
            findings=findings,
            recommendations=recs,
            command=command,
            frame=frame,
            summary=s,
            scrapes=len(scrapes),
            notes=advice.notes,
        )


def _complete_config(
    cfg: EngineConfig, s: Summary, scrapes: Sequence[Scrape], facts: Mapping[str, Any] | None = None
) -> None:
    """Fill what the startup lines did not say from derived facts and vllm:cache_config_info (facts: the start-up
    facts by name; the engine banner's shape bounds the release, parse.banner)."""
    facts = facts or {}
    if cfg.engine is None and s.stats_formats:
        cfg.engine = "v0" if "v0" in s.stats_formats else "v1"
    if cfg.device is None and s.kv_device:
        cfg.device = s.kv_device
    live = next((c for c in (metricmath.running_config(s) for s in reversed(list(scrapes))) if c), {})
    for attr, key in (
        ("num_gpu_blocks", "num_gpu_blocks"),
        ("block_size", "block_size"),
        ("gpu_memory_utilization", "gpu_memory_utilization"),
        ("kv_cache_dtype", "cache_dtype"),
        ("enable_prefix_caching", "enable_prefix_caching"),
    ):
        if getattr(cfg, attr) is None and live.get(key) is not None:
            setattr(cfg, attr, live[key])
    if cfg.kv_cache_tokens is None and cfg.num_gpu_blocks and cfg.block_size:
        cfg.kv_cache_tokens = cfg.num_gpu_blocks * cfg.block_size
    if cfg.kv_cache_tokens is None and cfg.num_gpu_blocks and cfg.engine == "v0" and cfg.block_size is None:
        from observe.capacity import defaults  # the capacity package only where it is needed

        cfg.kv_cache_tokens = cfg.num_gpu_blocks * defaults.block_size(cfg.version, engine="v0")
    if cfg.max_model_len is None and cfg.max_concurrency_len:
        cfg.max_model_len = cfg.max_concurrency_len
    cfg.version_range = versions.infer_range(
        cfg.version,
        engine=cfg.engine,
        stats_formats=s.stats_formats,
        clauses=s.stats_clauses,
        call_sites=s.call_sites,
        processes=s.processes,
        unversioned_banner=bool(facts.get("unversioned_banner")),  # the engine banner named no version
        stats_loggers=s.stats_loggers,
        banner_without_eager=bool(facts.get("banner_without_eager")),  # nor its 0.2.6 field
    )


def analyze_instance(
    name: str,
    events: Iterable,
    scrapes: Sequence[Scrape] = (),
    *,
    now: datetime | None = None,
    sources: list[dict] | None = None,
    settings: Settings | None = None,
) -> InstanceDiagnosis:
    """Diagnose one instance from its events (the sidecar's window) and scrapes."""
    b = InstanceBuilder(name, settings=settings)
    for ev in events:
        b.add(ev)
    for sc in scrapes:
        b.add_scrape(sc)
    b.sources = list(sources or [])
    return b.finish(now=now)
