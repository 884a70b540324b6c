"""What the diagnose-JSON tests share: the flag values a diagnosis suggests, wherever it puts them."""

from __future__ import annotations

from typing import Any


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
