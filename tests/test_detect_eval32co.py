"""The classes of the blind set eval32co fixed after its measurement (tests/data/eval32co/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, diagnose, lines, notes, suggestions


def test_vllms_own_utilization_figure_is_taken_for_a_cache_with_no_room() -> None:
    """CO1 (005): "The current --gpu-memory-utilization=0.3000 is equivalent to … increase --gpu-memory-utilization to
    0.5799", then "No available memory for the cache blocks": 0.3 (read from that note) → 0.58, vLLM's figure."""
    d = diagnose("eval32co/005.log")
    assert by_id(d)["no_kv_cache_memory"]["severity"] == "critical", d["findings"]
    rec = next(r for r in d["recommendations"] if r["flag"] == "--gpu-memory-utilization")
    assert (rec["current"], rec["suggested"]) == (0.3, 0.58), rec


def test_vllms_figure_at_or_below_the_value_in_force_is_not_taken(tmp_path: Path) -> None:
    """The other side: a figure not above the value in force is no raise (the hint line rewritten to name 0.2500)."""
    text = "\n".join(lines("eval32co/005.log")).replace("to 0.5799.", "to 0.2500.")
    log = tmp_path / "low.log"
    log.write_text(text + "\n")
    assert 0.25 not in suggestions(diagnose(log)).get("--gpu-memory-utilization", [])


def test_no_room_at_the_releases_default_gets_a_first_step_above_it() -> None:
    """CO3 (009): V1 0.8.5.post1, 17.22 GiB of weights, "No available memory for the cache blocks" at the default 0.9:
    a first step to 0.95, the other levers named in a note."""
    d = diagnose("eval32co/009.log")
    rec = next(r for r in d["recommendations"] if r["flag"] == "--gpu-memory-utilization")
    assert (rec["current"], rec["suggested"], rec["current_is_default"]) == (0.9, 0.95, True), rec
    assert "17.22 GiB" in rec["expected_effect"], rec
    assert "quantized checkpoint" in notes(d, "no_kv_cache_memory"), d["advice_notes"]


def test_a_v0_profile_pass_oom_is_not_answered_with_enforce_eager() -> None:
    """CO2 (007, left a miss): V0 0.5.1's profile pass runs no CUDA graphs, so --enforce-eager is no lever; the note names
    the 14.25 GiB of weights (the GPU's size is not in the cut message)."""
    d = diagnose("eval32co/007.log")
    assert "cuda_oom" in by_id(d), d["findings"]
    assert "--enforce-eager" not in suggestions(d), d["recommendations"]
    note = notes(d, "cuda_oom")
    assert "14.25 GiB" in note and "--enforce-eager" not in note, d["advice_notes"]
