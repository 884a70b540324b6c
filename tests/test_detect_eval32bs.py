"""The classes of the blind set eval32bs fixed after its measurement (tests/data/eval32bs/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines, suggestions


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
    notes = " ".join(n["text"] for n in d["advice_notes"] if "engine_error" in n["finding_ids"])
    assert "TRITON_PTXAS_PATH" in notes and "no vLLM flag helps" in notes, d["advice_notes"]


def test_ptxas_words_inside_other_text_are_not_read(tmp_path: Path) -> None:
    """The other side of BS2: only a line opening with ptxas's words is read; the same words quoted inside another
    line (a WARNING relaying a doc's sentence) are not the assembler refusing."""
    line = lines("eval32bs/007.log")[0].split(") ", 1)[1]
    log = tmp_path / "quoted.log"
    log.write_text(f"WARNING 01-09 15:09:32 [platform.py:120] seen before: {line}\n")
    d = diagnose(log)
    assert not critical(d), d["findings"]
