"""Issue 32's blind set eval32av: 30 more real excerpts observe had never seen, 8 from vllm-project/vllm threads,
21 from repositories hosting, wrapping or deploying vLLM whose owner starts with N to Z and one web page
(tests/data/eval32av/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer
insists on, written in tests/data/eval32av/labels.json and committed before observe ran on any of them. Every
judgement observe agrees with is asserted, so a regression fails; every one it disagrees with is an
xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it out of MISSES).
"""

from __future__ import annotations

from tests.evalkit import set_tests

MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32av", MISSES)
