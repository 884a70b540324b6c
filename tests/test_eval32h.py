"""Issue 32's eighth blind measurement: 30 more real excerpts observe had never seen, all from repositories
and pages other than vllm-project/vllm (tests/data/eval32h/NNN.log, sources in tests/data/PROVENANCE.md), each
with the judgements a senior vLLM engineer insists on, written in tests/data/eval32h/labels.json and committed
(d71ec1b) before observe ran on any of them. Every judgement observe agrees with is asserted, so a regression
fails; every one it disagrees with is an xfail(strict=True) case naming its miss class, so a fix makes it flip
(then take it out of MISSES). tests/data/eval32h/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

_X = "X: a V1 front end's traceback cut at wait_for_engine_startup's raise (no exception line) gives no finding"
_Y = "Y: the API server's traceback printed raw, cut in its top frames (asyncio.run, vLLM's CLI), gives no finding"
_Z = "Z: a death another program tells (Ray's memory monitor, PyTorch's NCCL watchdog) is not read"
_AA = (
    "AA: the sleep-mode allocator's 'CUDA Error: out of memory at …cumem_allocator.cpp' is not read, no lever"
)
_AB = "AB: a notebook's (IPython) traceback quoted with '> ' (OutOfMemoryError header, _dummy_sampler_run) is not read"
_AC = "AC: V0's request re-raise (multiprocessing/client.py raise request_output), cut, gives no finding"

# The misses left after the fixes (eval32h's own, not blind), by class: (log, judgement) → the miss; none. At the
# branch point (blind) they were 13: X 004/0-1, Y 012/0 and 020/0, Z 016/0 and 019/0, AA 015/0, 1, 3, AB 017/0-2, AC 014/0.
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32h", MISSES)
