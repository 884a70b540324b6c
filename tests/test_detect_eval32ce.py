"""The classes of the blind set eval32ce fixed after its measurement (tests/data/eval32ce/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, diagnose, lines


def test_a_drained_sample_does_not_break_the_cap_read_from_the_stats() -> None:
    """CE1 (003): --max-num-seqs not in the excerpt; Running 256 in three stats lines with 744 / 488 / 232 waiting and
    the KV cache at 18.5-18.8 %, then one line with 232 running and nobody waiting (the queue drained). A sample with
    nobody waiting says nothing of a cap: Running held at 256 in every sample in which requests waited is the cap in
    force, queue_seq_bound read from the stats, not queue_prefill_bound."""
    d = diagnose("eval32ce/003.log")
    seq = by_id(d).get("queue_seq_bound")
    assert seq is not None and seq["data"]["cap_from"] == "stats", d["findings"]
    assert seq["data"]["max_num_seqs"] == 256, seq
    assert "in all 3 samples in which requests waited" in seq["evidence"], seq


def test_a_sample_below_the_peak_with_requests_waiting_still_breaks_it(tmp_path: Path) -> None:
    """The other side: the same three held samples, then one at 232 running with requests still waiting (admitted
    below the peak while some waited): not held in every sample in which requests waited, no cap read."""
    ls = [x for x in lines("eval32ce/003.log") if "Running:" in x]
    last = ls[3].replace("Waiting: 0 reqs", "Waiting: 40 reqs")
    log = tmp_path / "below.log"
    log.write_text("\n".join([*ls[:3], last]) + "\n")
    assert "queue_seq_bound" not in by_id(diagnose(log)), diagnose(log)["findings"]
