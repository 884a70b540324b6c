"""Issue 32's blind set eval32bj: 27 real excerpts observe had never seen, from vllm-project/vllm threads numbered below
12000 (2023–2024: releases 0.1–0.6, V0, the Ray executor, older hardware) (tests/data/eval32bj/NNN.log, sources in
tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32bj/labels.json and committed (6e8672e) before observe ran on any of them. Every judgement observe agrees with is
asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its miss class, so a
fix makes it flip (then take it out of MISSES). tests/data/eval32bj/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 1c94b96, blind; the shipping tree: no fixes), by class
# (tests/data/eval32bj/RESULTS.md); BJ1 (007) and BJ2 (024) fixed since (not blind).
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32bj", MISSES, count=27)
