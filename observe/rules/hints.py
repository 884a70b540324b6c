"""vLLM's own suggestions: the flag changes its warnings and errors name. Pure."""

from __future__ import annotations

from observe.findingids import FindingId
from observe.model import Finding
from observe.rules.base import Doc, Rule, Section
from observe.rules.context import Context


def vllm_hints(c: Context) -> list[Finding]:
    """Changes vLLM itself suggested in its warnings and errors. Data: hints [{flag, direction
    ("up" | "down" | "set"), value (the number vLLM gave, else None), text, where}]."""
    hs = c.summary.hints
    if not hs:
        return []
    words = ", ".join(
        f"{h['flag']} {'↑' if h['direction'] == 'up' else '↓' if h['direction'] == 'down' else '='}"
        + (f" {h['value']}" if h["value"] is not None else "")
        for h in hs[:6]
    )
    return [
        Finding(
            id=FindingId.VLLM_HINTS,
            severity="info",
            title="vLLM suggested flag changes",
            evidence=f"vLLM's own messages suggest: {words}",
            where=hs[0].get("where"),
            data={"hints": [dict(h) for h in hs]},
        )
    ]


# ---------------------------------------------------------------- the rules

VLLM_HINTS = Rule(
    family="vLLM's hints",
    detect=vllm_hints,
    docs=(
        Doc(
            FindingId.VLLM_HINTS,
            "info",
            Section.INFO,
            evidence=(
                "flag changes vLLM's own warnings and errors suggest. Data: hints [{flag, "
                "direction, value, text, where}]"
            ),
            advice=(
                "shown only beside a warning or critical finding; on a healthy log the hints stay"
                " evidence (`events.hints`), never the worst finding"
            ),
        ),
    ),
    needs=("hints",),
    quiet_alone=True,
)
