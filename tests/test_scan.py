"""The byte-level scan against feeding every line, below the report: parser counters and the builder's
exact aggregates (some, like the count of 5xx access lines, are not in the JSON report)."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import parse, pipeline
from observe.diagnosis import InstanceBuilder
from observe.parse import scan
from tests.scaninputs import edge_inputs, real_inputs


def _state(p: parse.Parser, b: InstanceBuilder, unreadable: list[dict]) -> dict:
    return {
        "parser": (p.lines, p.vllm_lines, p.events, p.parse_errors, sorted(p.formats), sorted(p.processes)),
        "holding": p.holding,
        "summary": vars(b.summary),
        "config": b.config,
        "facts": b.facts,
        "unreadable": unreadable,
    }


def general(path: Path) -> dict:
    p, b, u = parse.Parser(year=2026), InstanceBuilder("x"), []
    for line in pipeline.iter_lines(path, u):
        for ev in p.feed(line):
            b.add(ev)
    for ev in p.flush():
        b.add(ev)
    return _state(p, b, u)


def fast(path: Path) -> dict:
    p, b, u = parse.Parser(year=2026), InstanceBuilder("x"), []
    pipeline.scan_part(path, p, b, u, None)
    for ev in p.flush():
        b.add(ev)
    return _state(p, b, u)


def _files(tmp: Path) -> list[Path]:
    return [p for p in real_inputs() + edge_inputs(tmp) if p.is_file()]


def test_same_state_as_feeding_every_line(tmp_path: Path) -> None:
    for path in _files(tmp_path):
        assert fast(path) == general(path), path.name


@pytest.mark.parametrize("block", [3, 100])
def test_same_state_small_blocks(block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scan, "BLOCK", block)
    monkeypatch.setattr(scan, "GZ_PIECE", 50)
    for path in [p for p in _files(tmp_path) if "access" in p.name or "wrap" in p.name]:
        assert fast(path) == general(path), path.name


def test_truncated_gzip_says_the_same(tmp_path: Path) -> None:
    paths = [p for p in edge_inputs(tmp_path) if p.parent.name in ("gz-trunc", "gz-corrupt")]
    for path in paths:
        g, f = general(path), fast(path)
        assert g["unreadable"] and f["unreadable"] == g["unreadable"]
        assert 0 < f["parser"][0] == g["parser"][0]
