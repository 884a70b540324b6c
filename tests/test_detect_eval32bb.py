"""The classes of the blind set eval32bb fixed after its measurement (tests/data/eval32bb/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.errors import InputError
from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_the_dumps_first_record_behind_its_bracketed_location_alone_is_the_engines_failed_step() -> None:
    """BB2 (006): '[dump_input.py:72] Dumping input data for V1 LLM engine (v0.14.0) with config: …', its level,
    timestamp and process prefix lost in the paste. dump_input.py logs it only when the engine core's model execution
    raised while serving: the engine's failed step, never a failed start-up. (The only real excerpt of the bare form.)"""
    d = diagnose("eval32bb/006.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert by_id(d)["engine_error"]["title"].endswith("(serving)"), d["findings"]


def test_another_bracketed_location_or_text_is_not_the_dump(tmp_path: Path) -> None:
    """The other side of BB2: the same bracket before other words, or the dump's words behind another file's bracket,
    is nobody's known record (refused)."""
    line = (DATA / "eval32bb/006.log").read_text().splitlines()[0]
    for text in (
        line.replace("Dumping input data for V1 LLM engine", "Dumping input data for my engine"),
        line.replace("[dump_input.py:72]", "[my_dump.py:72]"),
    ):
        log = tmp_path / "x.log"
        log.write_text(text + "\n")
        try:
            d = diagnose(log)
        except InputError:
            continue
        assert not critical(d), (text[:60], d["findings"])
