"""What the diagnose-JSON tests share: observe's JSON for real logs, and the flag values a diagnosis suggests,
wherever it puts them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from observe import pipeline, report

DATA = Path(__file__).parent / "data"


def diagnose(*logs: str | Path) -> dict:
    """observe's diagnose JSON for logs diagnosed together (a str: a path under tests/data)."""
    return report.to_dict(pipeline.diagnose_paths([DATA / p if isinstance(p, str) else p for p in logs]))


def suggestions(d: dict) -> dict[str, list]:
    """flag → every value the plan suggests: its recommendations, and any alternatives it offers."""
    out: dict[str, list] = {}

    def take(recs: Any) -> None:
        for r in recs or ():
            if isinstance(r, dict) and "flag" in r:
                out.setdefault(r["flag"], []).append(r.get("suggested"))
                take(r.get("alternatives"))
            elif isinstance(r, dict):
                take(r.get("recommendations") or r.get("changes"))
            elif isinstance(r, list):
                take(r)

    take(d.get("recommendations"))
    take(d.get("alternatives"))
    plan = d.get("plan")
    if isinstance(plan, dict):
        take(plan.get("recommendations"))
        take(plan.get("alternatives"))
    return out


def notes(d: dict, *ids: str) -> str:
    """The diagnosis's advice notes about any of the findings ids, joined into one text."""
    return " ".join(n["text"] for n in d["advice_notes"] if any(i in n["finding_ids"] for i in ids))


def critical(d: dict) -> list[dict]:
    """The diagnosis's critical findings."""
    return [f for f in d["findings"] if f["severity"] == "critical"]


def by_id(d: dict) -> dict[str, dict]:
    """The diagnosis's findings by id (the last of an id wins)."""
    return {f["id"]: f for f in d["findings"]}


def lines(log: str) -> list[str]:
    """The lines of a log under tests/data (``set/NNN.log``)."""
    return (DATA / log).read_text().splitlines()


def not_failing(d: dict) -> None:
    """Assert the diagnosis reports no failure: nothing critical, no failed start-up or crash, no launch failed or
    crashed."""
    assert not critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]
    assert all(la.get("status") not in ("failed", "crashed") for la in d.get("launches") or []), d.get(
        "launches"
    )


def record_message(log: str, needle: str) -> str:
    """The message of the first vLLM record holding ``needle`` in a log under tests/data (after its
    '[file:line] ' prefix)."""
    line = next(ln for ln in (DATA / log).read_text().splitlines() if needle in ln)
    return line.split("] ", 1)[1]
