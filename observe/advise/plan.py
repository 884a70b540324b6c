"""The plan being built: one value per flag, alternatives side by side, notes where no flag helps.

Rules every lever obeys (enforced here, in `Plan.make`):
- never a flag already at the suggested value, nor a flag or value the detected vLLM lacks;
- one value per flag (conflicting pulls are resolved by the first lever that claims the flag);
- every recommendation names the findings it answers and, where the numbers allow, its effect;
- a change vLLM would refuse alone carries the one it needs, `coupled`, saying why (`couple`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from observe.flags import cmdline, known
from observe.model import AdviceNote, EngineConfig, Recommendation
from observe.rules.facts import Facts
from observe.settings import Settings


def current_value(cfg: EngineConfig, flag: str, gpu: str | None = None) -> tuple[Any, bool]:
    """(value in force, whether it is vLLM's default); (None, False) = unknown — as is every flag the
    log does not show when its ``non-default args`` line was cut (``known.assumed``)."""
    v = cmdline.in_force(cfg, flag)
    if v is not None:
        return v, False
    d = known.assumed(flag, cfg, gpu)
    return (d, True) if d is not None else (None, False)


@dataclass
class Advice:
    """A plan's answer: the recommendations and the notes (observe.advise.plan)."""

    recommendations: list[Recommendation] = field(default_factory=list)
    notes: list[AdviceNote] = field(default_factory=list)


@dataclass
class Plan:
    cfg: EngineConfig
    facts: Facts
    recs: dict[str, Recommendation] = field(default_factory=dict)
    notes: list[AdviceNote] = field(default_factory=list)
    settings: Settings = field(default_factory=Settings)  # the thresholds the findings were judged by
    kv_ids: list[str] = field(default_factory=list)  # the KV-pressure findings the KV plan answers

    def __post_init__(self) -> None:
        self.facts = Facts.of(self.facts)  # a mapping of the same names is accepted (see Facts.of)

    def current(self, flag: str) -> tuple[Any, bool]:
        """current_value, with the GPU's name where the engine config gives it."""
        return current_value(self.cfg, flag, known.gpu_name(self.cfg))

    def default(self, flag: str) -> Any:
        """vLLM's default for `flag` on this release and hardware (None where not known), whatever
        the value in force."""
        return known.default(flag, self.cfg, known.gpu_name(self.cfg))

    def taken(self, flag: str) -> bool:
        return flag in self.recs or any(a.flag == flag for r in self.recs.values() for a in r.alternatives)

    def make(
        self, flag: str, suggested: Any, reason: str, fids: Sequence[str], effect: str | None = None
    ) -> Recommendation | None:
        """A recommendation, or None when the flag/value is unsupported or already in force."""
        if not known.supported(flag, self.cfg) or not known.valid_value(flag, suggested, self.cfg):
            return None
        cur, is_default = self.current(flag)
        if cur is not None and cmdline.same_value(cur, suggested):
            return None
        return Recommendation(
            flag=flag,
            current=cur,
            suggested=suggested,
            reason=reason,
            finding_ids=tuple(dict.fromkeys(str(i) for i in fids)),
            expected_effect=effect,
            current_is_default=is_default,
        )

    def add(
        self, flag: str, suggested: Any, reason: str, fids: Sequence[str], effect: str | None = None
    ) -> bool:
        if self.taken(flag):
            return False
        r = self.make(flag, suggested, reason, fids, effect)
        if r is None:
            return False
        self.recs[flag] = r
        return True

    def add_any_of(self, options: Sequence[Recommendation | None]) -> Recommendation | None:
        """Alternatives, least disruptive first: the first is the plan, the rest ride on it."""
        opts = [o for o in options if o is not None and not self.taken(o.flag)]
        if not opts:
            return None
        first = replace(opts[0], alternatives=tuple(opts[1:]))
        self.recs[first.flag] = first
        return first

    def couple(self) -> None:
        """Tie the changes vLLM's own limits tie. vLLM refuses to start with
        max_num_batched_tokens < max_num_seqs (SchedulerConfig: "max_num_batched_tokens (B) must be
        greater than or equal to max_num_seqs (S)"): a --max-num-seqs raised past the token budget in
        force (the value in force, else vLLM's default) carries the budget raised to match; a budget
        the plan sets itself is raised to the new cap. An unknown budget is not guessed at."""
        seqs = self.recs.get("--max-num-seqs")
        if seqs is None or not isinstance(seqs.suggested, int):
            return
        own = self.recs.get("--max-num-batched-tokens")
        if own is not None:  # the plan moves the budget itself: never under the new sequence cap
            if isinstance(own.suggested, int) and own.suggested < seqs.suggested:
                self.recs[own.flag] = replace(
                    own,
                    suggested=seqs.suggested,
                    reason=f"{own.reason}; at least --max-num-seqs {seqs.suggested} (vLLM refuses less)",
                )
            return
        budget, _ = self.current("--max-num-batched-tokens")
        if budget is None or int(budget) >= seqs.suggested:
            return
        tie = self.make(
            "--max-num-batched-tokens",
            seqs.suggested,
            f"coupled with --max-num-seqs {seqs.suggested}: vLLM refuses to start with "
            f"max_num_batched_tokens ({int(budget):,}) < max_num_seqs ({seqs.suggested:,})",
            seqs.finding_ids,
            effect="the least budget vLLM accepts with that many sequences; nothing else changes",
        )
        if tie is not None:
            self.recs["--max-num-seqs"] = replace(seqs, coupled=(*seqs.coupled, tie))

    def note(self, fids: Sequence[str], text: str) -> None:
        fids = tuple(dict.fromkeys(str(i) for i in fids))
        if not any(n.finding_ids == fids and n.text == text for n in self.notes):
            self.notes.append(AdviceNote(finding_ids=fids, text=text))

    def answered(self) -> set[str]:
        out = {i for n in self.notes for i in n.finding_ids}
        for r in self.recs.values():
            out.update(r.finding_ids)
            for a in (*r.alternatives, *r.coupled):
                out.update(a.finding_ids)
        return out

    def effect(self, flag: str, new: Any) -> str | None:
        """Ask the capacity model what one change buys; None when it cannot say."""
        from observe import capacity
        from observe.errors import ConfigError

        req = self.facts.request_tokens
        try:
            w = capacity.what_if(
                self.cfg,
                {flag: new},
                request_tokens=int(round(req)) if req else None,
                gpu_total_gib=self.cfg.total_gpu_memory_gib,
            )
        except (
            ConfigError,
            ValueError,
            TypeError,
            ArithmeticError,
        ):  # the model declines: no number, no guess
            return None
        if not w.summary or "effect unknown" in w.summary:
            return None
        return w.summary + (" (estimated)" if w.basis == "estimated" else "")
