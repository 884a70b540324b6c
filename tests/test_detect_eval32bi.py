"""The classes of the blind set eval32bi fixed after its measurement (tests/data/eval32bi/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_a_negative_kv_budget_alone_is_no_room_for_any_kv_cache(tmp_path: Path) -> None:
    """BI3 (025): two prefix-less lines, 'Loading model weights took 27.5376 GB' and 'Available KV cache memory: -0.87
    GiB'. gpu_worker's budget is below zero, and the engine core's check_enough_kv_cache_memory raises 'No available
    memory for the cache blocks' for any budget <= 0: no_kv_cache_memory, a rejected start, never a crash."""
    d = diagnose("eval32bi/025.log")
    assert "no_kv_cache_memory" in by_id(d) and critical(d), d["findings"]
    assert by_id(d)["no_kv_cache_memory"]["data"].get("kv_available_gib") == -0.87, d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert [la["status"] for la in d["launches"]] == ["rejected"], d["launches"]
    # the second real excerpt: eval32d 010's worker line (vllm-omni, behind its EngineCore prefix), alone
    line = next(
        x for x in (DATA / "eval32d" / "010.log").read_text().splitlines() if "Available KV cache" in x
    )
    (tmp_path / "one.log").write_text(line + "\n")
    d = diagnose(tmp_path / "one.log")
    assert "no_kv_cache_memory" in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]
    # a budget at or above zero is the start-up's figure, nothing failed
    (tmp_path / "zero.log").write_text(line.replace("-2.77", "0.00") + "\n")
    assert not critical(diagnose(tmp_path / "zero.log"))
