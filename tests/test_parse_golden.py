"""Drift check: what the Parser reads off every real log in tests/data equals its golden event file.

tests/data/logs/*.events.jsonl were written by tools/regen_events.py (which also holds the
serialisation used here). A failure shows the first differing lines; if the change is intended,
regenerate with `python3 tools/regen_events.py` and review the diff.
"""

from __future__ import annotations

import difflib
import importlib.util
from pathlib import Path

import pytest

_TOOL = Path(__file__).resolve().parent.parent / "tools" / "regen_events.py"
_spec = importlib.util.spec_from_file_location("regen_events", _TOOL)
assert _spec is not None and _spec.loader is not None
regen = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(regen)

LOGS = regen.logs()


def test_every_golden_file_has_its_log():
    golden = {g.name for _, g in LOGS}
    on_disk = {p.name for p in regen.GOLDEN.glob("*.events.jsonl")}
    assert on_disk == golden
    assert len(LOGS) >= 36


@pytest.mark.parametrize("log,golden", LOGS, ids=lambda p: p.stem)
def test_events_match_golden(log: Path, golden: Path):
    want = golden.read_text(encoding="utf-8").splitlines()
    got = regen.event_lines(log)
    if got != want:
        diff = difflib.unified_diff(
            want, got, f"{golden.name} (golden)", f"{log.name} (parsed now)", lineterm="", n=1
        )
        text = "\n".join(list(diff)[:60])
        pytest.fail(f"events of {log.name} drifted from {golden.name}:\n{text}", pytrace=False)
