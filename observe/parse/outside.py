"""Deaths of a vLLM process that another program tells: Ray's memory monitor and PyTorch's NCCL watchdog.

Their lines are not vLLM's records (no level, no logger), so they reach the parser as raw lines:

- Ray's memory monitor kills a task or actor when the node's host memory runs low, and says where to
  read about it ("Refer to the documentation on how to address the out of memory issue:
  https://docs.ray.io/en/latest/ray-core/scheduling/ray-oom-prevention.html", Ray 2.x ``memory_monitor``),
  above a table of the largest users ("<pid> <GB> ray::LLMRayActor" — vLLM's actors under OpenRLHF and
  its kin hold the weights sleep mode offloaded to host memory). Host RAM, not the GPU: no GPU flag helps.
- PyTorch's NCCL watchdog (``ProcessGroupNCCL.cpp``, torch 2.2 →) terminates the process when a collective
  hangs ("ProcessGroupNCCL's watchdog got stuck for 600 seconds …", "Heartbeat monitor timed out! Process
  will be terminated …") or times out ("Watchdog caught collective operation timeout"): a tensor-parallel
  rank waits for a peer that died or hangs.

Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

from observe.failures.kinds import FailureKind
from observe.parse.failures import Failure, RunState

#: literal → (form, cause)
_DEATHS: dict[str, tuple[str, str]] = {
    "ray-oom-prevention": (
        "host_oom_killed",
        "Ray's memory monitor killed a task: the node's host memory (RAM) ran low, not the GPU's "
        "(vLLM's actors hold host memory for sleep mode's offloaded weights and the CPU swap space)",
    ),
    "watchdog got stuck for": (
        "nccl_watchdog",
        "PyTorch's NCCL watchdog terminated the process: a collective hung (a tensor-parallel rank waits "
        "for a peer that died or hangs)",
    ),
    "Heartbeat monitor timed out": (
        "nccl_watchdog",
        "PyTorch's NCCL heartbeat monitor terminated the process: a collective hung (a tensor-parallel rank "
        "waits for a peer that died or hangs)",
    ),
    "Watchdog caught collective operation timeout": (
        "nccl_watchdog",
        "PyTorch's NCCL watchdog terminated the process: a collective timed out (a tensor-parallel rank "
        "waited for a peer that died or hangs)",
    ),
}


#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = tuple(_DEATHS)


def death(text: str, run: RunState) -> Failure | None:
    """The death another program reports on a raw line, if any (after a requested stop: none)."""
    hit = next((v for lit, v in _DEATHS.items() if lit in text), None)
    if hit is None or run.requested:
        return None
    form, cause = hit
    d = {"form": form, "phase": "serving" if run.stats_seen else "unknown", "cause": cause}
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed", form))
