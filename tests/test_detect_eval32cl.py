"""The classes of the blind set eval32cl fixed after its measurement (tests/data/eval32cl/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe import versions
from observe.flags import known
from observe.model import EngineConfig
from tests.diagnosekit import by_id, diagnose, suggestions


def test_a_cache_sized_by_kv_cache_memory_bytes_grows_by_that_flag() -> None:
    """CL1 (015): 'kv_cache_memory_bytes': 20000000000 among vLLM's own non-default args (a 2026 build printing no
    version) and 1.30x at 500,000 tokens: the release has the flag (it printed it), the utilization does not size this
    cache; the bytes that hold 2 full-length requests, no --gpu-memory-utilization."""
    d = diagnose("eval32cl/015.log")
    assert by_id(d)["low_max_concurrency"]["severity"] == "warning", d["findings"]
    s = suggestions(d)
    assert "--gpu-memory-utilization" not in s, d["recommendations"]
    assert s.get("--kv-cache-memory-bytes") == ["29344M"], d["recommendations"]  # 20e9 x 2 / 1.30, whole MiB


def test_only_a_flag_vllm_printed_is_taken_as_the_releases() -> None:
    """The other side: a V1 engine of unknown release has --kv-cache-memory-bytes (0.11 →) only when vLLM printed it
    among its own parsed arguments; not otherwise, and a flag it printed does not vouch for another."""
    cfg = EngineConfig(engine="v1", version_range=versions.infer_range(None, engine="v1"))
    assert known.supported("--kv-cache-memory-bytes", cfg) is False
    cfg.release_flags.add("--max-model-len")
    assert known.supported("--kv-cache-memory-bytes", cfg) is False
    cfg.release_flags.add("--kv-cache-memory-bytes")
    assert known.supported("--kv-cache-memory-bytes", cfg) is True


def test_the_free_memory_refusal_hard_wrapped_after_on_startup_is() -> None:
    """CL2 (018): "Free memory on device cuda:1 (0.98/21.48 GiB) on startup is" / "less than desired GPU memory
    utilization (0.9, 19.34 GiB).": the busy GPU, not the catch-all."""
    d = diagnose("eval32cl/018.log")
    f = by_id(d).get("gpu_memory_busy")
    assert f is not None and f["severity"] == "critical", d["findings"]
    assert f["data"]["free_gib"] == 0.98 and f["data"]["total_gib"] == 21.48, f["data"]
    assert "engine_error" not in by_id(d), d["findings"]


def test_an_untagged_source_builds_version_is_no_release() -> None:
    """Found with CL1: setuptools-scm's "0.1.devN+g<hash>" (a checkout with no release tag; 15 logs of the sets) is no
    vLLM 0.1.0 (whose banner printed no version): unknown. A tagged dev build keeps its release."""
    assert versions.parse_version("0.1.dev1+ge32459eea.sm120a") is None
    assert versions.parse_version("v0.1.dev18496+gd4e0675a7") is None
    assert versions.parse_version("0.11.1.dev5+g1a2b3c") == (0, 11, 1)
    assert versions.parse_version("0.1.7") == (0, 1, 7)


def test_an_untagged_builds_value_in_force_is_read() -> None:
    """With the build's release unknown, eval32ci 011's --gpu-memory-utilization 0.9 (vLLM's own args) is the value in
    force: its serving OOM gets a step below it, not 'the log shows neither the value nor the release'."""
    d = diagnose("eval32ci/011.log")
    assert suggestions(d).get("--gpu-memory-utilization") == [0.88], d["recommendations"]
