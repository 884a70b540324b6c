"""What the sidecar tests share (no test module imports another): a settable clock, appending to
a log, and reading one sample of the sidecar's own /metrics."""

from __future__ import annotations

from pathlib import Path

from observe.sidecar import exporter
from observe.sidecar.service import Sidecar


class Clock:
    def __init__(self, t: float = 1_795_000_000.0) -> None:
        self.t = t

    def __call__(self) -> float:
        return self.t


def append_to(path: Path, data: bytes) -> None:
    with path.open("ab") as w:
        w.write(data)


def sample(car: Sidecar, name: str, labels: dict | None = None) -> float | None:
    return exporter.make_registry(car.export_state).get_sample_value(name, labels or {})
