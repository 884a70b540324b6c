"""The misses of issue 32's eighth blind set (tests/data/eval32h/RESULTS.md), each on its real excerpt: the finding
and the lever a senior vLLM engineer insists on. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe import pipeline, report
from tests.diagnosekit import diagnose as _diagnose
from tests.diagnosekit import suggestions

DATA = Path(__file__).parent / "data"


def _by_id(d: dict) -> dict[str, dict]:
    return {f["id"]: f for f in d["findings"]}


@pytest.mark.parametrize("log", ["eval32h/004.log", "excerpts/launch-core-engines-cut-tpu-inference-765.log"])
def test_a_traceback_cut_at_wait_for_engine_startups_raise_is_a_start_up_failure(log: str) -> None:
    """X (004): core_client → launch_core_engines → wait_for_engine_startup → `raise RuntimeError(`, no exception
    line, behind docker's timestamps: every raise there is a start-up failure (v1/engine/utils.py 0.10 → 0.32).
    tpu-inference#765 is cut one frame higher, at MPClient.__init__'s `with launch_core_engines(` call (its
    source line under core_client.py's frame): inside the start-up as well."""
    f = _by_id(_diagnose(log))
    assert f["engine_startup_failed"]["severity"] == "critical"
    assert f["engine_startup_failed"]["data"]["phase"] == "startup"
    assert "engine_crashed" not in f


@pytest.mark.parametrize(
    "log", ["eval32h/012.log", "eval32h/020.log", "excerpts/apiserver-top-frames-py313-lmcache-2552.log"]
)
def test_the_api_servers_raw_top_frames_are_its_uncaught_exception(log: str) -> None:
    """Y (012 behind journald, 020 through vLLM's CLI, LMCache#2552 in Python 3.13's shape with its `~~~^^^` marks
    and "...<2 lines>..."): frames of asyncio.run / uvloop.run / the CLI printed raw under "(APIServer pid=N)"
    are Python's print of an exception nothing caught: failing, phase unknown, cause cut off."""
    f = _by_id(_diagnose(log))
    assert f["engine_error"]["severity"] == "critical"
    assert f["engine_error"]["data"]["phase"] == "unknown"
    assert "engine_crashed" not in f and "cuda_oom" not in f


@pytest.mark.parametrize(
    ("log", "form"),
    [
        ("eval32h/016.log", "host_oom_killed"),
        ("excerpts/ray-oom-killed-ray-worker-vllm-2669.log", "host_oom_killed"),
        ("eval32h/019.log", "nccl_watchdog"),
        ("excerpts/nccl-watchdog-collective-timeout-vllm-5458.log", "nccl_watchdog"),
        ("excerpts/nccl-watchdog-ray-worker-vllm-3071.log", "nccl_watchdog"),
    ],
)
def test_a_death_another_program_tells_is_read(log: str, form: str) -> None:
    """Z: Ray's memory monitor killing vLLM's actors (host RAM: OpenRLHF's LLMRayActor, V0's RayWorkerVllm) and
    PyTorch's NCCL watchdog terminating a rank (stuck, or a collective timed out, bare or under a Ray worker's
    prefix): a death, never a CUDA OOM, and no GPU memory flag."""
    d = _diagnose(log)
    f = _by_id(d)
    assert f["engine_crashed"]["severity"] == "critical"
    assert f["engine_crashed"]["data"]["form"] == form
    assert "cuda_oom" not in f
    assert "--gpu-memory-utilization" not in suggestions(d)


@pytest.mark.parametrize(
    "log", ["eval32h/015.log", "eval32c/018.log", "excerpts/sleep-mode-cumem-oom-bare-vllm-12981.log"]
)
def test_the_sleep_mode_allocators_oom_gets_a_lower_utilization_as_a_first_step(log: str) -> None:
    """AA (015 behind a Ray actor's prefix, no RuntimeError; eval32c 018 bare; vllm#12981's three C++ lines of
    the allocator before that PR's error handling, the OOM then two invalid arguments): vLLM's cumem allocator ran out mapping memory back at
    wake_up; the message has no figures, so a first step below the lowest default (0.9)."""
    d = _diagnose(log)
    assert _by_id(d)["cuda_oom"]["data"]["allocator"] == "cumem"
    assert suggestions(d)["--gpu-memory-utilization"] == [0.8]
    recs = [r for r in d["recommendations"] if r["flag"] == "--gpu-memory-utilization"]
    assert recs and recs[0]["reason"].startswith("first step:")


def test_a_quoted_notebook_traceback_of_the_sampler_warm_up_gets_fewer_sequences() -> None:
    """AB (017): IPython's "OutOfMemoryError  Traceback (most recent call last)" quoted with "> ", its frame in
    GPUModelRunner._dummy_sampler_run: the sampler warm-up's OOM; half of V1's lowest default (256) sequences,
    never --enforce-eager (the graphs were captured already)."""
    d = _diagnose("eval32h/017.log")
    assert _by_id(d)["cuda_oom"]["data"]["phase"] == "sampler_warmup"
    assert suggestions(d).get("--max-num-seqs") == [128]
    assert "--enforce-eager" not in suggestions(d)


def test_v0s_request_re_raise_met_twice_in_one_record_is_the_engines_failure(tmp_path: Path) -> None:
    """AC (014): `raise request_output` (V0's MQLLMEngineClient._process_request) three times in one serving_chat
    record: one exception object raised through several streams, which V0's client does only for a batch's or
    a dead engine's exception ("we broadcast the same exception for all requests"). Cut after its first
    re-raise, the same record is one request's error as well as the engine's: nothing is said."""
    d = _diagnose("eval32h/014.log")
    f = _by_id(d)
    assert f["engine_crashed"]["severity"] == "critical"
    assert f["engine_crashed"]["data"]["phase"] == "serving"
    assert "engine_startup_failed" not in f and "cuda_oom" not in f
    once = tmp_path / "once.log"
    once.write_text("".join((DATA / "eval32h/014.log").read_text().splitlines(keepends=True)[:4]))
    assert "engine_crashed" not in _by_id(report.to_dict(pipeline.diagnose_paths([once])))
