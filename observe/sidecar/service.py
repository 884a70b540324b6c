"""Composition: the live sidecar — the one place where threads and clocks meet.

    Follower ──LogLine──► Parser ──LogEvent──► window (bounded deque) + log-only facts ─┐
    scrape.fetch every scrape_interval ──Scrape──► window of scrapes, observe_up ───────┤
    every analyze_interval: diagnosis.analyze_instance(window) → findings, advice ──────┤
                                       exporter.Server: /metrics /healthz /api/diagnosis ◄┘

Three daemon threads (follow, scrape, analyze) and the HTTP server's own; they share one lock
around the state, and the exporter reads a copy of it. The state of one vLLM is an
`liveinstance.Instance`: one beside one vLLM, and on a node (`--pods`) one more per pod whose
lines come from ``/var/log/pods/<ns>_<pod>_<uid>/…``, exported with `namespace` and `pod` labels
and dropped `Settings.pod_retention_s` after its files went. The analysis is the same code as
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
import functools
import glob
import os
import signal
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from observe import diagnosis, report
from observe.metrics import scrape
from observe.model import Scrape, StartupFact
from observe.parse import Parser, cri, scan
from observe.sidecar import exporter, kubeapi, podlogs, tailstate
from observe.sidecar.config import SidecarSettings
from observe.sidecar.instance import Instance, stuck_finding
from observe.sidecar.tail import Follower

__all__ = ["DISCOVER_EVERY", "Sidecar"]

DISCOVER_EVERY = 60.0  # seconds between two lists of the node's pods (--pod-selector)
SAVE_EVERY = 2.0  # seconds between two writes of the state file while lines come (at once on a count)


class Sidecar:
    """Follow vLLM's logs, scrape its /metrics, analyze a rolling window, serve what it learns."""

    def __init__(
        self,
        settings: SidecarSettings,
        *,
        clock: Callable[[], float] = time.time,
        warn: Callable[[str], None] | None = None,
        discover: Callable[[], list[kubeapi.Pod]] | None = None,
    ) -> None:
        self.settings = settings
        # the node's pods a label selector matches (kubeapi.Client.pods): only those are exported,
        # analyzed and scraped; None: every pod whose log is followed
        self._discover = discover
        self._selected: dict[str, kubeapi.Pod] | None = None
        self._discover_error: str | None = None
        self._discovered_at = float("-inf")
        self._clock = clock
        self._warn = warn  # where warnings go (the CLI: stderr); None: only /healthz shows them
        self._warned: dict[str, float] = {}  # warning → when it was last told
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._analyze_now = threading.Event()  # a launch failed: find its fix before it is exported
        self._cri = cri.Rejoiner()
        # --state-dir: where the last run stopped and its counters (observe.sidecar.tailstate)
        self._saved, self._state_problem = (
            tailstate.load(settings.state_dir) if settings.state_dir else (None, None)
        )
        self._pending = dict(self._saved.counters) if self._saved else {}  # instances not made yet
        self._saved_at, self._saved_counts, self._state_told = float("-inf"), -1, ""
        # "" → the one instance (vLLM's --log files and --vllm-url); "NAMESPACE/POD" → a pod's, for
        # the lines of /var/log/pods/<namespace>_<pod>_<uid>/… (a node's DaemonSet)
        self._one = self._make("")
        self._instances: dict[str, Instance] = {"": self._one}
        self._forgotten: set[str] = set()  # files of pods dropped after pod_retention_s
        self._diagnosis: dict[str, Any] | None = None
        self._follower: Follower | None = None
        self._server: exporter.Server | None = None
        self._threads: list[threading.Thread] = []
        self._thread_errors = 0
        self.stopped_by: int | None = None  # the signal that stopped it, if one did
        if settings.logs:  # open now: "the end of the log" means the end when the sidecar was made
            self._ensure_follower()
            if not settings.from_start or self._saved is not None:
                self.recover_startup_facts()
        if self._state_problem is not None:  # told once, counted with the log errors
            self._state_failed(self._state_problem)

    # ------------------------------------------------------------------ lifecycle
    def start(self) -> Sidecar:
        """Open the logs (at their end unless from_start), bind the listener, start the loops."""
        s = self.settings
        self._ensure_follower()
        registry = exporter.make_registry(self.export_states)
        try:
            self._server = exporter.Server(
                registry,
                host=s.listen_host,
                port=s.listen_port,
                health=self.health,
                vllm_ready=self.vllm_ready,
                diagnosis=self.diagnosis_dict,
                diagnosis_access=s.diagnosis_access,
                token=s.api_token,
            )
        except OSError:
            if self._follower is not None:
                self._follower.close()
            raise
        self._server.start()
        loops = [
            ("observe-follow", self._follow_loop),
            ("observe-analyze", self._analyze_loop),
            ("observe-warn", self._warn_loop),
        ]
        if self._discover is not None:  # the node's pods now, and their first scrape
            self.discover_once()
            self.scrape_pods_once()
        if s.vllm_url:  # the first scrape now: a wrong URL is told at start, not ~10 s later
            self.scrape_once()
            self.check_once()
        if s.vllm_url or self._discover is not None:
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
            if self._saved_at != float("inf"):
                self.save_state()
                self._saved_at = float("inf")  # stopped: the state written last stays
            self._follower.close()
        if self._server is not None:
            self._server.stop()
            self._server = None

    def stop_on_signals(self) -> None:
        """SIGTERM and SIGINT end `wait()` (main thread only; elsewhere a no-op); `stopped_by`
        keeps the signal (the CLI exits 130 on Ctrl-C)."""
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGTERM, signal.SIGINT):
                signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, _frame: object) -> None:
        self.stopped_by = signum
        self._stop.set()

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
        """Read what the logs have, parse it, update each instance's window and facts; returns
        lines read."""
        f = self._ensure_follower()
        groups: dict[str, list] = {}
        for it in self._cri.feed(f.poll()):  # pod logs in the CRI format (a DaemonSet's): their text
            groups.setdefault(_key(it.source), []).append(it)
        with self._lock:
            insts = {key: self._instance(key) for key in groups}
        parsed = [(insts[key], *insts[key].parse(items)) for key, items in groups.items()]
        now = self._clock()
        open_now = {_key(p) for p in f.files()}
        with self._lock:
            fs = f.stats
            st = self._one.state  # the follower's own counters are the node's, not a pod's
            st.log_rotations, st.log_truncations, st.log_deletions = (
                fs.rotations,
                fs.truncations,
                fs.deletions,
            )
            st.log_errors, st.log_invalid_utf8, st.log_long_lines = fs.errors, fs.invalid_utf8, fs.long_lines
            files: dict[str, dict[str, int]] = {}
            for path, n in fs.lines.items():
                if path not in self._forgotten:
                    files.setdefault(_key(path), {})[path] = n
            for inst, events, _ in parsed:
                for ev in events:
                    inst.learn(ev, now)
            for key, inst in list(self._instances.items()):
                inst.state.log_lines = files.get(key, {})
                inst.state.parse_errors = sum(p.parse_errors for p in inst.parsers.values())
                inst.prune(now)
                if key in open_now or key in groups or (self._selected and key in self._selected):
                    inst.seen = now
                elif key and now - inst.seen > self.settings.thresholds.pod_retention_s:
                    del self._instances[key]  # a pod gone that long: its series go
                    self._forgotten.update(inst.state.log_lines)
            counts = sum(
                sum(i.launch.crashes.values()) + sum(i.state.engine_errors.values())
                for i in self._instances.values()
            )
        lines = sum(n for _, _, n in parsed)
        if counts != self._saved_counts or (lines and time.monotonic() - self._saved_at >= SAVE_EVERY):
            self.save_state()  # a count at once: a restart must find it with the lines it came from
        return lines

    def save_state(self) -> None:
        """Write where the follower is and the counters alerts read to --state-dir (if given), in one
        atomic write: a restart resumes from there (observe.sidecar.tailstate). A failure is told once and
        counted; the sidecar goes on."""
        if not self.settings.state_dir or self._follower is None or self._saved_at == float("inf"):
            return
        saved = self._follower.state()
        with self._lock:
            saved.counters = dict(self._pending)
            saved.counters.update({key: inst.counters() for key, inst in self._instances.items()})
            counts = sum(
                sum(v)
                for c in saved.counters.values()
                for v in (c["crashes"].values(), c["engine_errors"].values())
            )
        try:
            tailstate.save(self.settings.state_dir, saved)
        except OSError as e:
            self._state_failed(f"cannot write the state file in {self.settings.state_dir}: {e.strerror or e}")
            return
        self._saved_at, self._saved_counts = time.monotonic(), counts

    def _state_failed(self, msg: str) -> None:
        """A state file that cannot be read or written: one warning per problem, counted as a log error."""
        if msg == self._state_told:
            return
        self._state_told = msg
        if self._follower is not None:
            self._follower.stats.errors += 1
            self._follower.stats.last_error = msg
        if self._warn is not None:
            self._warn(f"warning: {msg}")

    def scrape_once(self, now: datetime | None = None) -> Scrape:
        """GET vLLM's /metrics once (and /v1/models until it answered); count what went wrong."""
        url = self.settings.vllm_url
        if not url:
            raise RuntimeError("no --vllm-url to scrape")
        self._one.url = url
        return self._scrape(self._one, url, now)

    def discover_once(self) -> list[kubeapi.Pod] | None:
        """Ask the Kubernetes API which of the node's pods the selector matches; each gets its
        instance (and its /metrics URL). None (the error told as a warning) when it cannot answer:
        the pods known stay as they were."""
        if self._discover is None:
            return None
        self._discovered_at = time.monotonic()
        try:
            pods = self._discover()
        except kubeapi.ApiError as e:
            with self._lock:
                self._discover_error = str(e)
            return None
        now = self._clock()
        with self._lock:
            self._discover_error = None
            self._selected = {p.key: p for p in pods}
            for p in pods:
                inst = self._instance(p.key)
                inst.url, inst.seen = p.metrics_url, now
        return pods

    def scrape_pods_once(self, now: datetime | None = None) -> int:
        """GET the /metrics of every selected pod that has a URL; returns how many answered."""
        with self._lock:
            todo = [(i, i.url) for k, i in self._instances.items() if k and i.url and self._visible(k)]
        return sum(1 for inst, url in todo if url and self._scrape(inst, url, now).ok)

    def _scrape(self, inst: Instance, url: str, now: datetime | None) -> Scrape:
        at = now or datetime.fromtimestamp(self._clock(), UTC)
        t0 = time.monotonic()
        sc = scrape.fetch(url, timeout=self.settings.scrape_timeout, now=at)
        took = time.monotonic() - t0
        model = None
        if sc.ok and inst.model is None:
            model = scrape.fetch_model_info(url, timeout=self.settings.scrape_timeout)
        wall = self._clock()
        with self._lock:
            inst.scraped(sc, took, model, wall, at)
        return sc

    def analyze_once(self, now: datetime | None = None) -> diagnosis.InstanceDiagnosis | None:
        """Run the `diagnose` detectors and advisor over each instance's window; keep the last good
        results. Returns the one instance's diagnosis (None when it failed, or several are read)."""
        at = now or datetime.fromtimestamp(self._clock(), UTC).replace(tzinfo=None)
        with self._lock:
            insts = [
                i
                for k, i in self._instances.items()
                if (k and self._visible(k)) or (not k and self._one_counts())
            ]
        results = [inst.analyze(self._lock, at) for inst in insts]
        with self._lock:
            if insts == [self._one]:
                self._diagnosis = self._one.doc
            elif any(i.last is not None for i in insts):  # one document, one instance per pod
                self._diagnosis = report.to_dict(
                    diagnosis.Diagnosis(instances=[i.last for i in insts if i.last], generated_at=at)
                )
        return results[0] if insts == [self._one] else None

    def problems(self) -> list[str]:
        """What is wrong now, one sentence each: vLLM unreachable, a --log glob matching nothing."""
        out = []
        if self._discover_error:
            out.append(self._discover_error)
        for pat in self.settings.logs:
            path = os.path.expanduser(pat)
            if not (glob.glob(path) if glob.has_magic(path) else os.path.isfile(path)):
                out.append(f"--log {pat} matches no file")
        with self._lock:
            up, err = self._one.state.up, self._one.state.last_scrape_error
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
        """A copy of the one instance's state for one /metrics scrape."""
        with self._lock:
            return self._one.export(self.settings.page_backstop_s)

    def export_states(self) -> list[tuple[dict[str, str], exporter.ExportState]]:
        """Copies of every instance's state with its labels, the one instance first: its series
        carry no namespace/pod labels (and the follower's own counters, which are the node's)."""
        with self._lock:
            return [
                (inst.labels, inst.export(self.settings.page_backstop_s))
                for key, inst in self._instances.items()
                if self._visible(key)
            ]

    def diagnosis_dict(self) -> dict[str, Any] | None:
        """The `observe.diagnosis/v1` document of the last analysis (None before the first): one
        instance, or one per pod (named NAMESPACE/POD)."""
        with self._lock:
            return self._diagnosis

    def health(self) -> tuple[bool, dict[str, Any]]:
        """observe's own health, what its probes read (/healthz): True while every loop thread
        runs, whatever vLLM does. vLLM's state is only told in the body (`vllm`, one sentence;
        `engine_stuck`, `vllm_up`): a stuck or unreachable vLLM is exported and alerted, never
        enforced by observe's probes, which would take vLLM's pod out of its Service or restart
        observe in a loop. `threads`: each loop and whether it runs (a dead one: False, 503). A
        pod's state (a node's observe) is in `pods`."""
        threads = {t.name: t.is_alive() for t in self._threads}
        alive = all(threads.values()) and not self._stop.is_set()
        with self._lock:
            st = self._one.state
            wedged = self._one.stuck
            shown = [i for k, i in self._instances.items() if self._visible(k)]
            body = {
                "vllm": self._one.said(),
                "engine_stuck": None if wedged is None else stuck_finding(wedged, None).data,
                "files": sorted(p for i in shown for p in i.state.log_lines),
                "log_lines": sum(n for i in shown for n in i.state.log_lines.values()),
                "vllm_up": st.up,
                "last_scrape_error": st.last_scrape_error,
                "window_events": sum(i.state.window_events for i in shown),
                "analyzed": self._diagnosis is not None,
                "loop_errors": self._thread_errors,
                "threads": threads,
            }
            if len(self._instances) > 1:
                shown_pods = sorted((k, i) for k, i in self._instances.items() if k and self._visible(k))
                body["pods"] = {key: i.brief() for key, i in shown_pods}
        body["warnings"] = self.problems()
        return alive, body

    def vllm_ready(self) -> tuple[bool, dict[str, Any]]:
        """The opt-in gate (/readyz/vllm), for those who make vLLM's readiness wait on progress:
        False while observe sees the one vLLM unreachable or its engine stuck. Never False on
        observe's own account: with a loop dead (its view of vLLM no longer current) it answers
        True, so that a bug in observe cannot drain a vLLM that serves."""
        alive, body = self.health()
        with self._lock:
            bad = self._one.stuck is not None or self._one.state.up is False
        return not (alive and bad), body

    # ------------------------------------------------------------------ tests' views of the one instance
    @property
    def _events(self) -> collections.deque:
        return self._one.events

    @property
    def _facts(self) -> dict[str, StartupFact]:
        return self._one.facts

    @property
    def _parsers(self) -> dict[str, Parser]:
        return self._one.parsers

    @property
    def _scrapes(self) -> collections.deque:
        return self._one.scrapes

    # ------------------------------------------------------------------ internals
    def _make(self, key: str) -> Instance:
        s = self.settings
        if not key:
            inst = Instance(
                s, s.instance_name, clock=self._clock, url=s.vllm_url, on_failure=self._analyze_now.set
            )
        else:
            ns, _, pod = key.partition("/")
            inst = Instance(
                s,
                key,
                clock=self._clock,
                labels={"namespace": ns, "pod": pod, "instance": key},
                on_failure=self._analyze_now.set,
            )
        saved = self._pending.pop(key, None)
        if saved:  # the counts the last run exported: they go on from there, not from 0
            inst.launch.crashes.update(saved.get("crashes", {}))
            inst.state.engine_crashes = dict(inst.launch.crashes)
            inst.state.engine_errors.update(saved.get("engine_errors", {}))
        return inst

    def _instance(self, key: str) -> Instance:
        """The instance of `key`, made when a pod first shows (lock held)."""
        inst = self._instances.get(key)
        if inst is None:
            inst = self._instances[key] = self._make(key)
        return inst

    def _visible(self, key: str) -> bool:
        """Whether an instance is exported and analyzed: the one instance always; a pod's unless a
        label selector is in use and does not select it (lock held)."""
        return not key or self._selected is None or key in self._selected

    def _one_counts(self) -> bool:
        """Whether the one instance has anything to analyze beside pods (lock held)."""
        return len(self._instances) == 1 or bool(self._one.url or self._one.state.log_lines)

    def _ensure_follower(self) -> Follower:
        if self._follower is None:
            s = self.settings
            self._follower = Follower(
                s.logs,
                resume=self._saved,
                from_start=s.from_start,
                poll_interval=s.poll_interval,
                use_watchdog=s.use_watchdog,
                max_line_bytes=s.max_line_bytes,
                bulk=scan.ENABLED,
            )
        return self._follower

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
                inst = self._instance(_key(path))
                parser = Parser(year=datetime.fromtimestamp(now).year)
                sc = scan.Scanner(
                    path, parser, functools.partial(inst.learn, now=now, live=False), lambda n: None
                )
                upto = self._follower.resumed_at(path) if self._follower is not None else None
                try:  # resuming: only what the last run read (the rest is read live, and counted)
                    tailstate.read_upto(sc.push, path, upto) if upto is not None else sc.read(Path(path))
                except (OSError, EOFError, ValueError):
                    self._one.state.log_errors += 1
            return sum(len(i.facts) for i in self._instances.values())

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
            if self._discover is not None:
                if time.monotonic() - self._discovered_at >= max(interval, DISCOVER_EVERY):
                    self.discover_once()
                self.scrape_pods_once()
            if self.settings.vllm_url:
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


def _key(path: str) -> str:
    """The instance a file's lines go to: "NAMESPACE/POD" for a pod's log under the kubelet's
    layout, "" (the one instance) for any other file."""
    log = podlogs.parse_path(path)
    return "" if log is None else f"{log.namespace}/{log.pod}"
