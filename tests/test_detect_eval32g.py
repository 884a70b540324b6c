"""Issue 32, the seventh blind set's classes (tests/data/eval32g/RESULTS.md), each on the real excerpt that showed it
(tests/data/eval32g/, all from vllm-project/vllm) and on a second real excerpt of Y, Z, W and V (tests/data/excerpts/,
quoted in part; sources in tests/data/PROVENANCE.md). X has no second one yet (none found in the stored issues).

X. An OOM whose weight-loading bar (``Loading safetensors checkpoint shards: 3% Completed | 1/37``) is printed after
   it — tqdm's stderr lands after the EngineCore's record — came while the weights loaded: only the loading levers.
Y. ``RuntimeError: CUDA error: out of memory`` under ``torch.cuda.graph`` → ``capture_end`` is a CUDA-graph capture OOM.
Z. A bare ``vllm serve`` traceback (``vllm/scripts.py``) cut before its exception is the server exiting on it.
W. A V0 traceback cut in ``AsyncLLMEngine.start_background_loop`` is a request meeting an engine already dead.
V. V1's "EngineCore hit an exception" (0.8, logged for a failed start and a busy-loop crash alike) over
   ``run_busy_loop`` frames is a crash while serving, not a failed start; so are bare busy-loop frames."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosekit import by_id, suggestions
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def test_an_oom_with_the_weight_loading_bar_printed_after_it_is_a_loading_oom() -> None:
    d = _diagnose("eval32g/001.log")
    oom = by_id(d)["cuda_oom"]
    assert oom["data"]["phase"] == "loading_weights", oom
    sug = suggestions(d)
    for flag in ("--gpu-memory-utilization", "--max-num-seqs", "--max-num-batched-tokens"):
        assert flag not in sug, (flag, sug)


# 012: V1's compilation/backends.py; the second (vllm-project/vllm#6746): V0's [rank0]: worker, quoted from torch's
# graph frames (the V0 capture frames above them left out), so the capture_end frames alone name the phase
@pytest.mark.parametrize("path", ["eval32g/012.log", "excerpts/capture-end-oom-rank0-vllm-6746.log"])
def test_an_oom_under_torch_cuda_graph_capture_end_is_a_capture_oom_with_its_lever(path: str) -> None:
    d = _diagnose(path)
    oom = by_id(d)["cuda_oom"]
    assert oom["data"]["phase"] == "cuda_graph_capture", oom
    assert "--enforce-eager" in suggestions(d)


# 003: 0.5.2 → 0.7's vllm/scripts.py behind journald's "<date> localhost bash[pid]:" prefix; the second
# (zai-org/GLM-V#204): 0.8+'s cli/main.py main -> cli/serve.py cmd behind "(APIServer pid=N)", named by its
# outermost frame (asyncio's run, read as the API server's own stack since eval32h)
@pytest.mark.parametrize(
    ("path", "frame"),
    [("eval32g/003.log", "serve"), ("excerpts/vllm-serve-cli-cut-apiserver-glm-v-204.log", "run")],
)
def test_a_bare_vllm_serve_traceback_cut_before_its_exception_is_the_server_failing(
    path: str, frame: str
) -> None:
    d = _diagnose(path)
    err = by_id(d)["engine_error"]
    assert err["severity"] == "critical" and err["data"]["phase"] == "unknown", err
    assert err["data"]["frame"] == frame and err["data"]["cause_cut_off"], err
    assert "cuda_oom" not in by_id(d)


def test_a_traceback_cut_in_start_background_loop_is_the_engine_already_dead() -> None:
    d = _diagnose("eval32g/018.log")  # under xinference: generate -> add_request -> start_background_loop
    dead = by_id(d)["engine_crashed"]
    assert dead["severity"] == "critical" and dead["data"]["phase"] == "serving", dead
    assert "start_background_loop" in dead["evidence"]


def test_background_loop_has_errored_already_is_the_engine_already_dead_while_serving() -> None:
    # vllm-project/vllm-ascend#488: the whole request traceback this time, its exception line included;
    # start_background_loop raises it only once the background loop ran and died, so the engine had started
    d = _diagnose("excerpts/start-background-loop-errored-vllm-ascend-488.log")
    found = by_id(d)
    assert "engine_startup_failed" not in found, found
    dead = found["engine_crashed"]
    assert dead["severity"] == "critical" and dead["data"]["phase"] == "serving", dead
    assert "Background loop has errored already" in dead["evidence"]


def test_engine_core_hit_an_exception_over_the_busy_loop_is_a_crash_while_serving() -> None:
    d = _diagnose("eval32g/019.log")  # behind a Ray actor's "(ActorWorker(actor_infer-0) pid=N, ip=A)" prefix
    found = by_id(d)
    assert "engine_startup_failed" not in found, found
    assert (
        found["engine_error"]["severity"] == "critical"
        and found["engine_error"]["data"]["phase"] == "serving"
    )
    # the same line over the start-up's sampler warm-up stays a failed start
    assert "engine_startup_failed" in by_id(_diagnose("eval32g/004.log"))


def test_bare_busy_loop_frames_are_a_failure_while_serving() -> None:
    d = _diagnose("excerpts/busy-loop-frames-cut-vllm-28125.log")
    err = by_id(d)["engine_error"]
    assert err["severity"] == "critical" and err["data"]["phase"] == "serving", err
