"""The capacity model on MoE models and tensor parallelism, against the public logs it cites."""

from __future__ import annotations

import json
from pathlib import Path

from observe.capacity import compute, render_text

VECTORS = {
    v["id"]: v for v in json.loads((Path(__file__).parent / "data" / "capacity-vectors.json").read_text())
}


def test_moe_profile_memory_brings_qwen3_235b_near_its_log() -> None:
    v = VECTORS["vllm-21348-4xh100-qwen3-235b-a22b-fp8-tp4"]
    r = compute(
        "Qwen/Qwen3-235B-A22B",
        gpu_memory_gib=v["gpu_total_gib"],
        tp=4,
        gpu_memory_utilization=0.9,
        max_model_len=v["max_model_len"],
        vllm_version="0.10.0",
        weights_gib=v["weights_gib_per_rank"],
    )
    real = v["reported"]["available_kv_cache_gib"]
    assert abs(r.available_kv_gib - real) / real < 0.15  # the dense estimate was 70% too high
    text = render_text(r)
    assert "mixture of experts" in text and "estimated" in text
    assert "least free memory" in text  # TP: the busiest GPU sizes every cache


def test_moe_launch_that_failed_is_predicted_to_fail() -> None:
    v = VECTORS["vllm-23278-h100-gpt-oss-120b-negative"]
    r = compute(
        "openai/gpt-oss-120b",
        gpu_memory_gib=v["gpu_total_gib"],
        gpu_memory_utilization=0.9,
        max_model_len=v["max_model_len"],
        vllm_version="0.10.1",
        weights_gib=v["weights_gib_per_rank"],
        max_num_batched_tokens=8192,
    )
    assert r.available_kv_gib < 0 and not r.fits


def test_dense_model_gets_no_moe_term() -> None:
    r = compute("Qwen/Qwen3-8B", gpu_memory_gib=79.11, gpu_memory_utilization=0.9, max_model_len=40960)
    assert not any("mixture of experts" in n for n in r.notes)
    assert "(estimated" in render_text(r)  # nothing measured: "fits" says it is an estimate
