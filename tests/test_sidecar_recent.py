"""vLLM 0.32+/0.33 lines in the sidecar's own /metrics: the stats line's `KV fetch:` clause as
observe_vllm_kv_fetch_requests{engine,stage} (stages named as vllm:num_requests_kv_fetch_by_stage's)
and the CUDA-graph memory lines as observe_vllm_cuda_graph_*; read from the source-exact 0.33 lines
of tests/data/releases/vllm-0.33-new-lines.log (provenance in tests/data/PROVENANCE.md)."""

from __future__ import annotations

from pathlib import Path

from observe.sidecar import exporter
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.sidecarkit import Clock, append_to, sample

LINES = (
    (Path(__file__).parent / "data" / "releases" / "vllm-0.33-new-lines.log").read_bytes().splitlines(True)
)


def _fetch(car: Sidecar) -> dict[str, float]:
    reg = exporter.make_registry(car.export_state)
    return {
        s.labels["stage"]: s.value
        for m in reg.collect()
        if m.name == "observe_vllm_kv_fetch_requests"
        for s in m.samples
        if s.labels["engine"] == "0"
    }


def test_kv_fetch_clause_and_cuda_graph_memory_are_exported(tmp_path: Path):
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    car = Sidecar(SidecarSettings(logs=[str(log)], listen_port=0, use_watchdog=False), clock=Clock())
    first_stats = next(i for i, ln in enumerate(LINES) if b"KV fetch:" in ln)
    append_to(log, b"".join(LINES[:first_stats]))
    car.poll_logs_once()
    assert _fetch(car) == {}  # no clause seen yet (older releases never print one): no series
    assert sample(car, "observe_vllm_cuda_graph_memory_bytes") == 0.91 * 2**30  # the pool's actual
    assert sample(car, "observe_vllm_cuda_graph_estimated_memory_bytes") == 0.87 * 2**30
    assert sample(car, "observe_vllm_cuda_graph_capture_seconds") == 16.0
    append_to(log, LINES[first_stats])
    car.poll_logs_once()
    assert _fetch(car) == {"waiting_to_start": 3.0, "in_progress": 2.0, "completed_waiting": 1.0}
    append_to(log, b"".join(LINES[first_stats + 1 :]))
    car.poll_logs_once()
    assert b"KV fetch:" not in b"".join(LINES[first_stats + 1 :])
    # vLLM prints the clause only while a count is > 0: a later line without it means none
    assert _fetch(car) == {"waiting_to_start": 0.0, "in_progress": 0.0, "completed_waiting": 0.0}
