"""observe.flags.vllmflags: facts pinned from vLLM's source; each test names the file and release read."""

from __future__ import annotations

import json
import re
from importlib import resources

import pytest

from observe.flags import vllmflags as vf
from observe.versions import parse_version
from tests.realvllm import vllm_source

H100 = {"gpu": "NVIDIA H100 80GB HBM3", "gpu_memory_gib": 79.19}
A10 = {"gpu": "NVIDIA A10", "gpu_memory_gib": 22.07}
A100_80 = {"gpu": "NVIDIA A100-SXM4-80GB", "gpu_memory_gib": 79.15}
B200 = {"gpu": "NVIDIA B200", "gpu_memory_gib": 178.4}


def _data() -> dict:
    return json.loads(resources.files("observe").joinpath("data/vllm_flags.json").read_text())


def test_every_fact_names_its_vllm_source():
    data = _data()
    for flag, f in data["flags"].items():
        for key in ("present", "default", "choices", "effective_default", "names", "deprecated"):
            for entry in f.get(key, []):
                assert "@ v" in entry["source"], (flag, key, entry)
                assert parse_version(entry["from"]) <= parse_version(entry["to"]), (flag, entry)
    table = data["v1_batch_defaults"]
    for entry in table["rules"] + table["cpu"] + [table["throughput_mode"]] + data["engines"]:
        assert "@ v" in entry["source"], entry


def test_read_releases_cover_the_brief():
    read = vf.versions_read()
    for v in ("0.2.7", "0.3.3", "0.4.3", "0.5.5", "0.6.3", "0.6.6", "0.7.3", "0.8.5", "0.9.2", "0.10.2"):
        assert parse_version(v) in read
    for v in ("0.11.0", "0.11.1", "0.12.0", "0.32.0", "0.33.0"):
        assert parse_version(v) in read


# --kv-cache-dtype: vllm/engine/arg_utils.py @ v0.3.3 choices=['auto', 'fp8_e5m2'];
# @ v0.4.1..v0.4.2 choices=['auto', 'fp8']; @ v0.4.3 ['auto', 'fp8', 'fp8_e5m2', 'fp8_e4m3'].
def test_kv_cache_dtype_fp8_only_from_0_4():
    assert vf.valid_value("--kv-cache-dtype", "fp8", "0.3.3") is False
    assert vf.valid_value("--kv-cache-dtype", "fp8_e5m2", "0.3.3") is True
    assert vf.valid_value("--kv-cache-dtype", "fp8", "0.4.1") is True
    assert vf.valid_value("--kv-cache-dtype", "fp8_e5m2", "0.4.2") is False
    assert vf.valid_value("--kv-cache-dtype", "fp8", "0.6.6") is True
    assert vf.choices("--kv-cache-dtype", "0.3.3") == ["auto", "fp8_e5m2"]


def test_dtype_is_as_old_as_vllm_and_half_passes_everywhere():
    # vllm/engine/arg_utils.py @ v0.1.7: --dtype, choices auto/half/bfloat16/float; @ v0.2.0 (also v0.5.0, v0.6.3,
    # v0.8.5) float16 and float32 join them; from v0.10.1 the choices are config's ModelDType Literal. Not a flag
    # "introduced in 0.30.0" (the first release the generated table read): a versionless log may be advised it.
    assert vf.introduced("--dtype") == "0.1.7"
    for v in ("0.1.7", "0.4.0", "0.9.2", "0.32.0"):
        assert vf.has_flag("--dtype", v) is True and vf.valid_value("--dtype", "half", v) is True, v
    assert vf.valid_value("--dtype", "float16", "0.1.7") is False
    assert vf.valid_value("--dtype", "float16", "0.6.3") is True


def test_quantization_from_0_2():
    # vllm/engine/arg_utils.py @ v0.1.7 has no --quantization; @ v0.2.0 adds it (choices awq, None).
    assert vf.has_flag("--quantization", "0.1.7") is False
    assert vf.has_flag("--quantization", "0.2.0") is True and vf.has_flag("--quantization", "0.8.5") is True


def test_kv_cache_dtype_absent_before_0_3():
    # vllm/engine/arg_utils.py @ v0.2.7 has no --kv-cache-dtype; @ v0.3.0 adds it.
    assert vf.has_flag("--kv-cache-dtype", "0.2.7") is False
    assert vf.valid_value("--kv-cache-dtype", "auto", "0.2.7") is False
    assert vf.introduced("--kv-cache-dtype") == "0.3.0"


def test_kv_cache_dtype_newest_choices():
    # vllm/config/cache.py @ v0.20.0 CacheDType adds float16 (@ v0.18.0), nvfp4, turboquant_*.
    assert vf.valid_value("--kv-cache-dtype", "nvfp4", "0.20.0") is True
    assert vf.valid_value("--kv-cache-dtype", "nvfp4", "0.19.1") is False
    assert vf.valid_value("--kv-cache-dtype", "float16", "0.17.1") is False
    assert vf.valid_value("--kv-cache-dtype", "float16", "0.18.0") is True


def test_kv_cache_dtype_unknown_version_is_conservative():
    # Only 'auto' is accepted by every read release that has the flag (0.4.1/0.4.2 lack fp8_e5m2,
    # 0.3.x lacks fp8).
    assert vf.choices("--kv-cache-dtype", None) == ["auto"]
    assert vf.valid_value("--kv-cache-dtype", "auto", "garbage") is True
    assert vf.valid_value("--kv-cache-dtype", "fp8", None) is None
    assert vf.valid_value("--kv-cache-dtype", "no-such-dtype", None) is False


# --gpu-memory-utilization: vllm/engine/arg_utils.py @ v0.6.6 (EngineArgs: 0.90);
# vllm/config/cache.py @ v0.19.1 Field(default=0.9) and @ v0.20.0 Field(default=0.92).
def test_gpu_memory_utilization_default_changed_in_0_20():
    assert vf.default("--gpu-memory-utilization", "0.6.6") == 0.9
    assert vf.default("--gpu-memory-utilization", "0.6.4.post1") == 0.9
    assert vf.default("--gpu-memory-utilization", "0.19.1") == 0.9
    assert vf.default("--gpu-memory-utilization", "0.20.0") == 0.92
    assert vf.default("--gpu-memory-utilization", "0.33.0") == 0.92
    assert vf.default("--gpu-memory-utilization", "0.32.0+cpu", device="CPU") == 0.92


def test_gpu_memory_utilization_range():
    # vllm/config/cache.py @ v0.33.0: Field(default=0.92, gt=0, le=1).
    assert vf.valid_value("--gpu-memory-utilization", 0.95, "0.33.0") is True
    assert vf.valid_value("--gpu-memory-utilization", 1.5, "0.33.0") is False
    assert vf.valid_value("--gpu-memory-utilization", 0, "0.33.0") is False


def test_unknown_versions_answer_none():
    assert vf.default("--gpu-memory-utilization", None) is None
    assert vf.default("--gpu-memory-utilization", "not a version") is None
    assert vf.default("--gpu-memory-utilization", "0.99.0") is None  # newer than anything read
    assert vf.has_flag("--swap-space", None) is None
    assert vf.has_flag("--no-such-flag", "0.10.2") is None
    assert vf.batch_defaults(None, **H100) is None


# get_batch_defaults / _set_default_args_v1 in vllm/engine/arg_utils.py.
def test_v1_batch_defaults_h100_vs_a10():
    # @ v0.11.0: >= 70 GiB and not A100 -> 8192 tokens / 1024 seqs for the API server; else 2048 / 256.
    assert vf.batch_defaults("0.11.0", **H100) == {"max_num_seqs": 1024, "max_num_batched_tokens": 8192}
    assert vf.batch_defaults("0.11.0", **A10) == {"max_num_seqs": 256, "max_num_batched_tokens": 2048}
    assert vf.batch_defaults("0.11.0", usage="llm", **H100) == {
        "max_num_seqs": 1024,
        "max_num_batched_tokens": 16384,
    }
    assert vf.default("--max-num-seqs", "0.11.0", **A10) == 256
    assert vf.default("--max-num-batched-tokens", "0.11.0", **H100) == 8192


def test_v1_batch_defaults_a100_excluded_from_0_9():
    # @ v0.8.5 the test is memory only; @ v0.9.0 adds '"a100" not in device_name'.
    assert vf.batch_defaults("0.8.5", **A100_80)["max_num_batched_tokens"] == 8192
    assert vf.batch_defaults("0.9.0", **A100_80)["max_num_batched_tokens"] == 2048


def test_v1_batch_defaults_by_name_before_0_8_5():
    # @ v0.8.0: '"h100" in device_name or "h200" in device_name'; max_num_seqs 1024 on every GPU.
    assert vf.batch_defaults("0.8.0", gpu="NVIDIA H200") == {
        "max_num_seqs": 1024,
        "max_num_batched_tokens": 8192,
    }
    assert vf.batch_defaults("0.8.0", gpu="NVIDIA L4") == {
        "max_num_seqs": 1024,
        "max_num_batched_tokens": 2048,
    }
    assert vf.batch_defaults("0.8.0") is None  # the rule needs the name


def test_v1_batch_defaults_b200_tier_from_0_28():
    # @ v0.28.0: device_memory >= 160 GiB -> 16384 tokens for the API server too.
    assert vf.batch_defaults("0.27.0", **B200)["max_num_batched_tokens"] == 8192
    assert vf.batch_defaults("0.28.0", **B200)["max_num_batched_tokens"] == 16384


def test_v1_batch_defaults_need_gpu_facts():
    assert vf.batch_defaults("0.11.0") is None
    assert vf.default("--max-num-seqs", "0.11.0") is None
    # Below 70 GiB the name is not needed.
    assert vf.batch_defaults("0.11.0", gpu_memory_gib=22.0) == {
        "max_num_seqs": 256,
        "max_num_batched_tokens": 2048,
    }


def test_throughput_mode_doubles():
    # @ v0.17.0: performance_mode == "throughput" doubles unset max_num_batched_tokens / max_num_seqs.
    assert vf.batch_defaults("0.17.0", performance_mode="throughput", **H100) == {
        "max_num_seqs": 2048,
        "max_num_batched_tokens": 16384,
    }
    assert vf.batch_defaults("0.16.0", performance_mode="throughput", **H100)["max_num_seqs"] == 1024


def test_cpu_batch_defaults():
    # @ v0.10.0..v0.33.0 is_cpu(): 2048 * world_size tokens, 128 * world_size seqs for the API server;
    # @ v0.9.2: 2048 / 32, not scaled.
    assert vf.batch_defaults("0.32.0", device="CPU") == {"max_num_seqs": 128, "max_num_batched_tokens": 2048}
    assert vf.batch_defaults("0.32.0", device="CPU", world_size=2)["max_num_seqs"] == 256
    assert vf.batch_defaults("0.9.2", device="CPU") == {"max_num_seqs": 32, "max_num_batched_tokens": 2048}
    assert vf.default("--max-num-seqs", "0.32.0", device="CPU") == 128


def test_v0_max_num_seqs():
    # vllm/engine/arg_utils.py @ v0.6.6 __post_init__: 256 if not VLLM_USE_V1 else 1024;
    # @ v0.10.2 _set_default_args_v0: 256.
    assert vf.default("--max-num-seqs", "0.6.6") == 256
    assert vf.default("--max-num-seqs", "0.7.3", engine="V1") == 1024
    assert vf.default("--max-num-seqs", "0.10.2", engine="V0") == 256
    assert vf.default("--max-num-seqs", "0.2.7") == 256


def test_batch_defaults_rejects_bad_usage():
    with pytest.raises(ValueError):
        vf.batch_defaults("0.11.0", usage="server", **H100)


def test_default_engine():
    # vllm/envs.py @ v0.7.3 VLLM_USE_V1 default "0", @ v0.8.0 default "1".
    assert vf.default_engine("0.7.3") == "V0"
    assert vf.default_engine("0.8.0") == "V1"
    assert vf.default_engine("0.33.0") == "V1"


def test_max_num_active_seqs_introduced_0_31():
    # vllm/engine/arg_utils.py @ v0.31.0 registers --max-num-active-seqs; @ v0.30.0 does not.
    assert vf.has_flag("--max-num-active-seqs", "0.30.0") is False
    assert vf.has_flag("--max-num-active-seqs", "0.31.0") is True
    assert vf.has_flag("--max-num-active-seqs", "0.11.0") is False
    assert vf.introduced("--max-num-active-seqs") == "0.31.0"


def test_swap_space_removed_in_0_18():
    # vllm/engine/arg_utils.py @ v0.17.1 registers --swap-space; @ v0.18.0 does not.
    assert vf.has_flag("--swap-space", "0.17.1") is True
    assert vf.has_flag("--swap-space", "0.18.0") is False
    assert vf.has_flag("--swap-space", "0.17.5") is None  # between the two: not read
    assert vf.removed_in("--swap-space") == "0.18.0"
    assert vf.default("--swap-space", "0.6.6") == 4
    assert vf.default("--swap-space", "0.18.0") is None


def test_flags_that_came_and_went():
    # arg_utils.py: --preemption-mode @ v0.5.1..v0.10.2; --calculate-kv-scales @ v0.7.0..v0.27.0;
    # --max-num-partial-prefills @ v0.7.3..v0.26.0; --num-speculative-tokens @ v0.4.1..v0.8.2;
    # --disable-log-requests until v0.16.0, --enable-log-requests from v0.10.1.
    assert vf.has_flag("--preemption-mode", "0.10.2") is True
    assert vf.has_flag("--preemption-mode", "0.11.0") is False
    assert vf.has_flag("--calculate-kv-scales", "0.28.0") is False
    assert vf.has_flag("--max-num-partial-prefills", "0.27.0") is False
    assert vf.has_flag("--num-speculative-tokens", "0.9.2") is False
    assert vf.has_flag("--speculative-config", "0.9.2") is True
    assert vf.has_flag("--disable-log-requests", "0.17.0") is False
    assert vf.has_flag("--enable-log-requests", "0.10.0") is False
    assert vf.has_flag("--enable-log-requests", "0.10.1") is True
    assert vf.has_flag("--max-num-queued-reqs", "0.29.0") is True
    assert vf.has_flag("--max-num-queued-reqs", "0.28.0") is False


def test_request_logging_default_flipped_in_0_10_1():
    # AsyncEngineArgs @ v0.10.0 disable_log_requests=False (logging on);
    # @ v0.10.1 enable_log_requests=False (logging off).
    assert vf.default("--disable-log-requests", "0.10.0") is False
    assert vf.default("--enable-log-requests", "0.10.1") is False
    assert vf.default("--disable-log-requests", "0.12.0") is True


def test_no_enable_prefix_caching():
    # arg_utils.py @ v0.6.4 action='store_true'; @ v0.6.5 argparse.BooleanOptionalAction.
    assert vf.has_flag("--no-enable-prefix-caching", "0.6.4") is False
    assert vf.has_flag("--no-enable-prefix-caching", "0.6.5") is True
    assert vf.has_flag("--no-enable-prefix-caching", "0.33.0") is True


def test_prefix_caching_and_chunked_prefill_defaults_by_engine():
    # arg_utils.py @ v0.4.3 enable_prefix_caching False; V1 @ v0.8.0..v0.11.0 turns None into True.
    assert vf.default("--enable-prefix-caching", "0.4.3") is False
    assert vf.default("--enable-prefix-caching", "0.10.2", engine="V0") is False
    assert vf.default("--enable-prefix-caching", "0.10.2") is True
    # V0 chunked prefill depends on max_model_len > 32768 (arg_utils.py @ v0.5.3..v0.10.2).
    assert vf.default("--enable-chunked-prefill", "0.6.6") is None
    assert vf.default("--enable-chunked-prefill", "0.4.3") is False
    assert vf.default("--enable-chunked-prefill", "0.12.0") is True


def test_block_size():
    # platforms/cuda.py @ v0.6.6: None -> 16; platforms/cpu.py @ v0.32.0: 128.
    # arg_utils.py @ v0.2.7 choices [8, 16, 32]; @ v0.11.1 adds 256; @ v0.18.0 no fixed choices.
    assert vf.default("--block-size", "0.6.6") == 16
    assert vf.default("--block-size", "0.32.0", device="CPU") == 128
    assert vf.default("--block-size", "0.20.0") is None  # attention backend picks it
    assert vf.valid_value("--block-size", 128, "0.2.7") is False
    assert vf.valid_value("--block-size", 256, "0.11.1") is True
    assert vf.choices("--block-size", "0.18.0") is None
    assert vf.valid_value("--block-size", 48, "0.18.0") is True


def test_device_memory_utilization_alias():
    # arg_utils.py @ v0.31.0 registers "--gpu-memory-utilization", "--device-memory-utilization".
    names = {e["from"]: e["names"] for e in _data()["flags"]["--gpu-memory-utilization"]["names"]}
    assert "--device-memory-utilization" in names["0.31.0"]
    assert "--device-memory-utilization" not in names[min(names, key=parse_version)]


def test_performance_mode_choices():
    # arg_utils.py @ v0.17.0: Literal["balanced", "interactivity", "throughput"], default balanced.
    assert vf.has_flag("--performance-mode", "0.16.0") is False
    assert vf.valid_value("--performance-mode", "throughput", "0.17.0") is True
    assert vf.valid_value("--performance-mode", "fast", "0.17.0") is False
    assert vf.default("--performance-mode", "0.33.0") == "balanced"


def test_kv_cache_memory_bytes_takes_human_sizes():
    assert vf.valid_value("--kv-cache-memory-bytes", "16M", "0.32.0") is True
    assert vf.valid_value("--kv-cache-memory-bytes", "1.5G", "0.32.0") is True
    assert vf.valid_value("--kv-cache-memory-bytes", 16 << 20, "0.32.0") is True
    assert vf.valid_value("--kv-cache-memory-bytes", "16 megs", "0.32.0") is False
    assert vf.valid_value("--max-num-seqs", "16M", "0.32.0") is False  # a plain int flag


def test_v0_batched_tokens_by_release_and_length():
    # vllm/config.py @ v0.6.3 SchedulerConfig: 512 with chunked prefill, else max(max_model_len, 2048);
    # vllm/engine/arg_utils.py @ v0.6.3: chunked prefill on by itself above 32,768 tokens (absent @ v0.4.3)
    assert vf.v0_batched_tokens("0.6.3", 4096) == (4096, False)
    assert vf.v0_batched_tokens("0.6.3", 1024) == (2048, False)
    assert vf.v0_batched_tokens("0.6.3", 65536) == (512, True)
    assert vf.v0_batched_tokens("0.7.2", 65536) == (2048, True)  # vllm/config.py @ v0.7.2: 2048
    assert vf.v0_batched_tokens("0.4.3", 65536) == (65536, False)
    assert vf.v0_batched_tokens("0.1.7", 4096) == (2560, False)  # EngineArgs @ v0.1.7: 2560
    assert vf.v0_batched_tokens(None, 65536) == (65536, False)  # the rule every V0 release shares
    assert vf.v0_batched_tokens("0.20.0", 65536) == (65536, False)  # no V0 there
    table = _data()["v0_batched_tokens"]
    for entry in [table["unchunked"], table["long_context"], *table["chunked"]]:
        assert "@ v" in entry["source"], entry


def test_block_size_and_utilization_defaults_by_release():
    # vllm/engine/arg_utils.py @ v0.6.3 block_size 16; vllm/platforms/cuda.py @ v0.17.1 None -> 16;
    # from 0.18 the attention backend picks it from CacheConfig.DEFAULT_BLOCK_SIZE = 16
    assert [vf.block_size(v) for v in ("0.2.7", "0.6.4", "0.17.1", "0.18.0", "0.33.0")] == [16] * 5
    assert vf.block_size("0.32.0", device="CPU") == 128  # vllm/platforms/cpu.py @ v0.32.0
    assert vf.default("--block-size", "0.30.0") is None  # not fixed: only fallback=True gives 16
    assert vf.block_size(None) is None and vf.gpu_memory_utilization(None) is None
    # vllm/config/cache.py @ v0.19.1 0.9, @ v0.20.0 0.92
    assert (vf.gpu_memory_utilization("0.19.1"), vf.gpu_memory_utilization("0.20.0")) == (0.9, 0.92)


def test_nearest_read_release():
    newest = ".".join(map(str, vf.versions_read()[-1]))
    assert vf.nearest_read(None) == vf.nearest_read("99.0.0") == vf.nearest_read("garbage") == newest
    assert vf.nearest_read("0.30.0") == "0.30.0"
    assert vf.nearest_read("0.8.4.post1") == "0.8.4"
    assert vf.nearest_read("0.0.1") == "0.1.7"


def test_stats_interval_is_vllms_default():
    """V1 logs stats every VLLM_LOG_STATS_INTERVAL seconds, 10 unless set (vllm/envs.py); V0 every 5."""
    envs = vllm_source("envs.py").read_text()
    env = vf.stats_interval_env()
    got = re.search(rf'os\.getenv\("{env}", "([0-9.]+)"\)', envs)
    assert got, f"{env} is not read in vllm/envs.py"
    assert vf.stats_interval_s() == float(got[1]) == 10.0
    assert vf.stats_interval_s("V0") == 5.0


def test_largest_gpu_batch_default_is_the_largest_tier():
    """The largest unset --max-num-seqs on a GPU: every tier of every read release is at most it, and
    a GPU of 80 GiB reaches it in 0.32 and 0.34 (arg_utils.py get_batch_defaults)."""
    largest = vf.largest_gpu_max_num_seqs()
    for r in vf.versions_read():
        for gpu, gib in (
            ("NVIDIA H100 80GB HBM3", 79.1),
            ("NVIDIA A100-SXM4-80GB", 79.1),
            ("NVIDIA L4", 22.0),
        ):
            got = vf.batch_defaults(".".join(map(str, r)), gpu=gpu, gpu_memory_gib=gib)
            assert got is None or got["max_num_seqs"] <= largest
    for release in ("0.32.0", "0.34.0"):
        assert vf.batch_defaults(release, gpu="NVIDIA H100 80GB HBM3", gpu_memory_gib=79.1) == {
            "max_num_seqs": largest,
            "max_num_batched_tokens": 8192,
        }
        assert (
            vf.batch_defaults(release, gpu="NVIDIA A100-SXM4-80GB", gpu_memory_gib=79.1)["max_num_seqs"]
            == 256
        )
