"""The classes the final blind set eval32aj found (tests/data/eval32aj/RESULTS.md WA-WG), each on its real excerpt.
Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, critical, diagnose


def test_verls_rollout_loop_dying_under_vllms_worker_is_the_engines_failure() -> None:
    """WD (016: verl's '(WorkerDict pid=…) Exception in thread Thread-3 (_loop_forever):' and its traceback through
    vllm_rollout_spmd.py's _loop_forever → execute_method → inference_engine.execute_method, cut before the
    exception): the loop that runs the vLLM executor's calls on vLLM's worker catches nothing, so the thread ended
    and the executor waits on it: a critical failure, phase unknown (start-up's calls run there too)."""
    d = diagnose("eval32aj/016.log")
    assert critical(d), d["findings"]
    frame = next(
        x for x in (DATA / "eval32aj" / "016.log").read_text().splitlines() if "in _loop_forever" in x
    )
    f = hosted.frame(frame.split(") ", 1)[1].strip(), RunState(shutdown=False, stats_seen=False))
    assert f is not None and f.details["phase"] == "unknown" and f.details["frame"] == "_loop_forever"
    other = frame.replace("_loop_forever", "_loop")  # another function of the same file is not the loop
    assert hosted.frame(other.split(") ", 1)[1].strip(), RunState(shutdown=False, stats_seen=False)) is None
