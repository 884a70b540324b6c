"""The classes of the blind set eval32bc fixed after its measurement (tests/data/eval32bc/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import DATA, by_id, critical, diagnose


def _died_serving(d: dict) -> None:
    assert critical(d), d["findings"]
    assert {"engine_crashed", "engine_error"} & set(by_id(d)), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    phases = {(f.get("data") or {}).get("phase") for f in critical(d)}
    assert "serving" in phases, d["findings"]


def test_the_engine_cores_record_cut_to_a_model_runners_execute_model_is_a_death_while_serving() -> None:
    """BC1 (019): three lines of V1's engine core ERROR record ([core.py:387]), header and exception cut, whose frame is
    ArcticInference's model runner's execute_model (run only on a scheduled batch): the engine core died while
    serving, never a failed start."""
    _died_serving(diagnose("eval32bc/019.log"))


def test_another_runners_execute_model_in_the_core_record_cut_the_same_way(tmp_path: Path) -> None:
    """BC1's second excerpt: eval32az 020's engine core record (vllm-ascend's model_runner_v1.py execute_model, 0.10)
    cut to the same three lines (frame, source, caret) before its exception line: the same reading."""
    lines = (DATA / "eval32az/020.log").read_text().splitlines(keepends=True)
    assert "[core.py:" in lines[0] and "in execute_model" in lines[0] and "Error" in lines[3]
    log = tmp_path / "cut.log"
    log.write_text("".join(lines[:3]))
    _died_serving(diagnose(log))
