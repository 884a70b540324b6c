"""Issue 32's late blind set eval32ac: 30 more real excerpts observe had never seen, 15 from vllm-project/vllm threads
whose number ends in 0, 1 or 2 and 15 from repositories whose owner starts with A to F
(tests/data/eval32ac/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer
insists on, written in tests/data/eval32ac/labels.json and committed (75704f7) before observe ran on any of them. Every
judgement observe agrees with is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True)
case naming its miss class, so a fix makes it flip (then take it out of MISSES). tests/data/eval32ac/RESULTS.md has the
figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 12c96d7, merged as e58d329; blind), by class (tests/data/eval32ac/RESULTS.md);
# PA and PC fixed since (parse/unread.py: a vLLM process's _bootstrap traceback; parse/logfmt.py: a launcher's logfmt
# records; tests/test_detect_eval32ac.py).
PB = "PB: RamaLama's vLLM container that never started (catatonit, its entrypoint), no line vLLM wrote: refused"
MISSES: dict[tuple[str, int], str] = {
    ("023", 0): PB,
    ("024", 0): PB,
}


test_judgement, test_labels_cover_every_log = set_tests("eval32ac", MISSES)
