"""Speculative decoding: drafts mostly rejected. Pure."""

from __future__ import annotations

from observe.findingids import FindingId
from observe.model import Finding
from observe.rules.base import Doc, Rule, Section
from observe.rules.context import Context
from observe.rules.context import where as _where


def spec_decode_acceptance(c: Context) -> list[Finding]:
    """Speculative decoding whose drafts are mostly rejected: mean acceptance (the lines' acceptance
    rate, else accepted / drafted tokens) below Settings.low_spec_acceptance_pct. Data:
    mean_acceptance_pct, min_acceptance_pct, samples, accepted_tokens, draft_tokens,
    mean_acceptance_length (the last line's), threshold_pct."""
    s = c.summary
    if not s.spec_acceptance_samples:
        return []
    mean = s.spec_acceptance_sum / s.spec_acceptance_samples
    if s.spec_draft_tokens:
        mean = 100.0 * s.spec_accepted_tokens / s.spec_draft_tokens
    if mean >= c.settings.low_spec_acceptance_pct:
        return []
    return [
        Finding(
            id=FindingId.SPEC_DECODE_LOW_ACCEPTANCE,
            severity="warning",
            title="Speculative decoding: most draft tokens are rejected",
            evidence=(
                f"draft acceptance {mean:.1f}% over {s.spec_acceptance_samples} spec-decode lines, below "
                f"{c.settings.low_spec_acceptance_pct:g}%: the draft work costs more than it saves"
            ),
            where=_where(s),
            data={
                "mean_acceptance_pct": round(mean, 2),
                "min_acceptance_pct": s.spec_acceptance_min,
                "samples": s.spec_acceptance_samples,
                "accepted_tokens": s.spec_accepted_tokens or None,
                "draft_tokens": s.spec_draft_tokens or None,
                "mean_acceptance_length": s.spec_mean_len_last,
                "threshold_pct": c.settings.low_spec_acceptance_pct,
            },
        )
    ]


# ---------------------------------------------------------------- the rules

LOW_ACCEPTANCE = Rule(
    family="speculative decoding",
    detect=spec_decode_acceptance,
    docs=(
        Doc(
            FindingId.SPEC_DECODE_LOW_ACCEPTANCE,
            "warning",
            Section.BATCH,
            evidence=(
                "mean draft acceptance of speculative decoding (the lines' acceptance rate, else "
                "accepted / drafted tokens) below `low_spec_acceptance_pct`. Data: "
                "mean_acceptance_pct, min_acceptance_pct, samples, accepted_tokens, draft_tokens,"
                " mean_acceptance_length, threshold_pct"
            ),
            advice=(
                "a note: a draft model closer to the target, fewer speculative tokens "
                "(`num_speculative_tokens` in `--speculative-config`), or speculative decoding "
                "off"
            ),
            versions="the spec-decode metrics lines",
            note=(
                "few draft tokens are accepted: use a draft model closer to the target, or fewer "
                "speculative tokens (num_speculative_tokens in --speculative-config), or turn "
                "speculative decoding off"
            ),
        ),
    ),
    settings=("low_spec_acceptance_pct",),
    needs=("spec-decode lines",),
)
