"""Issue 32's blind set eval32cf: 7 real vLLM log excerpts observe had never seen, taken from forum and Q&A pages in
the `search` corpus `pages` (the vLLM forum discuss.vllm.ai, stepcodex.com's re-renders of vLLM issues, and mirrors of
vLLM GitHub threads; tests/data/eval32cf/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a
senior vLLM engineer insists on, written in tests/data/eval32cf/labels.json and committed before observe ran on any of
them. Every judgement observe agrees with is asserted, so a regression fails; every one it disagrees with is an
xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it out of MISSES).
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement, by class (tests/data/eval32cf/RESULTS.md). Empty until observe is measured on the set.
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32cf", MISSES, count=7)
