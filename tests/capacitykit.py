"""The real KV-capacity observations (tests/data/capacity-vectors.json) and how the capacity model
predicts each: shared by the vector tests and the README facts test (no test module imports another)."""

from __future__ import annotations

import json
from pathlib import Path

from observe.capacity import Measured, ModelSpec, compute, model_spec, spec_from_config

VECTORS = json.loads((Path(__file__).parent / "data" / "capacity-vectors.json").read_text())
BY_ID = {v["id"]: v for v in VECTORS}

# facebook/opt-125m config.json values (architecture of the PR #4454 vector; the vector's arch
# block gives layers 12, kv_heads 12, head_dim 64, which these reproduce).
OPT_125M = {
    "_name_or_path": "facebook/opt-125m",
    "num_hidden_layers": 12,
    "num_attention_heads": 12,
    "hidden_size": 768,
    "ffn_dim": 3072,
    "vocab_size": 50272,
    "max_position_embeddings": 2048,
    "torch_dtype": "float16",
    "tie_word_embeddings": True,
}

# deepseek-ai/DeepSeek-R1-Distill-Qwen-14B config.json values (Qwen2.5-14B's architecture with a
# 131,072-token limit; the vector's arch block gives layers 48, kv_heads 8, head_dim 128).
R1_DISTILL_QWEN_14B = {
    "_name_or_path": "deepseek-ai/DeepSeek-R1-Distill-Qwen-14B",
    "num_hidden_layers": 48,
    "num_attention_heads": 40,
    "num_key_value_heads": 8,
    "hidden_size": 5120,
    "intermediate_size": 13824,
    "vocab_size": 152064,
    "max_position_embeddings": 131072,
    "torch_dtype": "bfloat16",
    "tie_word_embeddings": False,
}

# vector id → the built-in model with the same architecture (the vector names a fine-tune or a
# quantized checkpoint of it); weights always come from the vector itself.
MODEL_FOR = {
    "vllm-10517-rtx3090-llama31-8b-20k": "meta-llama/Llama-3.1-8B",
    "vllm-10517-rtx3090-llama31-8b-35k": "meta-llama/Llama-3.1-8B",
    "vllm-9802-4xa100-llama31-8b-tp4": "meta-llama/Llama-3.1-8B",
    "vllm-pr4454-a6000-openhermes-2.5-mistral-7b": "mistralai/Mistral-7B-v0.1",
    "vllm-pr4454-a6000-zephyr-7b-beta-awq": "mistralai/Mistral-7B-v0.1",
    "vllm-pr4454-a6000-opt-125m": OPT_125M,
    "vllm-pr2031-4xa100-80g-llama2-70b-tp4": "meta-llama/Llama-2-70b-hf",
    "vllm-5248-2xt4-deepseek-coder-6.7b-tp2": "deepseek-ai/deepseek-coder-6.7b-instruct",
    "vllm-13882-rtx4060-qwen25-7b-int4-util0.7": "Qwen/Qwen2.5-7B",
    "vllm-25350-fp8kv-qwen3-30b-a3b-class-221k-error": "Qwen/Qwen3-30B-A3B",
    "vllm-21348-4xh100-qwen3-235b-a22b-fp8-tp4": "Qwen/Qwen3-235B-A22B",
    "vllm-34076-pp2-qwen3-coder-30b-a3b-fp8-error": "Qwen/Qwen3-30B-A3B",
    "vllm-23278-h100-gpt-oss-120b-negative": "openai/gpt-oss-120b",
    "vllm-27508-h100-gpt-oss-120b-util0.95-mnbt1024": "openai/gpt-oss-120b",
    "vllm-2382-2xa100-mixtral-8x7b-awq-tp2-util0.5": "mistralai/Mixtral-8x7B-v0.1",
    "vllm-13061-2x4090-r1-distill-qwen-14b-tp2-rank-imbalance": R1_DISTILL_QWEN_14B,
    "vllm-pr14447-rtx3090-util0.99-accounting": "meta-llama/Llama-3.1-8B",  # model unknown: accounting only
    "vllm-unittest-estimate-max-model-len-16383": "Qwen/Qwen1.5-7B",
    "vllm-unittest-max-concurrency-sliding1024": "Qwen/Qwen1.5-7B",
}


def spec_of(v: dict) -> ModelSpec:
    m = MODEL_FOR[v["id"]]
    spec = spec_from_config(m) if isinstance(m, dict) else model_spec(m)
    if "sliding1024" in v["id"]:  # vLLM's unit test gives every layer a 1024-token window
        from dataclasses import replace

        spec = replace(spec, sliding_window=1024, sliding_layers=spec.layers)
    return spec


def _int_or_none(x):
    return x if isinstance(x, int) and not isinstance(x, bool) else None


def predict(v: dict):
    """Run the capacity model with exactly the inputs the vector states."""
    rep = v["reported"]
    measured = None
    gpu = v.get("gpu_total_gib")
    if gpu is None or v.get("gpu_memory_utilization") is None:
        # incomplete vectors: the engine's own available-memory figure stands in for the GPU
        if "available_kv_cache_gib" in rep:
            measured = Measured(available_kv_gib=rep["available_kv_cache_gib"])
        elif "num_blocks" in rep:
            measured = Measured(num_gpu_blocks=rep["num_blocks"])
        gpu = gpu or 80.0
    if v["id"] == "vllm-pr14447-rtx3090-util0.99-accounting":
        measured = Measured(
            weights_gib=v["weights_gib_per_rank"],
            activation_gib=rep["activation_peak_gib"],
            non_torch_gib=rep["non_torch_memory_gib"],
        )
    version = v.get("vllm_version")
    if v["kind"] == "unit-test":
        # vLLM's unit tests call estimate_max_model_len / get_max_concurrency directly with the memory
        # or blocks given; the engine path of vLLM >= 0.32 first keeps the null block out of that
        # memory (tests/test_capacity.py::test_vllm_cpu_032_real_runs), so evaluate the bare formula.
        version = "0.10.1.1"
    pp = v.get("pipeline_parallel_size") or 1
    if v["id"].startswith("vllm-34076"):
        pp = 1  # vLLM's check in that version used all 48 layers against one stage (the bug reported there)
    return compute(
        spec_of(v),
        gpu_memory_gib=gpu,
        tp=v.get("tensor_parallel_size") or 1,
        pp=pp,
        gpu_memory_utilization=v.get("gpu_memory_utilization") or 0.9,
        max_model_len=v.get("max_model_len"),
        kv_cache_dtype="fp8" if v.get("kv_dtype_bytes") == 1 else "auto",
        block_size=v.get("block_size") or 16,
        max_num_batched_tokens=_int_or_none(v.get("max_num_batched_tokens")),
        max_num_seqs=_int_or_none(v.get("max_num_seqs")),
        vllm_version=version,
        engine=(v.get("engine") or "").lower() or None,
        weights_gib=v.get("weights_gib_per_rank"),
        quantization=v.get("quantization"),
        measured=measured,
        gpu_name=v.get("gpu") or "",
    )


def reported_tokens(v: dict) -> int | None:
    rep = v["reported"]
    for k in ("kv_cache_tokens", "kv_cache_tokens_derived"):
        if k in rep:
            return rep[k]
    if "num_gpu_blocks" in rep:
        return rep["num_gpu_blocks"] * (v.get("block_size") or 16)
    return None


def failed(v: dict) -> bool:
    rep = v["reported"]
    return (
        "error" in rep
        or "failed" in str(rep.get("outcome", "")).lower()
        or rep.get("num_gpu_blocks") == 0
        or (rep.get("available_kv_cache_gib") or 0) < 0
    )


def error_pct(v: dict, r) -> float | None:
    """Relative error of the vector's primary reported quantity, in percent."""
    rep = v["reported"]
    if "estimated_max_model_len" in rep:
        return 100 * (r.max_model_len_that_fits / rep["estimated_max_model_len"] - 1)
    if isinstance(rep.get("max_concurrency"), (int, float)):
        return 100 * (r.max_concurrency / rep["max_concurrency"] - 1)
    if "kv_cache_gib" in rep and "activation_peak_gib" in rep and rep["kv_cache_gib"] > 0:
        return 100 * (r.available_kv_gib / rep["kv_cache_gib"] - 1)
    want = reported_tokens(v)
    if want is None:
        avail = rep.get("available_kv_cache_gib")
        if isinstance(avail, (int, float)) and avail > 0 and v.get("gpu_total_gib") is not None:
            return 100 * (r.available_kv_gib / avail - 1)  # the memory line, where no tokens were printed
        return None
    if want == 0:
        return 0.0 if r.kv_cache_tokens == 0 else 100.0
    return 100 * (r.kv_cache_tokens / want - 1)


def dense_single_complete(v: dict) -> bool:
    a = v.get("arch") or {}
    return (
        v.get("complete_inputs")
        and (v.get("gpu_count") or 1) == 1
        and (v.get("tensor_parallel_size") or 1) == 1
        and "sliding_window" not in a
        and v.get("gpu_total_gib") is not None
        and reported_tokens(v) not in (None, 0)
    )
