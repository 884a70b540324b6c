"""The classes of the blind set eval32br fixed after its measurement (tests/data/eval32br/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_a_worker_dying_while_cuda_graphs_are_captured_is_a_failed_start() -> None:
    """BR1 (005): custom_all_reduce's illegal memory access at 27/51 of V1's capture bar ('Capturing CUDA graphs
    (mixed prefill-decode, PIECEWISE)', gpu_model_runner.py _capture_cudagraphs, run only while the engine core is
    built), then the executor's 'Worker proc VllmWorker-2 died unexpectedly': the engine never served, so the
    death is its failed start-up, not a crash while serving."""
    d = diagnose("eval32br/005.log")
    assert critical(d), d["findings"]
    assert "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    f = by_id(d)["engine_startup_failed"]
    assert f["data"]["phase"] == "profiling", f["data"]


def test_a_finished_capture_bar_says_nothing_of_the_phase() -> None:
    """The bar's last step (51/51) is no capture in progress: the capture reading needs one midway."""
    from observe.parse import startup

    rule = next(r for r in startup.RULES if r.name == "phase-capture-bar")
    done = "Capturing CUDA graphs (decode, FULL): 100%|██████████| 51/51 [00:03<00:00, 14.2it/s]"
    mid = "Capturing CUDA graphs (decode, FULL):  53%|█████     | 27/51 [00:03<00:00, 14.2it/s]"
    m_done, m_mid = rule.pattern.search(done), rule.pattern.search(mid)
    assert m_done and m_mid
    assert rule.read(m_done, done, None) == []
    assert rule.read(m_mid, mid, None) == [("phase", "cuda_graph_capture")]
