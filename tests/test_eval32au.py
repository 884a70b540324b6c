"""Issue 32's final blind set eval32au: 30 more real excerpts observe had never seen, 8 from vllm-project/vllm threads
and 22 from repositories whose owner starts with A to M (tests/data/eval32au/NNN.log, sources in
tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32au/labels.json and committed before observe ran on any of them. Every judgement observe agrees with
is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its miss class,
so a fix makes it flip (then take it out of MISSES). tests/data/eval32au/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main d69c9d9, blind; the shipping tree: no fixes), by class
# (tests/data/eval32au/RESULTS.md).
MISSES: dict[tuple[str, int], str] = {
    # AU1: FastChat's vllm_worker request traceback (stderr relay), cut in generate_stream's
    # 'async for request_output in results_generator' (vLLM's AsyncLLMEngine.generate stream): refused
    (
        "023",
        0,
    ): "AU1: FastChat's vllm_worker request traceback ('| ERROR | stderr |'), cut in generate_stream's loop "
    "over vLLM's AsyncLLMEngine.generate stream, holds no line observe takes as vLLM's: refused, not failing",
}


test_judgement, test_labels_cover_every_log = set_tests("eval32au", MISSES)
