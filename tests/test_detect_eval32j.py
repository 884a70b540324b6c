"""The misses of issue 32's tenth blind set (tests/data/eval32j/RESULTS.md), each on its real excerpt: the finding
a senior vLLM engineer insists on when only Ray tells the engine's failure. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.parse import parse_text
from tests.diagnosekit import diagnose as _diagnose
from tests.diagnosekit import suggestions

DATA = Path(__file__).parent / "data"


def _by_id(d: dict) -> dict[str, dict]:
    return {f["id"]: f for f in d["findings"]}


@pytest.mark.parametrize("log", ["eval32j/008.log", "eval32j/011.log"])
def test_an_engines_host_that_ray_says_died_being_built_is_a_start_up_failure(log: str) -> None:
    """AD (008: OpenRLHF's LLMRayActor 'died because of an error raised in its creation task', vLLM's frames below)
    and AE (011: Ray Serve's controller 'Exception in Replica(…), the replica will be stopped.', logged only where
    check_ready returns ReplicaStartupStatus.FAILED): the engine never started; no lever, never a CUDA OOM."""
    d = _diagnose(log)
    f = _by_id(d)
    assert f["engine_startup_failed"]["severity"] == "critical"
    assert f["engine_startup_failed"]["data"]["phase"] == "startup"
    assert "engine_crashed" not in f and "cuda_oom" not in f
    assert "--gpu-memory-utilization" not in suggestions(d)


def test_a_built_actors_call_that_ray_says_raised_is_no_start_up_failure() -> None:
    """AD (012: verl's 'Unhandled error … ray::WorkerDict.actor_rollout_generate_sequences()' over vLLM's LLM.wake_up
    frames): a method of a built actor raised — failing, after the engine's construction."""
    f = _by_id(_diagnose("eval32j/012.log"))
    assert f["engine_error"]["severity"] == "critical"
    assert f["engine_error"]["data"]["phase"] == "serving"
    assert "engine_startup_failed" not in f


@pytest.mark.parametrize("log", ["eval32j/008.log", "eval32j/012.log"])
def test_rays_word_alone_tells_nothing_until_a_vllm_frame_follows(log: str) -> None:
    """Ray core's two sentences are anybody's actor's: the same excerpts cut before their first frame of vLLM's
    code (OpenRLHF's and verl's own frames kept) give no event — save verl's actor-rollout worker's
    generate_sequences frame (012), the rollout of a training step raising (eval32o BE, parse/hosted.py), which
    tells on its own from that frame on."""
    lines = (DATA / log).read_text(encoding="utf-8").splitlines()
    first = next(
        i
        for i, s in enumerate(lines)
        if "site-packages/vllm/" in s or ("fsdp_workers.py" in s and "in generate_sequences" in s)
    )
    assert parse_text("\n".join(lines[:first]), year=2025) == []
    assert parse_text("\n".join(lines[: first + 1]), year=2025) != []
