"""Issue 32's tenth blind measurement: 30 more real excerpts observe had never seen, all from repositories other
than vllm-project/vllm and from threads no earlier set used (tests/data/eval32j/NNN.log, sources in
tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32j/labels.json and committed (7cf69e6) before observe ran on any of them. Every judgement observe
agrees with is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its
miss class, so a fix makes it flip (then take it out of MISSES). tests/data/eval32j/RESULTS.md has the figures and
the classes.
"""

from __future__ import annotations

import pytest

from tests.evalkit import cases, check_cover, diagnosis, holds, labels

LABELS = labels("eval32j")

_AD = "AD: a vLLM constructor or method failing inside a Ray actor, told only by Ray's own sentence, gives no finding"
_AE = "AE: Ray Serve's controller stopping a replica ('Exception in Replica(…), the replica will be stopped.') is not read"

# The misses, by class: (log, judgement) → the miss. At the branch point (blind) they were 6: AD 008/0-1 and
# 012/0-1, AE 011/0-1.
MISSES: dict[tuple[str, int], str] = {
    ("008", 0): _AD,
    ("008", 1): _AD,
    ("012", 0): _AD,
    ("012", 1): _AD,
    ("011", 0): _AE,
    ("011", 1): _AE,
}


@pytest.mark.parametrize(("log", "i"), cases(LABELS, MISSES))
def test_judgement(log: str, i: int) -> None:
    j = LABELS[log]["judgements"][i]
    assert holds(diagnosis("eval32j", log), j["check"]), j["text"]


def test_labels_cover_every_log() -> None:
    check_cover("eval32j", MISSES)
