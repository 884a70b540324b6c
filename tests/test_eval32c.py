"""Issue 32's third blind measurement: 30 more real excerpts from public issues observe had never seen
(tests/data/eval32c/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM
engineer insists on, written in tests/data/eval32c/labels.json and committed (884135d) before observe ran
on any of them. Every judgement observe agrees with is asserted, so a regression fails; every one it
disagrees with is an xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it
out of MISSES). tests/data/eval32c/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

_L = "L: V1's 'Preempted request … has been resumed!' is not read as a preemption"

# The misses as scored at the branch point (blind), by class: (log, judgement) → the miss.
MISSES: dict[tuple[str, int], str] = {
    ("028", 1): _L,
}


test_judgement, test_labels_cover_every_log = set_tests("eval32c", MISSES)
