"""Issue 32's blind set eval32aw: 30 more real excerpts observe had never seen, 10 from vllm-project/vllm threads
and 20 from other repositories that host, wrap, benchmark or deploy vLLM (vllm-project's vllm-omni, vllm-ascend,
llm-compressor, production-stack and guidellm, and model vendors' and hosts' repositories)
(tests/data/eval32aw/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer
insists on, written in tests/data/eval32aw/labels.json and committed (06cf131) before observe ran on any of them.
Every judgement observe agrees with is asserted, so a regression fails; every one it disagrees with is an
xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it out of MISSES).
tests/data/eval32aw/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main d69c9d9, merged, blind), by class (tests/data/eval32aw/RESULTS.md); AW1, AW2 and
# AW3 fixed since (tests/test_detect_eval32aw.py).
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32aw", MISSES)
