"""Issue 32's blind set eval32cd: 14 real vLLM log excerpts observe had never seen, taken from log output committed
to public GitHub repositories and chosen for failures (start-ups that die on a kernel assertion, a memory-profiling
assertion, a Ray placement group that never came, no KV-cache memory on the CPU backend, refused launches), with a
few healthy or harmless runs from the same files (tests/data/eval32cd/NNN.log, sources with their commits in
tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32cd/labels.json and committed before observe ran on any of them. Every judgement observe agrees with
is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its miss class,
so a fix makes it flip (then take it out of MISSES).
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement, by class (filled in when the set is measured).
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32cd", MISSES, count=14)
