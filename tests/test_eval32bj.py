"""Issue 32's blind set eval32bj: 27 real excerpts observe had never seen, from vllm-project/vllm threads numbered below
12000 (2023–2024: releases 0.1–0.6, V0, the Ray executor, older hardware) (tests/data/eval32bj/NNN.log, sources in
tests/data/PROVENANCE.md), each with the judgements a senior vLLM engineer insists on, written in
tests/data/eval32bj/labels.json and committed (6e8672e) before observe ran on any of them. Every judgement observe agrees with is
asserted, so a regression fails; every one it disagrees with is an xfail(strict=True) case naming its miss class, so a
fix makes it flip (then take it out of MISSES). tests/data/eval32bj/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 1c94b96, blind; the shipping tree: no fixes), by class
# (tests/data/eval32bj/RESULTS.md).
MISSES: dict[tuple[str, int], str] = {
    (
        "007",
        0,
    ): "BJ1: uvicorn's '[Errno 98] error while attempting to bind on address ... address already in use' is not read",
    (
        "007",
        1,
    ): "BJ1: uvicorn's '[Errno 98] error while attempting to bind on address ... address already in use' is not read",
    (
        "024",
        0,
    ): "BJ2: a traceback cut after its first frame, right after 'Loading model weights took', is not a failed start",
    (
        "024",
        1,
    ): "BJ2: a traceback cut after its first frame, right after 'Loading model weights took', is not a failed start",
}


test_judgement, test_labels_cover_every_log = set_tests("eval32bj", MISSES, count=27)
