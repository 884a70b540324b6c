"""Issue 32's ninth blind measurement: 30 more real excerpts observe had never seen, all from vllm-project/vllm's own
issues and pull requests (tests/data/eval32i/NNN.log, sources in tests/data/PROVENANCE.md), each with the judgements
a senior vLLM engineer insists on, written in tests/data/eval32i/labels.json and committed (dfb4de3) before observe
ran on any of them. Every judgement observe agrees with is asserted, so a regression fails; every one it disagrees
with is an xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it out of MISSES).
tests/data/eval32i/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

_A = "A: torch's NCCL watchdog records (illegal memory access, collective timeout) are not read as a failure"
_B = "B: a Jupyter/IPython traceback (OutOfMemoryError / RuntimeError out of LLM(...)) is refused or gives nothing"
_C = "C: a bare `python -m vllm.entrypoints.openai.api_server` traceback cut in build_async_engine_client gives nothing"
_D = "D: vLLM's bare 'Model architectures [...] are not supported for now' line is refused"
_E = "E: a chat request's traceback cut in AsyncLLMEngine.generate gives nothing"
_F = "F: V0's 'Engine process failed to start' is engine_error, not a failed start"
_G = "G: '# GPU blocks: 0' at --gpu-memory-utilization 0.98 gets 'raise it to 1'"

# The misses as scored at the branch point (blind), by class: (log, judgement) → the miss. Blind: (005, 0), (006, 0),
# (007, 0) A; (014, 0), (014, 1), (016, 0) B; (017, 0) C; (020, 0) D; (022, 0) E; (004, 1) F; (013, 2) G — all
# fixed since (RESULTS.md, tests/test_detect_eval32i.py); E by the general fallback for a traceback in vLLM's code that
# no rule reads (observe/parse/unread.py, tests/test_parse_unread.py), not by a rule on generate's frame.
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32i", MISSES)
