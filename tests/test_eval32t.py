"""Issue 32, blind set eval32t (tests/data/eval32t/RESULTS.md): 30 real excerpts, 15 from even-numbered vllm-project/vllm
threads and 15 from InternVL, mistral-vibe, Xinference, LMCache, llm-d, ipex-llm, vllm-gaudi, Qwen3-VL, vllm-omni,
GPUStack and KAITO threads (sources: tests/data/PROVENANCE.md). Their 86 judgements (labels.json) were committed in
66d43f4, before observe read any of the logs. A judgement observe meets is asserted (a regression fails it); one it
misses is a strict xfail naming the class, which a fix flips — then the entry leaves MISSES.
"""

from __future__ import annotations

from tests.evalkit import set_tests

# The misses at the measurement (main 13b48eb merged, blind), by class: GA to GC; GB and GC fixed since
# (tests/test_detect_eval32t.py); GA since: a log with no vLLM line whose host program printed a failure is diagnosed as
# that failure, phase unknown (pipeline host_only, tests/test_detect_hostonly.py).
MISSES: dict[tuple[str, int], str] = {}


test_judgement, test_labels_cover_every_log = set_tests("eval32t", MISSES)
