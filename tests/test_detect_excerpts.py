"""What a real excerpt gives: the version range a log's shape bounds. (The excerpts' findings — KV-too-small
pieces, vLLM's hints, crash root causes, V0 silent preemption, swap, spec decode — are in tests/rules/.)"""

from __future__ import annotations

from pathlib import Path

from observe import versions
from observe.diagnosis import InstanceBuilder
from observe.parse import parse_text

CORPUS = Path(__file__).parent / "data" / "corpus"


def _diag(text: str):
    b = InstanceBuilder("t")
    for ev in parse_text(text, "t.log"):
        b.add(ev)
    return b.finish()


def test_version_range_from_line_shapes() -> None:
    d = _diag(next(CORPUS.glob("009-*.log")).read_text())  # metrics.py:449, no banner
    r = d.config.version_range
    assert r.text() == "0.6.4" and any("metrics.py:449" in e for e in r.evidence)
    assert versions.available(r, "0.6.0") is True
    assert versions.available(r, "0.11.0") is False
    d = _diag(next(CORPUS.glob("005-*.log")).read_text())  # a V0 fork: only "V0" bounds it
    r = d.config.version_range
    assert r.lo is None and r.hi == (0, 10, 99)
    assert versions.available(r, "0.4.0") is None and versions.available(r, "0.12.0") is False


def test_a_bound_against_the_evidence_is_ignored() -> None:
    r = versions.VersionRange().narrow((0, 6, 4), (0, 6, 4), "a")
    assert r.narrow((0, 11, 0), None, "b") == r  # would be empty: kept as it was
    assert versions.available(versions.VersionRange(), "0.5.0") is None
