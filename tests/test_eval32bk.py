"""Issue 32's blind set eval32bk: 30 more real excerpts observe had never seen, all from vllm-project/vllm issues and
pull requests numbered 25000 and above (2025-2026: the V1 engine, 0.10 to 2026 builds, new hardware, DP/EP,
disaggregated prefill and KV connectors) (tests/data/eval32bk/NNN.log, sources in tests/data/PROVENANCE.md), each
with the judgements a senior vLLM engineer insists on, written in tests/data/eval32bk/labels.json and committed before
observe ran on any of them. Every judgement observe agrees with is asserted, so a regression fails; every one it
disagrees with is an xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it out of
MISSES). tests/data/eval32bk/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 1c94b96, blind; the shipping tree: no fixes), by class
# (tests/data/eval32bk/RESULTS.md).
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32bk", MISSES)
