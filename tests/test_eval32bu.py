"""Issue 32's blind set eval32bu: 24 real excerpts observe had never seen, pasted in threads of the vllm-project organisation's
repositories other than vllm-project/vllm itself (vllm-ascend, vllm-omni, tpu-inference, aibrix, router)
(tests/data/eval32bu/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on,
written in tests/data/eval32bu/labels.json and committed before observe ran on any of them. Every judgement observe agrees with is
asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its miss class, so a fix makes
it flip (then take it out of MISSES).
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main fe7d1c8, blind), by class
# (tests/data/eval32bu/RESULTS.md).
MISSES: dict[tuple[str, int], str] = {
    ("015", 0): "BU2",
    ("015", 1): "BU2",
}


test_judgement, test_labels_cover_every_log = set_tests("eval32bu", MISSES, count=24)
