"""The classes of the blind set eval32bh fixed after its measurement (tests/data/eval32bh/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, critical, diagnose


@pytest.mark.parametrize(
    "log",
    [
        # BH2: InstructLab's 'vLLM failed to start.  Retry with --enable-serving-output ...' alone (its CI)
        "eval32bh/007.log",
        # BH2, second real excerpt: behind ilab's 'Failed to start server: ', after its backend's start-up lines
        "excerpts/ilab-vllm-failed-to-start-instructlab-2258.log",
        # BH2: llm-d-benchmark's '❌ Crashed container in pod: vllm-standalone-...' while it waits for Ready (the only
        # real excerpt found of it)
        "eval32bh/025.log",
    ],
)
def test_a_launchers_own_verdict_that_vllm_did_not_start_is_a_failed_start(log: str) -> None:
    """BH2: the program that launched vLLM says, in its own words, the vLLM process it waits on died before it came
    up (vLLM's output hidden): a failed start-up, never a death while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_crashed_pod_that_is_not_vllms_is_not_read() -> None:
    """BH2, narrowly: llm-d-benchmark's crash note for a pod whose name does not say vLLM (its harness's pod, a
    gateway's) is not the engine's; its later form names the pod and the container."""
    run = RunState(shutdown=False, stats_seen=False)
    assert hosted.death("16:53:24 - ❌ Crashed container in pod: llmdbench-harness-launcher", run) is None
    later = (
        "ERROR: Crashed container in pod: vllm-standalone-qwen-0-6b-5d9c-x2, container: vllm-standalone-qwen"
    )
    f = hosted.death(later, run)
    assert (
        f is not None
        and f.details["phase"] == "startup"
        and "vllm-standalone-qwen-0-6b-5d9c-x2" in f.details["cause"]
    )
    # InstructLab's words must be the whole message: a sentence that merely quotes them is not read
    assert hosted.death("INFO user note: if vLLM failed to start. we retry later", run) is None
