"""Issue 32's blind set eval32co: 22 real vLLM log excerpts observe had never seen, taken from the history of public
GitHub repositories — log files and notebook outputs that were committed once and later deleted or rewritten, so that
they are in some commit but not at the repository's HEAD — half of them failing (start-ups that run out of GPU or KV
memory, engines that die while serving) beside healthy servers and offline runs (tests/data/eval32co/NNN.log, sources
with their commits in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32co/labels.json and committed before observe ran on any of them. Every judgement observe agrees with
is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its miss class,
so a fix makes it flip (then take it out of MISSES).
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 3279250, blind), by class (tests/data/eval32co/RESULTS.md); CO1, CO3 fixed since.
MISSES: dict[tuple[str, int], str] = {
    # CO2 (left): a V0 profile-pass OOM after 14.25 GB of weights on a ~15 GB card; the GPU's size is not in the log
    ("007", 2): "CO2",
}


test_judgement, test_labels_cover_every_log = set_tests("eval32co", MISSES, count=22)
