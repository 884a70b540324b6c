"""What every failure reader of the parser returns and what it knows: :class:`Failure` (the kind, its
details, whether it is fatal, the key that deduplicates it re-logged), :class:`RunState` (how far the run
has got, as far as failures depend on it), and :func:`phase` (that state as the phase a failure reports)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

from observe.failures.kinds import FailureKind


@dataclass(frozen=True, slots=True)
class Failure:
    kind: FailureKind
    details: dict[str, Any]
    fatal: bool
    key: tuple[Any, ...] | None  # what identifies the same failure re-logged (None: never deduplicated)


class RunState(NamedTuple):
    """What the parser knows about the run so far, as far as failures depend on it."""

    shutdown: bool  # a shutdown has begun
    stats_seen: bool  # the engine has served (a stats line was read): failures are at runtime
    requested: bool = False  # the shutdown was asked for (a signal, Ctrl-C, the API server stopping)
    vllm_seen: bool = (
        False  # a line vLLM's logger wrote (its prefix) was read: vLLM runs in this stream's process
    )
    after_5xx: bool = (
        False  # the message just before this one was an access line answered 5xx (parse.errexit)
    )
    loading: bool = (
        False  # vLLM's start-up loads the weights or profiles: no KV-cache size line since (parse.mainexit)
    )


def serving_or(run: RunState, before: str) -> str:
    """The phase a failure's line is in: "serving" once a stats line was seen, else `before` (what each reader
    can say of the lines before the first stats line: "startup" where only a start reaches it, "unknown" where a
    cut excerpt's error could be either)."""
    return "serving" if run.stats_seen else before


def phase(run: RunState) -> str:
    """Where the run is, as the parser knows it: "shutdown", "serving" or "startup" (the diagnosis
    refines "startup" with the start-up phase facts: loading, profiling)."""
    if run.shutdown:
        return "shutdown"
    return serving_or(run, "startup")
