"""Issue 32, class M: argparse's usage block cut before its "error:" line (tests/data/eval32c/008, 009: 0.3.3's
`vllm.entrypoints.api_server`, a V1 `api_server.py` after the platform line) is still a refused launch,
and the report says what would name the flag (the cut error line) instead of guessing one; the logs
that keep their error line (eval32b/016, eval32c/010, two ramalama excerpts) keep the flag it names.
"""

from __future__ import annotations

import pytest

from tests.evalkit import DATA, diagnosis


def _rejected(d: dict) -> list[dict]:
    return [f for f in d["findings"] if f["id"] == "launch_rejected"]


@pytest.mark.parametrize("log", ["008", "009"])
def test_a_usage_block_cut_before_its_error_line_is_a_refused_launch(log: str) -> None:
    d = diagnosis("eval32c", log)
    (f,) = _rejected(d)
    assert f["severity"] == "critical" and f["data"]["flag"] is None and f["data"]["source"] == "argparse"
    notes = " ".join(str(n) for n in d["advice_notes"]) + " ".join(str(r) for r in d["recommendations"])
    assert "error: …" in notes and "decides which flag" in notes
    assert not any(r.get("flag") for r in d["recommendations"] if isinstance(r, dict))


@pytest.mark.parametrize(
    ("name", "log", "flag"),
    [
        ("eval32b", "016", "--omni"),
        ("eval32c", "010", "-u"),
        ("excerpts", "unknown-flag-temperature-ramalama-758", "--temperature"),
        ("excerpts", "unknown-flag-temperature-ramalama-2635", "--temperature"),
    ],
)
def test_the_error_line_after_the_usage_block_still_names_the_flag(name: str, log: str, flag: str) -> None:
    text = (DATA / name / f"{log}.log").read_text(encoding="utf-8")
    assert "usage: " in text and ": error: " in text  # both the block and its error line are there
    (f,) = _rejected(diagnosis(name, log))
    assert (
        f["data"]["source"] == "argparse" and f["data"]["text"] and not f["data"]["text"].startswith("usage:")
    )
    assert f["data"]["flag"] == flag
