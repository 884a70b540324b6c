"""Speculative decoding: drafts mostly rejected. Pure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from observe.findingids import FindingId
from observe.model import Finding, SpecDecodeSample
from observe.rules.base import Doc, Rule, Section, State
from observe.rules.context import Context
from observe.rules.context import where as _where

if TYPE_CHECKING:
    from observe.settings import Settings


@dataclass
class Acceptance(State[SpecDecodeSample]):
    """The spec-decode lines' draft acceptance: the rates summed (each line's rate, else accepted /
    drafted), their lowest, the accepted and drafted tokens, the last mean acceptance length."""

    takes = SpecDecodeSample
    rate_sum: float = 0.0
    samples: int = 0
    lowest: float | None = None
    accepted: int = 0
    drafted: int = 0
    mean_len_last: float | None = None

    def add(self, ev: SpecDecodeSample, settings: Settings) -> None:
        rate = ev.acceptance_rate_pct
        if rate is None and ev.accepted_tokens is not None and ev.draft_tokens:
            rate = 100.0 * ev.accepted_tokens / ev.draft_tokens
        if rate is not None:
            self.rate_sum += rate
            self.samples += 1
            self.lowest = rate if self.lowest is None else min(self.lowest, rate)
        if ev.accepted_tokens is not None and ev.draft_tokens is not None:
            self.accepted += ev.accepted_tokens
            self.drafted += ev.draft_tokens
        if ev.mean_acceptance_length is not None:
            self.mean_len_last = ev.mean_acceptance_length


def spec_decode_acceptance(c: Context) -> list[Finding]:
    """Speculative decoding whose drafts are mostly rejected: mean acceptance (the lines' acceptance
    rate, else accepted / drafted tokens) below Settings.low_spec_acceptance_pct. Data:
    mean_acceptance_pct, min_acceptance_pct, samples, accepted_tokens, draft_tokens,
    mean_acceptance_length (the last line's), threshold_pct."""
    s, a = c.summary, c.state(Acceptance)
    if not a.samples:
        return []
    mean = a.rate_sum / a.samples
    if a.drafted:
        mean = 100.0 * a.accepted / a.drafted
    if mean >= c.settings.low_spec_acceptance_pct:
        return []
    return [
        Finding(
            id=FindingId.SPEC_DECODE_LOW_ACCEPTANCE,
            severity="warning",
            title="Speculative decoding: most draft tokens are rejected",
            evidence=(
                f"draft acceptance {mean:.1f}% over {a.samples} spec-decode lines, below "
                f"{c.settings.low_spec_acceptance_pct:g}%: the draft work costs more than it saves"
            ),
            where=_where(s),
            data={
                "mean_acceptance_pct": round(mean, 2),
                "min_acceptance_pct": a.lowest,
                "samples": a.samples,
                "accepted_tokens": a.accepted or None,
                "draft_tokens": a.drafted or None,
                "mean_acceptance_length": a.mean_len_last,
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
    states=(Acceptance,),
)
