"""rules.spec: speculative decoding whose drafts are mostly rejected (moved from tests/test_detect_excerpts.py)."""

from __future__ import annotations

from pathlib import Path

from observe.diagnosis import InstanceBuilder
from observe.parse import parse_text

CORPUS = Path(__file__).resolve().parents[1] / "data" / "corpus"


def _diag(text: str):
    b = InstanceBuilder("t")
    for ev in parse_text(text, "t.log"):
        b.add(ev)
    return b.finish()


def test_spec_decode_low_acceptance_only_below_the_threshold() -> None:
    d = _diag(next(CORPUS.glob("047-*.log")).read_text())  # 64% acceptance
    assert "spec_decode_low_acceptance" not in {f.id for f in d.findings}
    from observe.settings import Settings

    b = InstanceBuilder("t", settings=Settings(low_spec_acceptance_pct=70.0))
    for ev in parse_text(next(CORPUS.glob("047-*.log")).read_text(), "t"):
        b.add(ev)
    (f,) = [f for f in b.finish().findings if f.id == "spec_decode_low_acceptance"]
    assert 60 < f.data["mean_acceptance_pct"] < 70
