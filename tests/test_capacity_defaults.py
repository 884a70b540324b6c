"""The capacity model sizes with vLLM's own defaults as the vocabulary (observe.flags.vllmflags, from
vLLM's source release by release) states them: one fact in one place.

Before, capacity/sizing.py restated the V1 batch defaults in code and disagreed with the data on
several release x GPU pairs (0.8.0 on an A10: 256 sequences where vLLM 0.8.0 takes 1024 on any GPU
but by name the tokens), and sized every release at --gpu-memory-utilization 0.9 where vLLM's
default is 0.92 from 0.20 (vllm/config/cache.py @ v0.20.0 CacheConfig.gpu_memory_utilization).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from observe.capacity import compute, tables, what_if
from observe.flags import vllmflags
from observe.model import EngineConfig
from tests.capacitykit import OPT_125M

ROOT = Path(__file__).resolve().parent.parent

OPT = OPT_125M
_TEXT = lambda v: ".".join(map(str, v))
V1_RELEASES = [_TEXT(v) for v in vllmflags.versions_read() if vllmflags.default_engine(_TEXT(v)) == "V1"]
GPUS = tables.known_gpus()


def test_the_pairs_cover_every_v1_release_and_gpu():
    assert len(V1_RELEASES) >= 40 and "0.8.0" in V1_RELEASES and "0.33.0" in V1_RELEASES
    assert len(GPUS) >= 17


@pytest.mark.parametrize("release", V1_RELEASES)
def test_capacity_batch_defaults_are_the_vocabularys_on_every_gpu(release: str) -> None:
    wrong = []
    for name in GPUS:
        gpu = tables.gpu_spec(name)
        want = vllmflags.batch_defaults(release, gpu=gpu.name, gpu_memory_gib=gpu.total_gib)
        assert want is not None, (release, name)
        r = compute(OPT, gpu_memory_gib=gpu.total_gib, gpu_name=gpu.name, vllm_version=release)
        got = {"max_num_seqs": r.max_num_seqs, "max_num_batched_tokens": r.max_num_batched_tokens}
        if got != want:
            wrong.append((name, got, want))
    assert not wrong, wrong


def test_0_8_0_on_an_a10_takes_1024_sequences():
    # vllm/engine/arg_utils.py @ v0.8.0 (_set_default_args_v1): max_num_seqs 1024 on every GPU,
    # the batched tokens by name ("h100"/"h200" → 8192, others 2048)
    a10 = tables.gpu_spec("A10G")
    r = compute(OPT, gpu_memory_gib=a10.total_gib, gpu_name=a10.name, vllm_version="0.8.0")
    assert (r.max_num_seqs, r.max_num_batched_tokens) == (1024, 2048)


def test_a_name_rule_without_a_gpu_name_says_what_it_assumed():
    r = compute(OPT, gpu_memory_gib=79.19, vllm_version="0.8.0")
    assert (r.max_num_seqs, r.max_num_batched_tokens) == (1024, 2048)
    assert any("by the GPU's name" in n for n in r.notes), r.notes


@pytest.mark.parametrize(
    ("release", "util", "block"),
    [
        ("0.19.1", 0.9, 16),
        ("0.20.0", 0.92, 16),
        ("0.30.0", 0.92, 16),
        ("0.33.0", 0.92, 16),
        ("0.34.0", 1.0, 64),  # the extensible KV cache; CacheConfig.DEFAULT_BLOCK_SIZE 64
        (None, 1.0, 64),
    ],
)
def test_capacity_sizes_at_vllms_utilization_default(release: str | None, util: float, block: int) -> None:
    r = compute(OPT, gpu_memory_gib=22.03, vllm_version=release)
    assert r.gpu_memory_utilization == util
    assert r.block_size == vllmflags.block_size(release or _TEXT(vllmflags.versions_read()[-1])) == block


def _cli_json(*args: str) -> dict:
    out = subprocess.run(
        [sys.executable, "-m", "observe.cli", "capacity", "--gpu", "L4", "--format", "json", *args],
        capture_output=True,
        text=True,
        check=True,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    return json.loads(out.stdout)


def test_cli_capacity_at_0_30_sizes_at_0_92(tmp_path) -> None:
    cfg = tmp_path / "config.json"
    cfg.write_text(json.dumps(OPT))
    d = _cli_json("--model", str(cfg), "--vllm-version", "0.30.0")
    assert d["gpu_memory_utilization"] == 0.92 and d["block_size"] == 16
    at_09 = _cli_json("--model", str(cfg), "--vllm-version", "0.30.0", "--gpu-memory-utilization", "0.9")
    assert d["kv_cache_tokens"] > at_09["kv_cache_tokens"]
    assert _cli_json("--model", str(cfg), "--vllm-version", "0.19.1")["gpu_memory_utilization"] == 0.9


def test_what_if_assumes_the_releases_utilization_default():
    facts = dict(engine="v1", kv_cache_tokens=42_656, available_kv_gib=6.51, max_model_len=32768)
    new = what_if(
        EngineConfig(version="0.30.0", **facts), {"--gpu-memory-utilization": 0.95}, gpu_total_gib=22.0
    )
    old = what_if(
        EngineConfig(version="0.10.0", **facts), {"--gpu-memory-utilization": 0.95}, gpu_total_gib=22.0
    )
    assert "0.92 (vLLM default) → 0.95" in new.summary, new.summary
    assert "0.90 (vLLM default) → 0.95" in old.summary, old.summary
    assert new.kv_tokens_after < old.kv_tokens_after  # 3 points of the GPU more, not 5


V0_RELEASES = [_TEXT(v) for v in vllmflags.versions_read() if vllmflags.default_engine(_TEXT(v)) == "V0"]


@pytest.mark.parametrize("length", [4096, 65536])
def test_v0_batch_defaults_are_the_vocabularys(length: int) -> None:
    spec = dict(OPT, max_position_embeddings=131072)
    wrong = []
    for release in V0_RELEASES:
        r = compute(spec, gpu_memory_gib=79.19, vllm_version=release, max_model_len=length)
        want = vllmflags.v0_batched_tokens(release, length)[0]
        if (r.engine, r.max_num_seqs, r.max_num_batched_tokens) != ("v0", 256, want):
            wrong.append((release, r.engine, r.max_num_seqs, r.max_num_batched_tokens, want))
    assert not wrong, wrong


def test_what_if_says_which_release_it_assumed_when_the_log_names_none():
    facts = dict(engine="v1", kv_cache_tokens=42_656, available_kv_gib=6.51, max_model_len=32768)
    w = what_if(EngineConfig(**facts), {"--gpu-memory-utilization": 0.95}, gpu_total_gib=22.0)
    newest = _TEXT(vllmflags.versions_read()[-1])
    assert any(f"default 1 (vLLM {newest}'s: the log names no release)" in n for n in w.notes), w.notes
    named = what_if(
        EngineConfig(version="0.10.0", **facts), {"--gpu-memory-utilization": 0.95}, gpu_total_gib=22.0
    )
    assert "--gpu-memory-utilization not in the log: assumed vLLM's default 0.9" in named.notes, named.notes


@pytest.mark.parametrize("version", ["0.6.3", None])
def test_a_v0_logs_tokens_from_its_blocks_use_the_vocabularys_block_size(version: str | None) -> None:
    from observe import diagnosis

    cfg = EngineConfig(engine="v0", version=version, num_gpu_blocks=100)
    diagnosis._complete_config(cfg, diagnosis.Summary(), [])
    assert (
        cfg.kv_cache_tokens
        == 100 * vllmflags.block_size(version or "0.10.2")  # V0's newest release: V0 is gone from 0.11
        == 1600
    )
