"""Composition: the live sidecar — the one place where threads and clocks meet.

    Follower ──LogLine──► Parser ──LogEvent──► window (bounded deque) + log-only facts ─┐
    scrape.fetch every scrape_interval ──Scrape──► window of scrapes, observe_up ───────┤
    every analyze_interval: diagnosis.analyze_instance(window) → findings, advice ──────┤
                                       exporter.Server: /metrics /healthz /api/diagnosis ◄┘

Three daemon threads (follow, scrape, analyze) and the HTTP server's own; they share one lock
around the state, and the exporter reads a copy of it. The analysis is the same code as
`observe diagnose` (`diagnosis.analyze_instance`), run over the window of one launch
(`livelaunch.LaunchTracker`: a relaunch empties it); startup facts are kept outside the window (and
read from the log's start when it is opened at its end). `progress.stuck` judges each scrape, and
`stuck.finding` words what it finds as `diagnose` does.

Nothing here raises on bad input: unreadable files, junk lines, a vLLM that is down or answers
garbage, an analysis that fails — each is counted in the self-metrics and the loop carries on.
Tests drive it without threads through `poll_logs_once`, `scrape_once` and `analyze_once`.
"""

from __future__ import annotations

import collections
import glob
import heapq
import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from observe import cri, diagnosis, exporter, livelaunch, progress, report, scrape, stuck
from observe.config import SidecarSettings
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
from observe.tail import CountedLines, Follower

__all__ = ["Sidecar"]

_FACT_GAUGES = {"kv_cache_tokens", "max_concurrency", "version", "engine", "flags", "config"}


class Sidecar:
    """Follow vLLM's logs, scrape its /metrics, analyze a rolling window, serve what it learns."""

    def __init__(
        self,
        settings: SidecarSettings,
        *,
        clock: Callable[[], float] = time.time,
        warn: Callable[[str], None] | None = None,
    ) -> None:
        self.settings = settings
        self._clock = clock
        self._warn = warn  # where warnings go (the CLI: stderr); None: only /healthz shows them
        self._warned: dict[str, float] = {}  # warning → when it was last told
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._analyze_now = threading.Event()  # a launch failed: find its fix before it is exported
        self._events: collections.deque[tuple[float, LogEvent]] = collections.deque(
            maxlen=settings.max_events
        )
        # access-log lines can outnumber everything else 1000:1; they get their own, smaller
        # window so that a busy server's requests never push its stats lines out
        self._access: collections.deque[tuple[float, LogEvent]] = collections.deque(
            maxlen=settings.max_access_events
        )
        self._scrapes: collections.deque[tuple[float, Scrape]] = collections.deque(maxlen=10_000)
        self._facts: dict[str, StartupFact] = {}
        self._parsers: dict[str, Parser] = {}
        self._cri = cri.Rejoiner()
        self._state = exporter.ExportState(up=None)
        self._diagnosis: dict[str, Any] | None = None
        self._last: diagnosis.InstanceDiagnosis | None = None
        self._model: dict[str, Any] | None = None
        self._follower: Follower | None = None
        self._server: exporter.Server | None = None
        self._threads: list[threading.Thread] = []
        self._thread_errors = 0
        self._launch = livelaunch.LaunchTracker()  # where the launch is: served, crashed, failed
        self._points: collections.deque[tuple[float, progress.Point]] = collections.deque(maxlen=10_000)
        self._stuck: progress.Stuck | None = None
        self._failed_in_row = 0  # failed /metrics reads since the last good one
        self._state.engine_crashes = dict(self._launch.crashes)
        self.stopped_by: int | None = None  # the signal that stopped it, if one did
        if settings.logs:  # open now: "the end of the log" means the end when the sidecar was made
            self._ensure_follower()
            if not settings.from_start:
                self.recover_startup_facts()

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Sidecar:
        """Open the logs (at their end unless from_start), bind the listener, start the loops."""
        s = self.settings
        self._ensure_follower()
        registry = exporter.make_registry(self.export_state)
        try:
            self._server = exporter.Server(
                registry,
                host=s.listen_host,
                port=s.listen_port,
                health=self.health,
                diagnosis=self.diagnosis_dict,
                diagnosis_access=s.diagnosis_access,
                token=s.api_token,
            )
        except OSError:
            self._follower.close()
            raise
        self._server.start()
        loops = [
            ("observe-follow", self._follow_loop),
            ("observe-analyze", self._analyze_loop),
            ("observe-warn", self._warn_loop),
        ]
        if s.vllm_url:  # the first scrape now: a wrong URL is told at start, not ~10 s later
            self.scrape_once()
            self.check_once()
            loops.append(("observe-scrape", self._scrape_loop))
        for name, fn in loops:
            t = threading.Thread(target=self._guard(fn), name=name, daemon=True)
            t.start()
            self._threads.append(t)
        return self

    def stop(self) -> None:
        """Stop the loops, close the files and the listener. Idempotent."""
        self._stop.set()
        self._analyze_now.set()
        if self._follower is not None:
            self._follower._wake.set()
        deadline = time.monotonic() + 5.0  # a long analysis may still run: its thread is a daemon
        for t in self._threads:
            t.join(timeout=max(0.1, deadline - time.monotonic()))
        self._threads.clear()
        if self._follower is not None:
            self._follower.close()
        if self._server is not None:
            self._server.stop()
            self._server = None

    def stop_on_signals(self) -> None:
        """SIGTERM and SIGINT end `wait()` (main thread only; elsewhere a no-op); `stopped_by`
        keeps the signal (the CLI exits 130 on Ctrl-C)."""
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, lambda n, _: (setattr(self, "stopped_by", n), self._stop.set()))

    def wait(self) -> None:
        """Block until a signal or `stop()`, then shut down cleanly."""
        try:
            while not self._stop.wait(0.5):
                pass
        finally:
            self.stop()

    def run(self) -> None:
        """Start, and serve until SIGTERM/SIGINT."""
        self.stop_on_signals()
        self.start()
        self.wait()

    def __enter__(self) -> Sidecar:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    @property
    def listen_url(self) -> str:
        """Base URL of the sidecar's HTTP server (`http://127.0.0.1:PORT`)."""
        if self._server is None:
            raise RuntimeError("sidecar is not started")
        return self._server.url

    # ------------------------------------------------------------------ one step of each loop
    def poll_logs_once(self) -> int:
        """Read what the logs have, parse it, update the window and facts; returns lines read."""
        f = self._ensure_follower()
        items = self._cri.feed(f.poll())  # pod logs in the CRI format (a DaemonSet's): their text
        events: list[LogEvent] = []
        # access lines followed by max_access_events more of them in this batch would only pass
        # through the access window (all arrive at one time): those are counted, not parsed
        cap = self.settings.max_access_events
        later = sum(it.n for it in items if isinstance(it, CountedLines) and it.kind != scan.INERT)
        n_lines = 0
        for it in items:
            p = self._parsers.get(it.source)
            if p is None:
                # live logs are from now: vLLM's stamps have no year (the parser handles Dec→Jan)
                p = self._parsers[it.source] = Parser(year=datetime.fromtimestamp(self._clock()).year)
            if not isinstance(it, CountedLines):
                n_lines += 1
                events.extend(p.feed(it))
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
        now = self._clock()
        with self._lock:
            st = self._state
            fs = f.stats
            st.log_lines = dict(fs.lines)
            st.log_rotations, st.log_truncations, st.log_deletions = (
                fs.rotations,
                fs.truncations,
                fs.deletions,
            )
            st.log_errors, st.log_invalid_utf8, st.log_long_lines = fs.errors, fs.invalid_utf8, fs.long_lines
            st.parse_errors = sum(p.parse_errors for p in self._parsers.values())
            for ev in events:
                self._learn(ev, now)
            self._prune(now)
        return n_lines

    def scrape_once(self, now: datetime | None = None) -> Scrape:
        """GET vLLM's /metrics once (and /v1/models until it answered); count what went wrong."""
        url = self.settings.vllm_url
        if not url:
            raise RuntimeError("no --vllm-url to scrape")
        at = now or datetime.fromtimestamp(self._clock(), UTC)
        t0 = time.monotonic()
        sc = scrape.fetch(url, timeout=self.settings.scrape_timeout, now=at)
        took = time.monotonic() - t0
        model = None
        if sc.ok and self._model is None:
            model = scrape.fetch_model_info(url, timeout=self.settings.scrape_timeout)
        wall = self._clock()
        with self._lock:
            st = self._state
            st.scrapes += 1
            st.scrape_duration = took
            st.up = sc.ok
            if not sc.ok:
                st.scrape_errors += 1
                st.last_scrape_error = sc.error
                self._failed_in_row += 1
                # vLLM down is not a hung engine (VLLMDown says it); one read missed by a hung
                # engine's busy API server is not "down": the stuck state (gauge, /healthz) stays
                if self._failed_in_row >= 2:
                    self._stuck = None
            else:
                self._failed_in_row = 0
                self._scrapes.append((wall, sc))
                self._launch.answered(wall, took)
                self._points.append((wall, progress.from_scrape(sc, at)))
                self._stuck = progress.stuck(
                    [p for _, p in self._points], self.settings.thresholds.stuck_after_s
                )
            st.engine_stuck = self._stuck is not None if sc.ok or st.engine_stuck is not None else None
            if model is not None:
                self._model = model
                self._update_info()
            self._prune(wall)
            st.window_scrapes = len(self._scrapes)
        return sc

    def analyze_once(self, now: datetime | None = None) -> diagnosis.InstanceDiagnosis | None:
        """Run the `diagnose` detectors and advisor over the window; keep the last good result."""
        wall = self._clock()
        at = now or datetime.fromtimestamp(wall, UTC).replace(tzinfo=None)
        with self._lock:
            self._prune(wall)
            launch_at, snap = self._launch.launch, self._clock()  # the analysis is of this launch
            facts = list(self._facts.values())
            if self._model and self._model.get("max_model_len"):
                facts.insert(
                    0,
                    StartupFact(
                        env=Envelope(source="/v1/models"),
                        name="config",
                        value={
                            "max_seq_len": self._model["max_model_len"],
                            "model": self._model.get("model"),
                        },
                    ),
                )
            events = facts + [ev for _, ev in heapq.merge(self._events, self._access, key=lambda x: x[0])]
            scrapes = [sc for _, sc in self._scrapes]
            sources = [
                {
                    "path": path,
                    "lines": n,
                    "parsed_lines": self._parsers[path].vllm_lines if path in self._parsers else 0,
                    "format": _fmt(self._parsers.get(path)),
                }
                for path, n in sorted(self._state.log_lines.items())
            ]
        t0 = time.monotonic()
        try:
            inst = diagnosis.analyze_instance(
                self.settings.instance_name,
                events,
                scrapes,
                now=at,
                sources=sources,
                settings=self.settings.thresholds,
            )
            doc = report.to_dict(diagnosis.Diagnosis(instances=[inst], generated_at=at))
        except Exception:
            with self._lock:
                self._state.analysis_errors += 1
            return None
        took = time.monotonic() - t0
        with self._lock:
            wedged = self._stuck
        if wedged is not None and not any(f.id == "engine_stuck" for f in inst.findings):
            inst.findings.insert(0, _stuck_finding(wedged, self.settings.vllm_url))
            doc = report.to_dict(diagnosis.Diagnosis(instances=[inst], generated_at=at))
        with self._lock:
            st = self._state
            failure = self._launch.failure
            if failure is not None and failure.launch == launch_at and failure.wall <= snap:
                failure.fix = livelaunch.fix_text(inst.recommendations, [n.text for n in inst.notes])
                failure.analyzed = True
            st.analysis_duration = took
            st.findings = [(f.id, f.severity) for f in inst.findings]
            st.recommendations = [
                (r.flag, _label(r.current), _label(r.suggested)) for r in inst.recommendations
            ]
            self._diagnosis = doc
            self._last = inst
        return inst

    def problems(self) -> list[str]:
        """What is wrong now, one sentence each: vLLM unreachable, a --log glob matching nothing."""
        out = []
        for pat in self.settings.logs:
            path = os.path.expanduser(pat)
            if not (glob.glob(path) if glob.has_magic(path) else os.path.isfile(path)):
                out.append(f"--log {pat} matches no file")
        with self._lock:
            up, err = self._state.up, self._state.last_scrape_error
        if up is False:
            out.append(f"cannot reach vLLM at {self.settings.vllm_url}: {err}")
        return out

    def check_once(self) -> list[str]:
        """Tell (through `warn`) each problem that is new or was last told `warn_every` ago, and
        each one that went away; returns the problems now."""
        now = self._clock()
        current = self.problems()
        told = []
        for msg in current:
            last = self._warned.get(msg)
            if last is None or now - last >= self.settings.warn_every:
                self._warned[msg] = now
                told.append(f"warning: {msg}" + (" (still)" if last is not None else ""))
        for msg in [m for m in self._warned if m not in current]:
            del self._warned[msg]
            told.append(f"resolved: {msg}")
        if self._warn is not None:
            for line in told:
                self._warn(line)
        return current

    # ------------------------------------------------------------------ read side
    def export_state(self) -> exporter.ExportState:
        """A copy of the state for one /metrics scrape."""
        with self._lock:
            st = self._state
            return replace(
                st,
                log_lines=dict(st.log_lines),
                stats={k: dict(v) for k, v in st.stats.items()},
                engine_errors=dict(st.engine_errors),
                engine_crashes=dict(st.engine_crashes),
                startup_failure=self._launch.exported_failure(
                    self._clock(), 2 * self.settings.analyze_interval
                ),
                info=dict(st.info) if st.info else None,
                findings=list(st.findings),
                recommendations=list(st.recommendations),
            )

    def diagnosis_dict(self) -> dict[str, Any] | None:
        """The `observe.diagnosis/v1` document of the last analysis (None before the first)."""
        with self._lock:
            return self._diagnosis

    def health(self) -> tuple[bool, dict[str, Any]]:
        """Healthy while every loop thread runs and vLLM's engine is not stuck (requests in flight,
        token counters flat for stuck_after_s: answered 503); the body says what the sidecar sees."""
        alive = all(t.is_alive() for t in self._threads) and not self._stop.is_set()
        with self._lock:
            st = self._state
            wedged = self._stuck
            body = {
                "engine_stuck": None if wedged is None else _stuck_finding(wedged, None).data,
                "files": sorted(st.log_lines),
                "log_lines": sum(st.log_lines.values()),
                "vllm_up": st.up,
                "last_scrape_error": st.last_scrape_error,
                "window_events": st.window_events,
                "analyzed": self._diagnosis is not None,
                "loop_errors": self._thread_errors,
            }
        body["warnings"] = self.problems()
        return alive and wedged is None, body

    # ------------------------------------------------------------------ internals
    def _ensure_follower(self) -> Follower:
        if self._follower is None:
            s = self.settings
            self._follower = Follower(
                s.logs,
                from_start=s.from_start,
                poll_interval=s.poll_interval,
                use_watchdog=s.use_watchdog,
                max_line_bytes=s.max_line_bytes,
                bulk=scan.ENABLED,
            )
        return self._follower

    def _learn(self, ev: LogEvent, now: float, live: bool = True) -> None:
        """Update log-only facts from one event (lock held) and keep it in the window. Not live
        (reading what was written before the sidecar started): only the launch and its facts."""
        st = self._state
        self._follow_launch(ev, now, live)
        if isinstance(ev, StartupFact):
            self._facts[ev.name] = ev
            if ev.name == "kv_cache_tokens":
                st.kv_cache_tokens = _num(ev.value, int)
            elif ev.name == "max_concurrency":
                st.max_concurrency = _num(ev.value, float)
            if ev.name in _FACT_GAUGES:
                self._update_info()
            return
        if not live:  # the past: only the latest launch's errors (what failed), none counted again
            if isinstance(ev, EngineError) and ev.kind != "shutdown_noise":
                self._events.append((now, ev))
            return
        if isinstance(ev, AccessLog):
            self._access.append((now, ev))
            return
        self._events.append((now, ev))
        if isinstance(ev, StatsSample):
            engine = "" if ev.engine_index is None else str(ev.engine_index)
            fields = st.stats.setdefault(engine, {})
            for attr in exporter.STATS_GAUGES:
                v = getattr(ev, attr, None)
                if v is not None:
                    fields[attr] = float(v)
            st.stats_lines += 1
            st.last_stats_time = now
            if ev.preemptions:
                st.interval_preemptions += int(ev.preemptions)
        elif isinstance(ev, Preemption):
            st.preemption_warnings += ev.env.repeat
            if ev.cumulative is not None:
                st.cumulative_preemptions = max(st.cumulative_preemptions or 0, ev.cumulative)
        elif isinstance(ev, EngineError) and ev.kind != "shutdown_noise":
            st.engine_errors[ev.kind] = st.engine_errors.get(ev.kind, 0) + ev.env.repeat

    def _follow_launch(self, ev: LogEvent, now: float, live: bool) -> None:
        """Launch boundaries, crashes and start-up failures from one event (lock held)."""
        before = self._launch.failure
        if self._launch.see(ev, now, live=live):
            self._new_launch()
        self._state.engine_crashes = dict(self._launch.crashes)
        if self._launch.failure is not None and self._launch.failure is not before:
            self._analyze_now.set()

    def _new_launch(self) -> None:
        """vLLM starts again: the previous launch's events, scrapes and facts leave the window."""
        self._facts.clear()
        self._events.clear()
        self._access.clear()
        self._scrapes.clear()
        self._points.clear()
        self._stuck = None
        st = self._state
        st.kv_cache_tokens = st.max_concurrency = None
        st.engine_stuck = None if st.engine_stuck is None else False
        self._prune(self._clock())

    def recover_startup_facts(self) -> int:
        """Read the followed files from their start for the latest launch's startup facts (version,
        flags, KV capacity) and whether it failed to start, which a sidecar restarted without
        --from-start would lose; its errors join the window. Crashes are not counted again. Returns
        the number of facts kept."""
        now = self._clock()
        paths = {p for pat in self.settings.logs for p in glob.glob(os.path.expanduser(pat))}
        with self._lock:
            try:
                ordered = sorted(paths, key=os.path.getmtime)
            except OSError:  # one went away meanwhile
                ordered = sorted(paths)
            for path in ordered:
                parser = Parser(year=datetime.fromtimestamp(now).year)
                sc = scan.Scanner(path, parser, lambda ev: self._learn(ev, now, live=False), lambda n: None)
                try:
                    sc.read(Path(path))
                except (OSError, EOFError, ValueError):
                    self._state.log_errors += 1
            return len(self._facts)

    def _update_info(self) -> None:
        info = livelaunch.info(self._facts, self._model)
        if info is not None:
            self._state.info = {k: _label(v) for k, v in info.items()}

    def _prune(self, now: float) -> None:
        """Drop events and scrapes older than the window (lock held)."""
        cutoff = now - self.settings.window
        while self._events and self._events[0][0] < cutoff:
            self._events.popleft()
        while self._access and self._access[0][0] < cutoff:
            self._access.popleft()
        while self._scrapes and self._scrapes[0][0] < cutoff:
            self._scrapes.popleft()
        self._state.window_events = len(self._events) + len(self._access)
        self._state.window_scrapes = len(self._scrapes)

    def _guard(self, loop: Callable[[], None]) -> Callable[[], None]:
        """Run a loop; an unexpected exception is counted and the loop restarted after a pause."""

        def run() -> None:
            while not self._stop.is_set():
                try:
                    loop()
                    return
                except Exception:
                    with self._lock:
                        self._thread_errors += 1
                    self._stop.wait(1.0)

        return run

    def _follow_loop(self) -> None:
        f = self._ensure_follower()
        while not self._stop.is_set():
            self.poll_logs_once()
            f.wait()

    def _scrape_loop(self) -> None:
        interval = self.settings.scrape_interval
        nxt = time.monotonic()  # start() scraped once already
        while not self._stop.is_set():
            nxt += interval
            self._stop.wait(max(0.0, nxt - time.monotonic()))
            if self._stop.is_set():
                break
            self.scrape_once()
            if time.monotonic() - nxt > interval:  # fell far behind (suspend): do not burst
                nxt = time.monotonic()

    def _warn_loop(self) -> None:
        # the first check waits for the first scrape to have had its chance to answer
        if self._stop.wait(min(self.settings.scrape_interval, 5.0) + self.settings.scrape_timeout):
            return
        while not self._stop.is_set():
            self.check_once()
            self._stop.wait(min(self.settings.warn_every, 10.0))

    def _analyze_loop(self) -> None:
        interval = self.settings.analyze_interval
        if self._stop.wait(min(interval, 2.0)):  # a first result soon after start
            return
        while not self._stop.is_set():
            self._analyze_now.clear()
            self.analyze_once()
            self._analyze_now.wait(interval)


def _label(v: Any) -> str:
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


def _stuck_finding(st: progress.Stuck, url: str | None) -> Finding:
    """engine_stuck from the sidecar's own reads of /metrics (at `url`): the period is current."""
    return stuck.finding(stuck.Incident(st, "metrics", None), origin=url)
