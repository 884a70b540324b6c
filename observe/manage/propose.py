"""What observe would change: one launch's (or one running vLLM's) diagnosis turned into flag
changes checked against the installed vLLM, and the new command. `observe run` proposes for the
launch it supervises, `observe recommend` for a vLLM it did not launch (two /metrics reads and
its logs); both print the same `Proposal` (report.proposal, report.jsonout)."""

from __future__ import annotations

import glob
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from observe import advise, pipeline
from observe.errors import ObserveError, TargetError
from observe.flags.installed import VllmFlags, installed_flags
from observe.manage.apply import apply, checked_recommendations
from observe.manage.launcher import save_metrics
from observe.manage.spec import LaunchSpec
from observe.metrics import scrape
from observe.model import Recommendation


@dataclass
class Proposal:
    """What observe would change, checked against the installed vLLM (`flags`; None: unchecked)."""

    before: LaunchSpec | None  # None: a vLLM observe did not launch (`recommend`)
    after: LaunchSpec | None
    accepted: list[Recommendation]
    rejected: list[tuple[Recommendation, str]]
    findings: list[Any]
    folder: Path
    command: str | None = None  # the new command line, when a change is accepted
    flags: VllmFlags | None = None


def propose(
    spec: LaunchSpec | None,
    folder: Path,
    flags: VllmFlags | None,
    *,
    logs: Sequence[Path] = (),
    metrics: Sequence[Path] = (),
) -> Proposal:
    """Diagnose one launch folder (log + snapshots), or `logs` with the `metrics` snapshots, and
    turn its recommendations into a new command: `spec`'s with the accepted changes, or (no spec)
    the command the log shows with them."""
    diag = pipeline.diagnose_paths(list(logs), list(metrics)) if logs else pipeline.diagnose_paths([folder])
    inst = max(diag.instances, key=lambda i: sum(s.get("parsed_lines") or 0 for s in i.sources), default=None)
    recs = list(inst.recommendations) if inst else []
    ok, bad = checked_recommendations(spec, recs, flags)
    after = apply(spec, ok) if spec is not None else None
    if after is not None:
        command = after.command() if ok else None
    else:
        command = advise.command_line(inst.config, ok) if inst and ok and inst.config.flags else None
    return Proposal(
        before=spec,
        after=after,
        accepted=ok,
        rejected=bad,
        findings=list(inst.findings) if inst else [],
        folder=folder,
        command=command,
        flags=flags,
    )


def propose_for_url(
    vllm_url: str,
    logs: Sequence[str] = (),
    *,
    interval: float = 10.0,
    vllm_python: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Proposal:
    """A proposal for a running vLLM observe did not launch: /metrics read twice, `interval`
    seconds apart (rates need two), with its logs (globs) if given; flags checked against the vLLM
    of `vllm_python` (default: the one importable here, if any)."""
    paths = sorted({Path(p) for g in logs for p in glob.glob(g)})
    if logs and not paths:
        raise ObserveError(f"no log file matches {' '.join(logs)}")
    with tempfile.TemporaryDirectory(prefix="observe-recommend-") as tmp:
        snaps = []
        for k in (1, 2):
            if k == 2:
                sleep(max(0.0, interval))
            try:
                snaps.append(save_metrics(scrape.base_url(vllm_url), Path(tmp) / f"metrics-{k}.txt"))
            except (OSError, ValueError) as e:  # URLError, refused, timeout, bad URL
                reason = getattr(e, "reason", None) or getattr(e, "strerror", None) or e
                raise TargetError(f"cannot read {scrape.metrics_url(vllm_url)}: {reason}") from None
        flags = installed_flags(vllm_python) if vllm_python else installed_flags()
        return propose(None, Path(tmp), flags, logs=paths, metrics=snaps)
