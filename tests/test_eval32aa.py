"""Issue 32's final blind measurement (eval32aa): 30 more real excerpts observe had never seen, 15 from vllm-project/vllm
threads whose number ends in 0-4 and 15 from repositories whose owner starts with A to M (one a web page)
(tests/data/eval32aa/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer
insists on, written in tests/data/eval32aa/labels.json and committed (be1ac88) before observe ran on any of them. Every
judgement observe agrees with is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True)
case naming its miss class, so a fix makes it flip (then take it out of MISSES). tests/data/eval32aa/RESULTS.md has the
figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 43da8c6, blind), by class: NA to ND (no phase 3 for this set). Fixed since: NB
# with eval32ab's OA (rules/busyloop.py: 'EngineCore hit an exception' after the engine served is a crash while
# serving), ND (parse/deaths.py: V1's EngineDeadError message follows a started engine), both in
# tests/test_detect_eval32aa.py; NA (a log with no vLLM line whose host program printed a failure is diagnosed as that
# failure, phase unknown: pipeline host_only, tests/test_detect_hostonly.py); NC (an ASGI record with no "Aborted request"
# just above it is one request's handler raising before the engine: a warning, tests/test_detect_asgi.py).
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32aa", MISSES)
