"""Issue 32's blind set eval32bo: 30 real excerpts observe had never seen, from public threads outside vllm-project in the
repositories of model makers and of the fine-tuning and application projects that run vLLM (QwenLM, OpenBMB, zai-org,
mistralai, allenai, unslothai, modelscope, xorbitsai and app projects) (tests/data/eval32bo/NNN.log, sources in
tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32bo/labels.json and committed (c1862de) before observe ran on any of them. Every judgement observe
agrees with is asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its
miss class, so a fix makes it flip (then take it out of MISSES). tests/data/eval32bo/RESULTS.md has the figures and
the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main cfeb1b2, blind; the shipping tree: no fixes), by class
# (tests/data/eval32bo/RESULTS.md).
MISSES: dict[tuple[str, int], str] = {
    (
        "021",
        0,
    ): "BO1 (as eval32bf's BF3; eval32af 022 has the same server's same lines, labelled not failing): a chat request answered '500 Internal Server Error' with its ASGI traceback, cut before the exception, stays a warning",
}


test_judgement, test_labels_cover_every_log = set_tests("eval32bo", MISSES)
