"""Issue 32's seventh blind measurement: 30 more real excerpts observe had never seen, all from vllm-project/vllm's
own issues and pull requests (tests/data/eval32g/NNN.log, sources in tests/data/PROVENANCE.md), each with the
judgements a senior vLLM engineer insists on, written in tests/data/eval32g/labels.json and committed (274e1c6)
before observe ran on any of them. Every judgement observe agrees with is asserted, so a regression fails; every
one it disagrees with is an xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it out
of MISSES). tests/data/eval32g/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

_X = "X: a weights-loading OOM whose shard progress bar is printed after it gets no phase and a utilization lever"
_Y = "Y: a CUDA-graph capture OOM named only by its frames (torch.cuda.graph / capture_end) gets no capture lever"
_Z = (
    "Z: a bare `vllm serve` traceback (vllm/scripts.py) behind journald, cut before its exception, is refused"
)
_W = "W: a cut V0 traceback ending in AsyncLLMEngine.start_background_loop (the loop already dead) gives no finding"
_V = "V: V1's 'EngineCore hit an exception' over run_busy_loop frames is read as a failed start, not a serving crash"

# The misses as scored at the branch point (blind), by class: (log, judgement) → the miss. Blind: (001, 1), (001, 3)
# X; (012, 2) Y; (003, 0) Z; (018, 0) W; (019, 1), (019, 2) V — all fixed since (RESULTS.md, tests/test_detect_eval32g.py).
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32g", MISSES)
