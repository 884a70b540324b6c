"""Composition: one vLLM instance as the live sidecar sees it — its window of events and scrapes,
its startup facts, its launch (``livelaunch.LaunchTracker``), its progress (``progress.stuck``),
its last diagnosis and the ``exporter.ExportState`` it exports.

The sidecar (``observe.sidecar.service``) holds one ``Instance`` beside one vLLM, or one per pod when it
reads a node's pod logs (``--pods``): the lines of ``/var/log/pods/<ns>_<pod>_<uid>/…`` go to that
pod's instance, labelled ``namespace``, ``pod`` and ``instance`` (``<ns>/<pod>``, as the PodMonitor
labels vLLM's own series). No thread and no file here: the sidecar calls
every method with its lock held, except ``parse`` (the follow loop's own parsers) and ``analyze``
(which takes what it needs under the lock it is given).
"""

from __future__ import annotations

import collections
import heapq
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

from observe import advise, diagnosis, report
from observe.advise import steady
from observe.advise.rejected import rejected_flags
from observe.failures import shutdown, stuck
from observe.findingids import FindingId
from observe.metrics import progress
from observe.model import (
    AccessLog,
    EngineError,
    Envelope,
    Finding,
    LogEvent,
    Preemption,
    Scrape,
    StartupFact,
    StatsSample,
)
from observe.parse import Parser, scan
from observe.sidecar import exporter
from observe.sidecar import launch as livelaunch
from observe.sidecar.config import SidecarSettings
from observe.sidecar.tail import CountedLines

__all__ = ["Instance", "label"]

_FACT_GAUGES = {"kv_cache_tokens", "max_concurrency", "version", "engine", "flags", "config"}


class Instance:
    """The live state of one vLLM instance (see the module's notes)."""

    def __init__(
        self,
        settings: SidecarSettings,
        name: str,
        *,
        clock: Callable[[], float],
        labels: dict[str, str] | None = None,
        url: str | None = None,
        on_failure: Callable[[], None] = lambda: None,
    ) -> None:
        self.settings = settings
        self.name = name  # the instance's name in the diagnosis
        self.labels = dict(labels or {})  # on its exported series ({} for the one instance)
        self.url = url  # its /metrics (None: logs only)
        self._clock = clock
        self._on_failure = on_failure  # a launch failed: the sidecar analyzes now
        self.events: collections.deque[tuple[float, LogEvent]] = collections.deque(maxlen=settings.max_events)
        # access-log lines can outnumber everything else 1000:1; they get their own, smaller
        # window so that a busy server's requests never push its stats lines out
        self.access: collections.deque[tuple[float, LogEvent]] = collections.deque(
            maxlen=settings.max_access_events
        )
        self.scrapes: collections.deque[tuple[float, Scrape]] = collections.deque(maxlen=10_000)
        self.facts: dict[str, StartupFact] = {}
        self.parsers: dict[str, Parser] = {}
        self.state = exporter.ExportState(up=None)
        self.doc: dict[str, Any] | None = None  # the last diagnosis, as report.to_dict made it
        self.last: diagnosis.InstanceDiagnosis | None = None
        self.model: dict[str, Any] | None = None  # /v1/models' answer
        self.launch = livelaunch.LaunchTracker()  # where the launch is: served, crashed, failed
        self.points: collections.deque[tuple[float, progress.Point]] = collections.deque(maxlen=10_000)
        self.stuck: progress.Stuck | None = None
        self.steady = steady.Steady()  # the advice shown across diagnoses (advise.steady)
        self.failed_in_row = 0  # failed /metrics reads since the last good one
        self.down_since: float | None = None  # wall time of the first of those failed reads
        self.state.engine_crashes = dict(self.launch.crashes)
        self.seen = clock()  # when its files were last open (a pod's instance is dropped long after)

    # ------------------------------------------------------------------ logs
    def parse(self, items: Iterable[object]) -> tuple[list[LogEvent], int]:
        """Parse one batch of this instance's lines (LogLines and counted runs): (events, lines)."""
        items = list(items)
        events: list[LogEvent] = []
        # access lines followed by max_access_events more of them in this batch would only pass
        # through the access window (all arrive at one time): those are counted, not parsed
        cap = self.settings.max_access_events
        later = sum(it.n for it in items if isinstance(it, CountedLines) and it.kind != scan.INERT)
        n_lines = 0
        for it in items:
            source = getattr(it, "source", "")
            p = self.parsers.get(source)
            if p is None:
                # live logs are from now: vLLM's stamps have no year (the parser handles Dec→Jan)
                p = self.parsers[source] = Parser(year=datetime.fromtimestamp(self._clock()).year)
            if not isinstance(it, CountedLines):
                n_lines += 1
                events.extend(p.feed(it))  # type: ignore[arg-type]
                continue
            n_lines += it.n
            if it.kind == scan.INERT:
                credit = it.n  # these lines yield nothing, wherever they are
            else:
                later -= it.n
                credit = min(it.n, it.n + later - cap)
            i = 0
            while i < credit and p.holding:  # a held-back stats record: these lines may continue it
                for ln in it.lines(i, i + 1):
                    events.extend(p.feed(ln))
                i += 1
            if credit > i:
                if it.kind == scan.INERT:
                    p.credit_lines(credit - i)
                else:
                    p.credit_access(credit - i, "APIServer" if it.kind == scan.COUNT_PROC else None)
                i = credit
            for ln in it.lines(i):
                events.extend(p.feed(ln))
        return events, n_lines

    def learn(self, ev: LogEvent, now: float, live: bool = True) -> None:
        """Update log-only facts from one event and keep it in the window. Not live (reading what
        was written before the sidecar started): only the launch and its facts."""
        st = self.state
        self._follow_launch(ev, now, live)
        if isinstance(ev, StartupFact):
            self.facts[ev.name] = ev
            if ev.name == "kv_cache_tokens":
                st.kv_cache_tokens = _num(ev.value, int)
            elif ev.name == "max_concurrency":
                st.max_concurrency = _num(ev.value, float)
            elif ev.name == "flags" and isinstance(ev.value, dict):
                st.max_num_seqs = _num(ev.value.get("--max-num-seqs"), int)
            elif ev.name in exporter.CUDA_GRAPH_GAUGES and _num(ev.value, float) is not None:
                st.cuda_graph[ev.name] = float(ev.value)
            if ev.name in _FACT_GAUGES:
                self.update_info()
            return
        if not live:  # the past: only the latest launch's errors (what failed), none counted again
            if isinstance(ev, EngineError) and not shutdown.is_noise(ev):
                self.events.append((now, ev))
            return
        if isinstance(ev, AccessLog):
            self.access.append((now, ev))
            return
        self.events.append((now, ev))
        if isinstance(ev, StatsSample):
            engine = "" if ev.engine_index is None else str(ev.engine_index)
            fields = st.stats.setdefault(engine, {})
            for attr in exporter.STATS_GAUGES:
                v = getattr(ev, attr, None)
                if v is not None:
                    fields[attr] = float(v)
            if ev.kv_fetch is not None or engine in st.kv_fetch:  # printed only while any is > 0
                st.kv_fetch[engine] = ev.kv_fetch or (0, 0, 0)
            st.stats_lines += 1
            st.last_stats_time = now
            if ev.preemptions:
                st.interval_preemptions += int(ev.preemptions)
        elif isinstance(ev, Preemption):
            st.preemption_warnings += ev.env.repeat
            if ev.cumulative is not None:
                st.cumulative_preemptions = max(st.cumulative_preemptions or 0, ev.cumulative)
        elif isinstance(ev, EngineError) and not shutdown.is_noise(ev):
            st.engine_errors[ev.kind] = st.engine_errors.get(ev.kind, 0) + ev.env.repeat

    def _follow_launch(self, ev: LogEvent, now: float, live: bool) -> None:
        """Launch boundaries, crashes and start-up failures from one event."""
        before = self.launch.failure
        if self.launch.see(ev, now, live=live):
            self._new_launch()
        self.state.engine_crashes = dict(self.launch.crashes)
        if self.launch.failure is not None and self.launch.failure is not before:
            self._on_failure()

    def _new_launch(self) -> None:
        """vLLM starts again: the previous launch's events, scrapes and facts leave the window."""
        self.facts.clear()
        self.events.clear()
        self.access.clear()
        self.scrapes.clear()
        self.points.clear()
        self.stuck = None
        self.failed_in_row = 0  # failed /metrics reads since the last good one
        st = self.state
        st.kv_cache_tokens = st.max_concurrency = st.max_num_seqs = None
        st.cuda_graph = {}
        st.kv_fetch = {}
        st.engine_stuck = None if st.engine_stuck is None else False
        self.prune(self._clock())

    def update_info(self) -> None:
        info = livelaunch.info(self.facts, self.model)
        if info is not None:
            self.state.info = {k: label(v) for k, v in info.items()}

    def prune(self, now: float) -> None:
        """Drop events and scrapes older than the window."""
        cutoff = now - self.settings.window
        while self.events and self.events[0][0] < cutoff:
            self.events.popleft()
        while self.access and self.access[0][0] < cutoff:
            self.access.popleft()
        while self.scrapes and self.scrapes[0][0] < cutoff:
            self.scrapes.popleft()
        self.state.window_events = len(self.events) + len(self.access)
        self.state.window_scrapes = len(self.scrapes)

    # ------------------------------------------------------------------ /metrics
    def scraped(
        self, sc: Scrape, took: float, model: dict[str, Any] | None, wall: float, at: datetime
    ) -> None:
        """Fold one read of vLLM's /metrics in (and /v1/models' answer, if it came)."""
        st = self.state
        st.scrapes += 1
        st.scrape_duration = took
        st.up = sc.ok
        if not sc.ok:
            st.scrape_errors += 1
            st.last_scrape_error = sc.error
            self.failed_in_row += 1
            self.down_since = wall if self.down_since is None else self.down_since
            # vLLM down is not a hung engine (VLLMDown says it); one read missed by a hung
            # engine's busy API server is not "down": the stuck state (gauge, /healthz) stays
            if self.failed_in_row >= 2:
                self.stuck = None
        else:
            self.failed_in_row, self.down_since = 0, None
            self.scrapes.append((wall, sc))
            self.launch.answered(wall, took)
            self.points.append((wall, progress.from_scrape(sc, at)))
            self.stuck = progress.stuck([p for _, p in self.points], self.settings.thresholds.stuck_after_s)
        st.engine_stuck = self.stuck is not None if sc.ok or st.engine_stuck is not None else None
        if model is not None:
            self.model = model
            self.update_info()
        self.prune(wall)
        st.window_scrapes = len(self.scrapes)

    # ------------------------------------------------------------------ analysis
    def analyze(self, lock: threading.Lock, at: datetime) -> diagnosis.InstanceDiagnosis | None:
        """Run the `diagnose` detectors and advisor over the window (read under `lock`); keep the
        last good result."""
        wall = self._clock()
        with lock:
            self.prune(wall)
            launch_at, snap = self.launch.launch, self._clock()  # the analysis is of this launch
            facts = list(self.facts.values())
            if self.model and self.model.get("max_model_len"):
                facts.insert(
                    0,
                    StartupFact(
                        env=Envelope(source="/v1/models"),
                        name="config",
                        value={"max_seq_len": self.model["max_model_len"], "model": self.model.get("model")},
                    ),
                )
            events = facts + [ev for _, ev in heapq.merge(self.events, self.access, key=lambda x: x[0])]
            scrapes = [sc for _, sc in self.scrapes]
            sources = [
                {
                    "path": path,
                    "lines": n,
                    "parsed_lines": self.parsers[path].vllm_lines if path in self.parsers else 0,
                    "format": _fmt(self.parsers.get(path)),
                }
                for path, n in sorted(self.state.log_lines.items())
            ]
        t0 = time.monotonic()
        try:
            inst = diagnosis.analyze_instance(
                self.name, events, scrapes, now=at, sources=sources, settings=self.settings.thresholds
            )
        except Exception:
            with lock:
                self.state.analysis_errors += 1
                self.launch.analysis_ended(launch_at, snap, None)
            return None
        took = time.monotonic() - t0
        with lock:
            wedged = self.stuck
        if wedged is not None and not any(f.id == FindingId.ENGINE_STUCK for f in inst.findings):
            inst.findings.insert(0, stuck_finding(wedged, self.url))
        with lock:
            self._hold(inst, wall)
        doc = report.to_dict(diagnosis.Diagnosis(instances=[inst], generated_at=at))
        with lock:
            st = self.state
            fix = livelaunch.fix_text(inst.recommendations, [n.text for n in inst.notes])
            self.launch.analysis_ended(launch_at, snap, inst.findings, fix)
            st.analysis_duration = took
            st.findings = [(f.id, f.severity) for f in inst.findings]
            st.recommendations = [
                (r.flag, label(r.current), label(r.suggested)) for r in inst.recommendations
            ]
            self.doc = doc
            self.last = inst
        return inst

    def _hold(self, inst: diagnosis.InstanceDiagnosis, wall: float) -> None:
        """Advice that holds still (advise.steady): no tuning from a window with an outage, a new value
        only once it persisted and the last one dwelt, nothing beside a finding it contradicts."""
        down = self.state.up is False and self.failed_in_row >= 2
        why = steady.outage(inst.findings, up=not down)
        inst.findings, recs = steady.hold(
            self.steady,
            inst.findings,
            inst.recommendations,
            wall,
            self.settings.thresholds,
            why_out=why,
            exclude_s=self.settings.window,
        )
        if recs != inst.recommendations:
            inst.recommendations = recs
            drop = rejected_flags(inst.findings)
            keep = recs or any(f in inst.config.flags for f in drop)
            inst.command = advise.command_line(inst.config, recs, drop=drop) if keep else None

    def said(self) -> str:
        """What observe sees of this vLLM, in one sentence (/healthz; the caller holds the lock)."""
        st = self.state
        if self.stuck is not None:
            d = stuck_finding(self.stuck, None).data
            return (
                f"engine stuck: no tokens produced for {d['seconds']:.0f} s with requests in flight "
                f"(running {d['running']:g}, waiting {d['waiting']:g})"
            )
        if st.up is False:
            since = self.down_since
            when = (
                ""
                if since is None
                else " since " + datetime.fromtimestamp(since, UTC).isoformat(timespec="seconds")
            )
            return f"unreachable{when}: {st.last_scrape_error}"
        if st.up is None:
            return "not read" + ("" if self.url else " (no --vllm-url)")
        return "serving: /metrics answers, no stuck engine"

    def brief(self) -> dict[str, Any]:
        """One pod's entry in the node sidecar's /healthz (the caller holds the lock)."""
        st = self.state
        return {
            "vllm": self.said(),
            "log_lines": sum(st.log_lines.values()),
            "engine_stuck": self.stuck is not None,
            "vllm_up": st.up,
        }

    def counters(self) -> dict[str, dict[str, int]]:
        """The counts alerts read, as the state file keeps them (observe.sidecar.tailstate)."""
        return {"crashes": dict(self.launch.crashes), "engine_errors": dict(self.state.engine_errors)}

    def export(self, backstop_s: float) -> exporter.ExportState:
        """A copy of the state for one /metrics scrape."""
        st = self.state
        failure = self.launch.exported_failure(self._clock(), backstop_s)
        if failure is not None:
            self.launch.mark_paged()
        return replace(
            st,
            log_lines=dict(st.log_lines),
            stats={k: dict(v) for k, v in st.stats.items()},
            engine_errors=dict(st.engine_errors),
            engine_crashes=dict(st.engine_crashes),
            kv_fetch=dict(st.kv_fetch),
            cuda_graph=dict(st.cuda_graph),
            startup_failure=failure,
            info=dict(st.info) if st.info else None,
            findings=list(st.findings),
            recommendations=list(st.recommendations),
        )


def label(v: Any) -> str:
    """A value as a label string: None → "", True → "true", 0.9 → "0.9"."""
    if v is None:
        return ""
    if isinstance(v, bool):
        return "true" if v else "false"
    return str(v)[:200]


def _num(v: Any, kind: type) -> Any:
    try:
        return kind(v)
    except (TypeError, ValueError):
        return None


def _fmt(p: Parser | None) -> str | None:
    if p is None or not p.formats:
        return None
    return ",".join(sorted(p.formats))


def stuck_finding(st: progress.Stuck, url: str | None) -> Finding:
    """engine_stuck from the sidecar's own reads of /metrics (at `url`): the period is current."""
    return stuck.finding(stuck.Incident(st, "metrics", None), origin=url)
