"""A TPU engine's device memory (HBM) running out at start-up, in tpu-inference's and JAX's own words. Pure.

- tpu-inference's worker (``tpu_inference/worker/tpu_worker.py`` ``determine_available_memory``, 2025 → 2026) sizes
  the KV cache as the devices' HBM limit x ``--gpu-memory-utilization`` less what is in use after the weights load,
  and refuses a budget at or below zero: "ValueError: total_hbm_used_gb=731.21GiB exceeds
  total_hbm_limit_cap_gb=718.55GiB by 12.66GiB. Please consider increasing --gpu-memory-utilization from 0.948 to a
  larger value." (``hbm_cap``). No room for any KV cache: the start-up's end (``no_kv_cache_memory``), its figures
  kept (the devices' whole limit is the cap over the utilization) so the advice can size the utilization that fits.
- JAX's allocator refusing a device buffer: "jax.errors.JaxRuntimeError: RESOURCE_EXHAUSTED: Error allocating device
  buffer: Attempting to allocate 1.01G. That was not possible. There are 999.27M free.; (0x0x0_HBM0)" (PJRT's
  TPU client, sizes in its own short units) (``buffer_refused``): an out-of-memory of the device, its figures kept as
  PyTorch's are (``parse.oom``), the phase the start-up's (allocating the KV cache after "GPU KV cache size") or
  serving. Never the compiler's "Ran out of memory in memory space vmem / smem" (on-chip scratch memory of one
  kernel, which no memory flag changes).
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState
from observe.parse.oom import size_gib

__all__ = ["BUFFER", "CAP", "buffer_refused", "hbm_cap"]

_NUM = r"\d+(?:\.\d+)?"
#: tpu-inference's refusal, its figures in GiB
CAP = (
    "exceeds total_hbm_limit_cap_gb=",
    rf"\btotal_hbm_used_gb=(?P<used>{_NUM})GiB exceeds total_hbm_limit_cap_gb=(?P<cap>{_NUM})GiB by "
    rf"(?P<by>{_NUM})GiB\. Please consider increasing --gpu-memory-utilization from (?P<u>{_NUM})\b",
)
#: PJRT's refusal of one device buffer (sizes as "1.01G", "999.27M", "512.00K", "100B")
BUFFER = (
    "Error allocating device buffer: Attempting to allocate",
    rf"RESOURCE_EXHAUSTED: Error allocating device buffer: Attempting to allocate (?P<want>{_NUM})(?P<wu>[KMGT]?)B?\. "
    rf"That was not possible\. There are (?P<free>{_NUM})(?P<fu>[KMGT]?)B? free",
)


def hbm_cap(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """tpu-inference's refusal of a KV budget at or below zero: no memory for the KV cache, with the figures."""
    used, cap, u = float(m.group("used")), float(m.group("cap")), float(m.group("u"))
    if not 0 < u <= 1:
        return None
    d = {
        "kv_available_gib": -float(m.group("by")),
        "hbm_used_gib": used,
        "hbm_cap_gib": cap,
        "hbm_limit_gib": round(cap / u, 2),
        "gpu_memory_utilization": u,
        "device": "TPU",
    }
    return Failure(FailureKind.NO_AVAILABLE_MEMORY, d, True, ("noavail",))


def buffer_refused(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """JAX's refusal of a device buffer: the device's out-of-memory, what was asked and what was free."""
    want = size_gib(float(m.group("want")), m.group("wu"))
    free = size_gib(float(m.group("free")), m.group("fu"))
    d = {
        "device": "TPU",
        "tried_to_allocate": f"{m.group('want')}{m.group('wu')}",
        "tried_to_allocate_gib": want,
        "free": f"{m.group('free')}{m.group('fu')}",
        "free_gib": free,
        # serving once a stats line was read; else the start-up's step decides (rules.failures' OOM phase)
        **({"phase": "serving"} if run.stats_seen else {}),
    }
    return Failure(FailureKind.OOM, d, True, (FailureKind.OOM, "TPU", d["tried_to_allocate"], d["free"]))
