"""The classes of the blind set eval32bs fixed after its measurement (tests/data/eval32bs/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines, notes, suggestions


def test_ptxas_refusing_the_gpus_architecture_is_the_engines_error() -> None:
    """BS2 (007): the engine core's one line '(EngineCore_DP0 pid=N) ptxas fatal   : Value 'sm_121a' is not defined
    for option 'gpu-name'' (the PTX assembler Triton runs refusing a GB10's arch): the engine's error, critical, its
    phase not claimed (one line tells neither start-up nor serving); the advice a ptxas that knows the arch
    (TRITON_PTXAS_PATH), no memory flag."""
    d = diagnose("eval32bs/007.log")
    err = by_id(d).get("engine_error")
    assert critical(d) and err is not None, d["findings"]
    assert err["data"]["phase"] == "unknown", err
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    text = notes(d, "engine_error")
    assert "TRITON_PTXAS_PATH" in text and "no vLLM flag helps" in text, d["advice_notes"]


def test_ptxas_refusal_before_the_wrappers_failed_start_is_its_root_cause() -> None:
    """BS2's other excerpt (001): MinerU's engine loads the weights, Triton's ptxas refuses 'sm_121a', and V1's
    'RuntimeError: Engine core initialization failed.' wraps it: the failed start's root cause is the refusal and its
    advice the ptxas one (TRITON_PTXAS_PATH, no vLLM flag), not "the log shows the failure but not its cause"."""
    d = diagnose("eval32bs/001.log")
    start = by_id(d).get("engine_startup_failed")
    assert start is not None, d["findings"]
    assert "sm_121a" in (start["data"]["root_cause"] or {}).get("text", ""), start
    text = notes(d, "engine_startup_failed")
    assert "TRITON_PTXAS_PATH" in text and "not its cause" not in text, d["advice_notes"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]


def test_ptxas_words_inside_other_text_are_not_read(tmp_path: Path) -> None:
    """The other side of BS2: only a line opening with ptxas's words is read; the same words quoted inside another
    line (a WARNING relaying a doc's sentence) are not the assembler refusing."""
    line = lines("eval32bs/007.log")[0].split(") ", 1)[1]
    log = tmp_path / "quoted.log"
    log.write_text(f"WARNING 01-09 15:09:32 [platform.py:120] seen before: {line}\n")
    d = diagnose(log)
    assert not critical(d), d["findings"]


def test_a_queue_held_at_the_running_peak_with_no_admission_is_the_sequence_cap() -> None:
    """BS1 (006): three headerless stats lines (--max-num-seqs not in the log): Running 256 with 144 waiting at KV
    5.7 %, then an interval with no prompt tokens and Waiting still 144 (KV 5.3 %, generation going on): nothing
    was admitted though the cache had room, so the sequence cap was in force, at the 256 observed (read from the
    stats, not assumed). queue_seq_bound with the cap observed; the lever --max-num-seqs above it; no memory flag."""
    d = diagnose("eval32bs/006.log")
    seq = by_id(d).get("queue_seq_bound")
    assert seq is not None and "queue_prefill_bound" not in by_id(d), d["findings"]
    assert (seq["data"]["max_num_seqs"], seq["data"]["cap_from"]) == (256, "stats"), seq
    assert "read from the stats" in seq["evidence"], seq
    assert suggestions(d).get("--max-num-seqs") and suggestions(d)["--max-num-seqs"][0] > 256, d[
        "recommendations"
    ]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]


def test_a_queue_that_keeps_being_admitted_stays_unknown_cap(tmp_path: Path) -> None:
    """The other side of BS1: the same first sample, then requests admitted in the next interval (prompt tokens,
    Waiting falling) and Running not held: the stats show no cap, so the queue stays prefill-or-cap, cap unknown."""
    first, second, _ = lines("eval32bs/006.log")
    second = second.replace("Avg prompt throughput: 0.0", "Avg prompt throughput: 900.0").replace(
        "Waiting: 144", "Waiting: 120"
    )
    log = tmp_path / "admitted.log"
    log.write_text(f"{first}\n{second}\n")
    d = diagnose(log)
    assert "queue_seq_bound" not in by_id(d) and "queue_prefill_bound" in by_id(d), d["findings"]


def test_running_held_at_one_value_in_every_sample_is_the_cap_seen(tmp_path: Path) -> None:
    """BS1's other reading: Running at one and the same value in every sample (3+) while requests wait and the KV
    cache is far from full, prompts admitted meanwhile: the cap in force, at the plateau observed."""
    first = lines("eval32bs/006.log")[0]
    log = tmp_path / "plateau.log"
    log.write_text("\n".join(first.replace("01:43:37", f"01:43:{s}") for s in (37, 47, 57)) + "\n")
    seq = by_id(diagnose(log)).get("queue_seq_bound")
    assert seq is not None and seq["data"]["cap_from"] == "stats", seq
    assert "held at 256 in all 3 samples" in seq["evidence"], seq


def test_a_plateau_broken_by_one_sample_is_no_cap_seen(tmp_path: Path) -> None:
    """The other side of the plateau reading: the same three samples at 256 after one at 200 (prompts admitted
    throughout) are not Running held at one value in every sample, so no cap is read from the stats."""
    first = lines("eval32bs/006.log")[0]
    assert "Running: 256 reqs" in first, first
    below = first.replace("01:43:37", "01:43:27").replace("Running: 256 reqs", "Running: 200 reqs")
    held = [first.replace("01:43:37", f"01:43:{s}") for s in (37, 47, 57)]
    log = tmp_path / "broken-plateau.log"
    log.write_text("\n".join([below, *held]) + "\n")
    assert "queue_seq_bound" not in by_id(diagnose(log)), diagnose(log)["findings"]
