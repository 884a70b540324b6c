"""vLLM's start over Ray waiting for a placement group of GPUs the cluster does not have: a start-up stuck, not a crash.

With Ray as the executor and no placement group given, vLLM's ``initialize_ray_cluster`` (``vllm/executor/ray_utils.py``
in V0, ``vllm/v1/executor/ray_utils.py`` later; read in main and in a 0.7/0.8-era copy, whose lines 0.8.5's log
prints) asks Ray for one bundle of one device per
worker (tensor_parallel_size × pipeline_parallel_size, the specs list). When the whole cluster has fewer devices than
that it warns "The number of required GPUs exceeds the total number of available GPUs in the placement group." (the
line ends there; a placement group given by the caller that is too small raises at once instead, with "Required
number of devices: N"), and creates the group anyway, so that nodes joining later can fill it. ``_wait_until_pg_ready``
then waits, logging "Waiting for creating a placement group of specs for <s> seconds. specs=[…]. Check `ray status`
…" after 10, 30, 70, 150 … s (an interval doubling from 10 s), and gives up after ``PG_WAIT_TIMEOUT`` (1800 s) with
"ValueError: Cannot provide a placement group of[ requiring N GPUs] … within 1800 seconds" (``gave_up``: the same
failed start, a row of the error grammar). Nothing of the engine was built yet: no worker, no weights.

A wait can end well (a node joins, an autoscaler adds one — minutes on a cloud: the model loads next), so a waiting
line alone is not soon a failure. Read narrowly, after the warning (the cluster was short) and before the engine
served, each decided on the line that arrives (the sidecar's stream never ends, so no later line may be waited for):
a waiting line of ``PAGE_WAIT_S`` or more (the default back-off's 630 s line: ten minutes without the devices) is the
start stuck; so is a stop signal's line (Abseil's "*** SIGTERM received at time=…", ``hosted.STOP_SIGNALS``) once the
wait reached ``STUCK_WAIT_S`` (the 150 s line): the start was given up on while still waiting. Either is a failed start
(never a crash while serving, never a memory flag), told once per start. Pure: a line in, a Failure or None out
(``Wait`` keeps the state of one stream).
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState
from observe.parse.hosted import start_failed, stop_signal

__all__ = ["GAVE_UP", "GAVE_UP_LITERAL", "LITERALS", "PAGE_WAIT_S", "STUCK_WAIT_S", "Wait", "gave_up"]

_SHORT_LIT = "exceeds the total number of available"
_WAIT_LIT = "Waiting for creating a placement group of specs for"
#: what a line must hold for ``Wait.note`` to read it (``triggers``: the failure group), Abseil's signal line too
LITERALS: tuple[str, ...] = (_SHORT_LIT, _WAIT_LIT, " received at time=")
#: the seconds a waiting line must say, after the warning, for a stop signal then to end a stuck start (the 150 s line)
STUCK_WAIT_S = 120
#: the seconds a waiting line must say, after the warning, to be a stuck start by itself (the 630 s line: an
#: autoscaler adding a node takes minutes, not ten)
PAGE_WAIT_S = 600
#: initialize_ray_cluster's warning (the device key: GPU, TPU, …), the message ending there
_SHORT = re.compile(
    r"The number of required (?P<dev>\w+?)s exceeds the total number of available (?P=dev)s in the placement "
    r"group\.\s*$"
)
_WAIT = re.compile(re.escape(_WAIT_LIT) + r" (?P<secs>\d+) seconds\. specs=(?P<specs>\[[^\]]*\])")
_CAUSE = (
    "vLLM asked Ray for a placement group of {n}{dev}s (one per worker: tensor_parallel_size × "
    "pipeline_parallel_size) while the Ray cluster has fewer {dev}s in all ('The number of required {dev}s exceeds "
    "the total number of available {dev}s', ray_utils.py initialize_ray_cluster), and has waited {secs} s for them "
    "(_wait_until_pg_ready; it gives up after 1800 s with 'Cannot provide a placement group …'): the start is stuck "
    "before any worker or weight, not a crash and not memory"
)
_FIX = (
    "run ray status and ray list nodes: join the other nodes to the Ray cluster or make the {dev}s visible to Ray "
    "(CUDA_VISIBLE_DEVICES, ray start --num-gpus), or lower --tensor-parallel-size / --pipeline-parallel-size to "
    "the {dev}s Ray has; no memory flag is the lever"
)

#: the wait's end (``_wait_until_pg_ready``'s ValueError; later releases name the count: "requiring 4.0 GPUs")
GAVE_UP_LITERAL = "Cannot provide a placement group"
GAVE_UP = (
    r"Cannot provide a placement group (?:of |requiring (?P<n>\d+)(?:\.0)? (?P<dev>\w+?)s )?.*?within "
    r"(?P<secs>\d+) sec"
)
_GAVE_UP_CAUSE = (
    "vLLM waited {secs} s for Ray to place one {dev} per worker (tensor_parallel_size × pipeline_parallel_size{n}) and "
    "gave up (_wait_until_pg_ready): the Ray cluster does not have the {dev}s, the start failed before any worker or "
    "weight — not a crash, not memory"
)


def gave_up(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The failed start the wait's own exception tells (a failure row, ``failrows``); before serving only."""
    if run.stats_seen:
        return None
    dev = m.group("dev") or "GPU"
    n = f": {m.group('n')}" if m.group("n") else ""
    cause = _GAVE_UP_CAUSE.format(secs=m.group("secs"), dev=dev, n=n)
    f = start_failed(msg.strip(), cause, ("ray", "placement_group_wait"))
    return Failure(FailureKind.ERROR_LINE, {**f.details, "fix": _FIX.format(dev=dev)}, f.fatal, f.key)


class Wait:
    """The placement-group wait of one stream's start: the warning seen, then the waiting lines (told once)."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """A (re)start: the wait of an earlier start no longer applies."""
        self._dev: str | None = None  # the device key of initialize_ray_cluster's warning, once seen
        self._waited: tuple[int, int] | None = None  # (seconds, devices) of the last waiting line after it
        self._told = False

    def note(self, text: str, run: RunState) -> Failure | None:
        """The stuck start, on the waiting line that tells it; None for any other line (and after serving or a
        requested stop, or once told)."""
        if self._told or run.stats_seen or run.requested:
            return None
        if (s := _SHORT.search(text)) is not None:
            self._dev = s.group("dev")
            return None
        if self._dev is None:
            return None
        if (m := _WAIT.search(text)) is not None:
            self._waited = (int(m.group("secs")), m.group("specs").count(f"'{self._dev}':"))
            if self._waited[0] < PAGE_WAIT_S:
                return None
        elif self._waited is None or self._waited[0] < STUCK_WAIT_S or stop_signal(text) is None:
            return None
        self._told = True
        dev, (secs, n) = self._dev, self._waited
        cause = _CAUSE.format(n=f"{n} " if n else "", dev=dev, secs=secs)
        told = text.strip()
        if m is None:
            cause += f"; then the process was stopped ({stop_signal(text)}) while still waiting"
            told += f" (the start stopped after waiting {secs} s for a placement group of {n or '?'} {dev}s)"
        f = start_failed(told, cause, ("ray", "placement_group_wait"))
        d = {**f.details, "fix": _FIX.format(dev=dev), "devices": n or None, "waited_s": secs}
        return Failure(FailureKind.ERROR_LINE, d, f.fatal, f.key)
