"""Issue 32's blind measurement eval32t: 30 more real excerpts observe had never seen, 15 from even-numbered
vllm-project/vllm threads and 15 from other repositories, from threads no earlier set used (tests/data/eval32t/NNN.log,
sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32t/labels.json and committed (66d43f4) before observe ran on any of them. Every judgement observe
agrees with is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its
miss class, so a fix makes it flip (then take it out of MISSES). tests/data/eval32t/RESULTS.md has the figures and
the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

_GA = "GA: a segfault's faulthandler stack under Ray's C++ logging, no line vLLM wrote, is refused"

# The misses at the measurement (main 13b48eb merged, blind), by class: GA to GC; GB and GC fixed since
# (tests/test_detect_eval32t.py), GA left (tests/data/eval32t/RESULTS.md).
MISSES: dict[tuple[str, int], str] = {
    ("001", 0): _GA,
    ("001", 1): _GA,
}


test_judgement, test_labels_cover_every_log = set_tests("eval32t", MISSES)
