"""Findings + engine config + capacity model → one coherent plan of vLLM flag changes. Pure.

`plan()` returns the recommendations (one value per flag; alternatives, any one of which has
the same effect, ride on the first) and the notes: a sentence for every warning or critical
finding no flag answers. Which lever answers which finding, and in what order, is the rules'
(observe/rules/: each rule names its levers); the levers live here — start.py and oom.py (the
engine did not start or crashed), rejected.py (a launch vLLM refused), load.py and sched.py (a
server under load); notes.py closes the plan; plan.py holds the rules every lever obeys;
known.py is what observe knows of vLLM's flags by version.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from observe import versions
from observe.advise.plan import Advice, Plan  # loaded before `def plan` below, which the name then means
from observe.advise.units import parse_bytes
from observe.flags import cmdline
from observe.flags.known import supported as flag_supported
from observe.model import AdviceNote, EngineConfig, Finding, Recommendation
from observe.rules.facts import Facts
from observe.settings import Settings

__all__ = [
    "Advice",
    "AdviceNote",
    "Plan",
    "Recommendation",
    "advise",
    "command_line",
    "flag_supported",
    "parse_bytes",
    "plan",
]


def plan(
    cfg: EngineConfig,
    findings: Sequence[Finding],
    *,
    facts: Facts | Mapping[str, Any] | None = None,
    settings: Settings | None = None,
) -> Advice:
    """The plan for these findings: every rule's levers in their rank, then a note for each warning
    or critical finding none answered (observe.rules.table.plan). ``facts``: the load seen (a Facts,
    or a mapping of its names); ``settings``: the thresholds the findings were judged by (the
    advice's own thresholds move with them)."""
    from observe.rules import table

    return table.plan(cfg, findings, facts=facts, settings=settings)


def advise(
    cfg: EngineConfig,
    findings: Sequence[Finding],
    *,
    facts: Facts | Mapping[str, Any] | None = None,
    settings: Settings | None = None,
) -> list[Recommendation]:
    """The recommendations of `plan` (the notes left out)."""
    return plan(cfg, findings, facts=facts, settings=settings).recommendations


def command_line(cfg: EngineConfig, recs: Sequence[Recommendation], *, drop: Sequence[str] = ()) -> str:
    """The whole `vllm serve MODEL ...` command with the recommendations applied (shell-quoted);
    of a recommendation's alternatives only the first (itself) is applied, with its coupled changes. Flags in ``drop`` (a
    value vLLM rejected, see rejected.rejected_flags) are left out unless a recommendation sets them."""
    flags = dict(cfg.flags)
    for flag in drop:
        flags.pop(flag, None)
    for r in recs:
        for x in (r, *r.coupled):  # a coupled change goes with the one vLLM refuses without it
            flags[x.flag] = x.suggested
    model = cmdline.model_name(flags, cfg.model)
    flags.pop("--model-tag", None)
    serve = versions.available(cfg.version_range, cmdline.SERVE_SINCE)
    # a release before `vllm serve`, or one not known to have it that the log shows launched as a module
    # (vLLM 0.32 warns the module form is deprecated: a release known to have `vllm serve` gets that)
    old = serve is False or (serve is None and cfg.launcher == "api_server")
    program = cmdline.API_SERVER if old else ("vllm", "serve")
    return cmdline.render_command(str(model) if model else None, flags, program)
