"""A launch vLLM rejected while validating its arguments or config: quote vLLM's reason and
recommend the value that passes its check (any one of the levers makes the launch pass). Where the
reason gives no number to pass, say so; the pasted command then leaves the rejected flag out
(vLLM's default applies) instead of repeating a value vLLM just refused. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

from observe.advise.plan import Plan
from observe.findingids import FindingId
from observe.flags import known
from observe.model import Finding, Recommendation

_Lever = Callable[[Plan, Finding, re.Match[str]], Sequence[Recommendation | None]]


def _said(f: Finding) -> str:
    return f'vLLM refused the launch: "{f.data.get("text") or f.evidence}"'


def _tokens_below_seqs(p: Plan, f: Finding, m: re.Match[str]) -> Sequence[Recommendation | None]:
    tokens, seqs = int(m.group(1)), int(m.group(2))
    # the least value that passes would start an engine that prefills a few tokens a step: offer the
    # release's own default where it passes too (and is known), else that least value
    d = known.default("--max-num-batched-tokens", p.cfg, known.gpu_name(p.cfg))
    good = d if isinstance(d, int) and not isinstance(d, bool) and d >= seqs else seqs
    why = f"vLLM's default for this release, {good:,}" if good != seqs else f"{good:,}"
    return [
        p.make(
            "--max-num-batched-tokens",
            good,
            _said(f),
            [f.id],
            effect=f"passes vLLM's check (max_num_batched_tokens {why} ≥ max_num_seqs {seqs:,}): the engine starts",
        ),
        p.make(
            "--max-num-seqs",
            tokens,
            _said(f),
            [f.id],
            effect=f"passes vLLM's check (max_num_seqs {tokens:,} ≤ max_num_batched_tokens {tokens:,}): the engine "
            f"starts with at most {tokens:,} sequences a step",
        ),
    ]


def _tokens_below_len(p: Plan, f: Finding, m: re.Match[str]) -> Sequence[Recommendation | None]:
    tokens, length = int(m.group(1)), int(m.group(2))
    return [
        p.make(
            "--max-num-batched-tokens",
            length,
            _said(f),
            [f.id],
            effect=f"passes vLLM's check (max_num_batched_tokens {length:,} ≥ max_model_len {length:,}): a whole "
            "prompt fits one step",
        ),
        p.make(
            "--enable-chunked-prefill",
            True,
            _said(f),
            [f.id],
            effect="passes vLLM's check: long prompts are prefilled in chunks of max_num_batched_tokens",
        ),
        p.make(
            "--max-model-len",
            tokens,
            _said(f),
            [f.id],
            effect=f"passes vLLM's check; requests longer than {tokens:,} tokens are rejected",
        ),
    ]


# vLLM's config checks with numbers in their reason (vllm/config/scheduler.py, SchedulerConfig)
_RULES: tuple[tuple[re.Pattern[str], _Lever], ...] = (
    (
        re.compile(
            r"max_num_batched_tokens \((\d+)\) must be greater than or equal to max_num_seqs \((\d+)\)"
        ),
        _tokens_below_seqs,
    ),
    (
        re.compile(r"max_num_batched_tokens \((\d+)\) is smaller than max_model_len \((\d+)\)"),
        _tokens_below_len,
    ),
)


def launch_rejected(p: Plan, f: Finding) -> None:
    text = str(f.data.get("text") or f.evidence or "")
    for rx, lever in _RULES:
        m = rx.search(text)
        if m and p.add_any_of(lever(p, f, m)) is not None:
            return
    flag, value = f.data.get("flag"), f.data.get("value")
    if flag and p.taken(str(flag)):
        p.note([f.id], f"{_said(f)}; the {flag} change above is a value it accepts")
        return
    shown: Any = f" {value}" if value is not None else ""
    p.note(
        [f.id],
        _said(f)
        + (
            f"; change {flag}{shown} to a value that passes this check (the command below leaves {flag} out, "
            "so vLLM's default applies)"
            if flag
            else "; correct the argument it names and launch again"
        ),
    )


def rejected_flags(findings: Sequence[Finding]) -> list[str]:
    """Flags whose given value vLLM rejected: the pasted command must not repeat them."""
    return [str(f.data["flag"]) for f in findings if f.id == FindingId.LAUNCH_REJECTED and f.data.get("flag")]
