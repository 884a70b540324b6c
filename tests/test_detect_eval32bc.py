"""The classes of the blind set eval32bc fixed after its measurement (tests/data/eval32bc/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_the_registrys_refusal_cut_before_its_list_is_the_refused_launch() -> None:
    """BC2 (029): 'Model architectures ['GlmForCausalLM'] are not supported for now.' alone, the 'ValueError: ' and the
    'Supported architectures: [...]' tail cut off: ModelRegistry refused the model's class at start-up. (The only real
    excerpt of the cut form found; the sets' other copies keep the tail and keep their reading, below.)"""
    d = diagnose("eval32bc/029.log")
    assert critical(d) and "launch_rejected" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


@pytest.mark.parametrize("log", ["eval32al/001.log", "eval32i/020.log"])
def test_the_registrys_refusal_with_its_list_is_read_as_before(log: str) -> None:
    """The other side of BC2: the full 'ValueError: Model architectures [...] are not supported for now. Supported
    architectures: [...]' is still the failed start it was (the cut form's row needs the sentence at the line's end)."""
    d = diagnose(log)
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    assert "launch_rejected" not in by_id(d), d["findings"]


def test_other_not_supported_text_is_not_the_refusal(tmp_path: Path) -> None:
    """Narrowly the registry's sentence: 'not supported for now' without the bracketed list of quoted names, or with
    more text after it, is not read as the refused model."""
    log = tmp_path / "x.log"
    for text in (
        "Model architectures GlmForCausalLM are not supported for now.",
        "Model architectures ['GlmForCausalLM'] are not supported for now. Please upgrade to see the fix.",
    ):
        log.write_text(text + "\n")
        try:
            d = diagnose(log)
        except InputError:  # refused: no line vLLM's
            continue
        assert "launch_rejected" not in by_id(d), (text, d["findings"])


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
