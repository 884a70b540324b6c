"""The classes of the blind set eval32at fixed after its measurement (tests/data/eval32at/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import nemorl
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, critical, diagnose


def test_nemo_rls_weight_update_traceback_is_a_failed_sync_after_start_up() -> None:
    """AT1: NeMo-RL's VllmAsyncGenerationWorker's traceback under a Ray prefix through update_weights_via_ipc_zmq_async
    into llm.collective_rpc, cut, no vllm/ frame: the refit failed in a running engine — critical, phase serving, not a
    failed start, no memory advice."""
    d = diagnose("eval32at/001.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert by_id(d)["engine_error"]["title"].endswith("(serving)"), d["findings"]


def test_only_nemo_rls_weight_update_methods_are_read() -> None:
    """Narrow: another method of the same worker, or the same name in another file, reads nothing."""
    run = RunState(shutdown=False, stats_seen=False)
    base = 'File "/x/nemo_rl/models/generation/vllm/vllm_worker_async.py", line 1304, in '
    assert nemorl.weight_sync(base + "update_weights_via_ipc_zmq_async", run) is not None
    assert nemorl.weight_sync(base + "generate_async", run) is None
    other = 'File "/x/nemo_rl/models/policy/worker.py", line 9, in update_weights_via_ipc_zmq'
    assert nemorl.weight_sync(other, run) is None
