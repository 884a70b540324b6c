"""The class of the blind set eval32cj fixed after its measurement (tests/data/eval32cj/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines, notes, suggestions


def test_tpu_inferences_hbm_cap_refusal_gets_the_utilization_that_fits() -> None:
    """CJ1 (012): "total_hbm_used_gb=731.21GiB exceeds total_hbm_limit_cap_gb=718.55GiB by 12.66GiB. Please consider
    increasing --gpu-memory-utilization from 0.948": the devices hold 757.96 GiB; 0.98 caps 742.8, 11.6 above use."""
    d = diagnose("eval32cj/012.log")
    f = by_id(d).get("no_kv_cache_memory")
    assert f is not None and f["severity"] == "critical", d["findings"]
    assert f["data"]["hbm_limit_gib"] == 757.96, f["data"]
    assert suggestions(d).get("--gpu-memory-utilization") == [0.98], d["recommendations"]


def test_the_hbm_cap_with_no_room_left_at_0_99_is_a_note(tmp_path: Path) -> None:
    """The other side: weights that fill 99 % of the devices leave no utilization room for a KV cache: a note, no
    flag."""
    text = "\n".join(lines("eval32cj/012.log")).replace(
        "total_hbm_used_gb=731.21GiB exceeds", "total_hbm_used_gb=752.00GiB exceeds"
    )
    log = tmp_path / "full.log"
    log.write_text(text + "\n")
    d = diagnose(log)
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    assert "no --gpu-memory-utilization leaves room" in notes(d, "no_kv_cache_memory"), d["advice_notes"]


def test_jaxs_refused_device_buffer_while_allocating_the_kv_cache_lowers_the_utilization() -> None:
    """CJ1 (010): "RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate 1.01G. That was not
    possible. There are 999.27M free." after "GPU KV cache size": the device's out-of-memory allocating the KV cache; the
    device's size unknown, the least step below 0.98."""
    d = diagnose("eval32cj/010.log")
    oom = by_id(d).get("cuda_oom")
    assert oom is not None and oom["data"]["phase"] == "kv_cache_init", d["findings"]
    assert oom["data"]["tried_to_allocate_gib"] == 1.01 and round(oom["data"]["free_gib"], 3) == 0.976, oom[
        "data"
    ]
    assert suggestions(d).get("--gpu-memory-utilization") == [0.96], d["recommendations"]
    assert critical(d)


def test_the_compilers_on_chip_memory_is_not_the_devices() -> None:
    """The other side: XLA's "Ran out of memory in memory space vmem / smem" (eval32bu 006, eval32bx 019) is one kernel's
    on-chip scratch memory: no out-of-memory finding, no memory flag."""
    for log in ("eval32bu/006.log", "eval32bx/019.log"):
        d = diagnose(log)
        assert "cuda_oom" not in by_id(d) and "no_kv_cache_memory" not in by_id(d), d["findings"]
        assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
