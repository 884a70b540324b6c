"""Issue 32's third blind measurement: 30 more real excerpts from public issues observe had never seen
(tests/data/eval32c/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM
engineer insists on, written in tests/data/eval32c/labels.json and committed (884135d) before observe ran
on any of them. Every judgement observe agrees with is asserted, so a regression fails; every one it
disagrees with is an xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it
out of MISSES). tests/data/eval32c/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

import pytest

from tests.evalkit import cases, check_cover, diagnosis, holds, labels

LABELS = labels("eval32c")

_L = "L: V1's 'Preempted request … has been resumed!' is not read as a preemption"

# The misses as scored at the branch point (blind), by class: (log, judgement) → the miss.
MISSES: dict[tuple[str, int], str] = {
    ("028", 1): _L,
}


@pytest.mark.parametrize(("log", "i"), cases(LABELS, MISSES))
def test_judgement(log: str, i: int) -> None:
    j = LABELS[log]["judgements"][i]
    assert holds(diagnosis("eval32c", log), j["check"]), j["text"]


def test_labels_cover_every_log() -> None:
    check_cover("eval32c", MISSES)
