"""The classes of the blind set eval32bf fixed after its measurement (tests/data/eval32bf/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import DATA, by_id, critical, diagnose


def _lines(log: str) -> list[str]:
    return (DATA / log).read_text().splitlines()


def _healthy(d: dict) -> None:
    assert not critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert all(la.get("status") not in ("failed", "crashed") for la in d.get("launches") or []), d.get(
        "launches"
    )


def test_an_offline_traceback_cut_in_the_llms_admission_is_one_call_refused() -> None:
    """BF1 (005): an offline script's traceback through LLM.generate into LLM._validate_and_add_requests →
    self._add_request(, cut there. The LLM validates and hands each request to llm_engine.add_request, whose input
    processing refuses a request it cannot take with a ValueError: the caller's call refused before any step, not the
    engine failing. (The only real excerpt of this cut form in the sets and the stored threads found.)"""
    _healthy(diagnose("eval32bf/005.log"))


def test_a_frame_below_the_admission_or_the_engines_death_above_it_still_tells(tmp_path: Path) -> None:
    """The other side of BF1: the same traceback going on into a frame below the LLM's (V1's llm_engine.add_request,
    as eval32s 028 prints it) is read as before; the engine core's own 'died unexpectedly' record before it is the
    engine's death (eval32s 028's first line)."""
    frame = next(ln for ln in _lines("eval32s/028.log") if "vllm/v1/engine/llm_engine.py" in ln)
    log = tmp_path / "deeper.log"
    log.write_text("\n".join([*_lines("eval32bf/005.log"), frame]) + "\n")
    assert critical(diagnose(log)), "a frame below the admission is read as before"
    log = tmp_path / "died.log"
    log.write_text("\n".join([_lines("eval32s/028.log")[0], *_lines("eval32bf/005.log")]) + "\n")
    d = diagnose(log)
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]
