"""Issue 32's final blind set eval32ak: 30 more real excerpts observe had never seen, 15 from vllm-project/vllm threads
whose number ends in 0, 1 or 2 and 15 from repositories whose owner starts with A to F (tests/data/eval32ak/NNN.log,
sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32ak/labels.json and committed (d3a106a) before observe ran on any of them. Every judgement observe
agrees with is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its
miss class, so a fix makes it flip (then take it out of MISSES). tests/data/eval32ak/RESULTS.md has the figures and the
classes. Measured on main aa23ce7 (the shipping tree, no fixes).
"""

from __future__ import annotations

from tests.evalkit import set_tests

XA = "issue 32 miss XA: bare frames through vLLM's own ops (vllm/_ipex_ops.py), no exception line: refused"
XB = "issue 32 miss XB: a host program's cut traceback (lm-eval's frames), no exception line: refused"
XC = "issue 32 miss XC: a Ray worker's native backtrace frames (libffi, _PyEval_*) not read as a crash"
XD = "issue 32 miss XD: the model registry's ERROR import traceback (registry.py) not read as a failed start"
XE = "issue 32 miss XE: a launcher's status panel 'Server process terminated unexpectedly': refused"

# The misses at the measurement (main aa23ce7, blind), by class (tests/data/eval32ak/RESULTS.md).
MISSES: dict[tuple[str, int], str] = {
    ("030", 0): XE,
}


test_judgement, test_labels_cover_every_log = set_tests("eval32ak", MISSES)
