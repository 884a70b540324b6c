"""What the blind evaluations share (tests/test_eval32.py, tests/test_eval32b.py, tests/test_eval32c.py):
each log's judgements in tests/data/<set>/labels.json, written before observe ran, observe's diagnose JSON
for a log, and the check that says whether that JSON meets one judgement."""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from observe import pipeline, report
from observe.errors import InputError
from tests.diagnosekit import suggestions

DATA = Path(__file__).parent / "data"


def labels(name: str) -> dict[str, Any]:
    """The set's logs → {source, version, failing, judgements}."""
    return json.loads((DATA / name / "labels.json").read_text())["logs"]


@cache
def diagnosis(name: str, log: str) -> dict:
    """observe's JSON for one log of a set; a log it refuses (the CLI's one-line error) has no findings,
    stats or engine."""
    try:
        return report.to_dict(pipeline.diagnose_paths([DATA / name / f"{log}.log"]))
    except InputError as e:
        return {"findings": [], "stats": {}, "engine": {}, "refused": str(e)}


def check_cover(name: str, misses: dict[tuple[str, int], str], count: int = 30) -> None:
    """Every log of the set has 2-4 judgements, there are `count` (30 unless the set says), and every known miss
    names one of them."""
    logs = labels(name)
    assert sorted(p.stem for p in (DATA / name).glob("*.log")) == sorted(logs) and len(logs) == count
    assert all(2 <= len(e["judgements"]) <= 4 for e in logs.values())
    assert set(misses) <= {(k, n) for k, e in logs.items() for n in range(len(e["judgements"]))}


def failing(d: dict) -> bool:
    """What 'reported as failing' means in labels.json: a critical finding, or a failed launch."""
    crit = any(f.get("severity") == "critical" for f in d.get("findings", []))
    return crit or any(la.get("status") == "failed" for la in d.get("launches") or [])


def _finding(d: dict, c: dict) -> bool:
    hits = [f for f in d.get("findings", []) if f["id"] == c["finding"]]
    if "severity" in c:
        hits = [f for f in hits if f.get("severity") == c["severity"]]
    for key, want in (c.get("data") or {}).items():
        hits = [f for f in hits if (f.get("data") or {}).get(key) == want]
    for key, bad in (c.get("data_not") or {}).items():
        hits = [f for f in hits if (f.get("data") or {}).get(key) != bad]
    return bool(hits) == c["present"]


def _flag(d: dict, c: dict) -> bool:
    vals = suggestions(d).get(c["flag"], [])
    if not c["suggested"]:
        return not vals
    if "at_most" in c:
        vals = [v for v in vals if isinstance(v, int | float) and v <= c["at_most"]]
    return bool(vals)


def holds(d: dict, c: dict) -> bool:
    """Whether observe's JSON meets one judgement's check."""
    if "finding" in c:
        return _finding(d, c)
    if "finding_any" in c:
        return any(f["id"] in c["finding_any"] for f in d.get("findings", []))
    if "failing" in c:
        return failing(d) == c["failing"]
    if "flag" in c:
        return _flag(d, c)
    if "flag_any" in c:
        return any(f in suggestions(d) for f in c["flag_any"])
    if "command_not_startswith" in c:
        return not (d.get("command") or "").startswith(c["command_not_startswith"])
    if "stats" in c:
        return bool(d["stats"].get(c["stats"]) == c["equals"])
    if "engine" in c:
        return bool(d["engine"].get(c["engine"]) == c["equals"])
    raise ValueError(f"unknown check {c}")


def cases(logs: dict[str, Any], misses: dict[tuple[str, int], str]) -> list:
    """One pytest case per judgement; a known miss is a strict xfail naming its class."""
    return [
        pytest.param(
            log,
            i,
            id=f"{log}-{i}",
            marks=[pytest.mark.xfail(strict=True, reason=misses[(log, i)])] if (log, i) in misses else [],
        )
        for log, entry in logs.items()
        for i in range(len(entry["judgements"]))
    ]


def set_tests(
    name: str, misses: dict[tuple[str, int], str], count: int = 30
) -> tuple[Callable[..., None], Callable[[], None]]:
    """The two tests every blind set runs, for its module to bind as ``test_judgement`` and
    ``test_labels_cover_every_log``: each judgement of labels.json on observe's JSON (a known miss a strict
    xfail naming its class), and that the labels cover the set's `count` logs (30 unless the set says)."""
    logs = labels(name)

    @pytest.mark.parametrize(("log", "i"), cases(logs, misses))
    def judgement(log: str, i: int) -> None:
        j = logs[log]["judgements"][i]
        assert holds(diagnosis(name, log), j["check"]), j["text"]

    def cover() -> None:
        check_cover(name, misses, count)

    return judgement, cover
