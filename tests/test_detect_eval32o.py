"""The misses of issue 32's blind set eval32o (tests/data/eval32o/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def _errors(d: dict) -> list[dict]:
    return [f for f in d["findings"] if f["id"] in ("engine_error", "engine_startup_failed")]


def test_an_mqllmengine_loop_dying_under_its_frames_is_while_serving() -> None:
    """BA (006: V0 ~0.6.2, 'engine.py:157] RuntimeError: Loading lora … failed', 'The above exception was the direct
    cause …', then frames 'in start' → 'self.run_engine_loop()' → 'in run_engine_loop' → 'self.engine_step()'):
    run_engine_loop runs only on an engine already built, so the exception of its record is a death while serving,
    not a failed start-up, though no stats line came before it."""
    errs = _errors(_diagnose(DATA / "eval32o" / "006.log"))
    assert [(f["id"], f["severity"], f["data"]["phase"]) for f in errs] == [
        ("engine_error", "critical", "serving")
    ]
    assert "Loading lora" in errs[0]["data"]["message"]


def test_mqllmengine_starts_repr_record_is_while_serving() -> None:
    """BA (007: V0 ~0.6.3, 'engine.py:157] RuntimeError('Error in model execution: Loading lora … failed')' then the
    traceback of a LoRA adapter's load, no loop frame in the paste): MQLLMEngine.start logs
    ``logger.exception(repr(e))`` only when its loops raised, after run_mp_engine built the engine (0.6.2 line 157,
    0.6.3 160, 0.10.2 176): a death while serving, the root cause the ValueError."""
    errs = _errors(_diagnose(DATA / "eval32o" / "007.log"))
    assert [(f["id"], f["data"]["phase"]) for f in errs] == [("engine_error", "serving")]
    assert errs[0]["data"]["type"] == "ValueError"


def test_run_mp_engines_record_of_a_failed_build_stays_a_start_up_failure() -> None:
    """The other engine.py record (008: 0.6.x run_mp_engine's 'engine.py:366]' with an empty message, then the bare
    traceback into the executor's construction) logs a failed build (``logger.exception(e)``: str, not repr): it
    stays a start-up failure."""
    errs = _errors(_diagnose(DATA / "eval32o" / "008.log"))
    assert errs and all(f["data"]["phase"] != "serving" for f in errs), errs
    assert errs[0]["id"] == "engine_startup_failed"
