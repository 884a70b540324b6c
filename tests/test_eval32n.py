"""Issue 32's fourteenth blind measurement: 30 more real excerpts observe had never seen, 15 from vllm-project/vllm
threads numbered below 8000 and 15 from other repositories (Ray, KServe, Triton, SkyPilot, BentoML, Modal, AWS samples),
from threads no earlier set used (tests/data/eval32n/NNN.log, sources in tests/data/PROVENANCE.md), each with the
judgements a senior vLLM engineer insists on, written in tests/data/eval32n/labels.json and committed (ba56d06) before
observe ran on any of them. Every judgement observe agrees with is asserted, so a regression fails; every one it
disagrees with is an xfail(strict=True) case naming its miss class, so a fix makes it flip (then take it out of
MISSES). tests/data/eval32n/RESULTS.md has the figures and the classes.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 5d8f490 merged, blind; the branch point), by class: AQ to AV.
AQ = "AQ: a Ray core worker's C++ abort ('logging.cc: Unhandled exception … NCCL Error 5') is not read"
AR = "AR: Ray's 'A worker died or was killed … Worker exit type: SYSTEM_ERROR' is not read"
AS = "AS: Triton's vLLM backend '[vllm] Error generating stream: …RaySystemError' is not read"
AT = "AT: Ray Serve's 'ray::ServeReplica…initialize_and_get_metadata()' task error is not read"
AU = "AU: a BentoML runner's start-up traceback (lifespan → on_startup) is not read"
AV = "AV: KServe's 'Failed to start model server' is not read"
MISSES: dict[tuple[str, int], str] = {
    ("001", 0): AQ,
    ("001", 1): AQ,
    ("010", 0): AR,
    ("010", 1): AR,
    ("016", 0): AS,
    ("016", 1): AS,
    ("023", 0): AT,
    ("023", 1): AT,
    ("026", 0): AU,
    ("026", 1): AU,
    ("027", 0): AV,
    ("027", 1): AV,
}


test_judgement, test_labels_cover_every_log = set_tests("eval32n", MISSES)
