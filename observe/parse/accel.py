"""Failures an accelerator's own runtime or compiler reports in a vLLM process, on its own lines (not vLLM records).

- Huawei Ascend's CANN runtime, when the process cannot open its NPU: the runtime's error report lines
  "rtGetDeviceCount execution failed, reason=…", "get device count failed, runtime result = <n>.", "drv devId is
  invalid, …", "rtSetDefaultDeviceId execution failed, …", "set default device id failed, ret:<n>" (CANN's
  ``[FUNC:…][FILE:…][LINE:…]`` suffixed messages, printed into the process's stderr when the first device call
  fails: torch_npu's device init, which vllm-ascend's platform runs while the engine core sets its worker up).
  No device, no engine: the start failed, and no memory flag is the lever (the driver, the device's visibility).
  The same runtime, when ``aclrtSetDevice`` cannot open one NPU, reports it in the error message it hands back
  (torch_npu's RuntimeError, so inside the vLLM worker's ERROR record of it, V0's ``execute_method``): "open device
  <n> failed, runtime result = <n>.[FUNC:ReportCallError]…", "Failed to open device, retCode=0x…, deviceId=<n>.
  [FUNC:InitRawDriver]…", "Failed to init RawDriver, device_id=<n>, …" (after e.g. "Set visible device failed,
  invalid device=<n>": a worker given a device its node does not show it). Read under a process prefix or in an
  ERROR record (``device_open``), never bare.
- AWS Neuron's compiler wrapper, when compiling the model's graph failed: "ERROR ||NEURON_CC_WRAPPER||: Failed
  compilation with ['neuronx-cc', …" (libneuronxla / torch-neuronx). vLLM's Neuron backend compiles the model
  (transformers-neuronx / neuronx-distributed) while the engine is built, before it serves: the start failed.

Each is read only on a line under a process prefix (a worker's, an engine core's, a launcher's task): bare, it is
anybody's program. One is read bare as well, as it is never printed under one:

- PyTorch's CUDA kernels' device-side assertion (``CUDA_KERNEL_ASSERT`` in ATen's kernels, e.g. IndexKernel.cu's
  "index out of bounds"): CUDA's device runtime prints "<path>/aten/src/ATen/native/cuda/<Kernel>.cu:<n>: <fn>:
  block: [x,y,z], thread: [x,y,z] Assertion `<condition>` failed." from the GPU, straight to the process's C stdout
  (never through Python, so never under vLLM's process prefix). The kernel is aborted with cudaErrorAssert, which
  CUDA documents as sticky: the context "cannot be used anymore, and must be destroyed", so every later CUDA call
  of that process fails ("CUDA error: device-side assert triggered"): the engine's death. Where (start-up's
  profiling run or a request's step) the line does not say: serving once a stats line was read, else unknown.

Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse import hosted
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState, serving_or

#: CANN runtime's messages when the NPU cannot be opened (device count, device id)
_CANN_NO_DEVICE = (
    "rtGetDeviceCount execution failed",
    "get device count failed, runtime result = ",
    "set default device id failed",
    "rtSetDefaultDeviceId execution failed",
)
#: CANN runtime's messages when one NPU cannot be opened (aclrtSetDevice → the raw driver), with CANN's own
#: "[FUNC:…]" suffix (``CANN_OPEN_LITERAL``): the device id they name
CANN_OPEN_LITERAL = "[FUNC:"
CANN_OPEN = re.compile(
    r"(?:\bopen device (?P<a>\d+) failed, runtime result = -?\d+"
    r"|\bFailed to open device, retCode=0x[0-9a-fA-F]+, deviceId=(?P<b>\d+)"
    r"|\bFailed to init RawDriver, device_id=(?P<c>\d+))\.?\[FUNC:",
    re.ASCII,
)
_NEURON_CC = "||NEURON_CC_WRAPPER||: Failed compilation"
#: CUDA's device-side assert in one of PyTorch's ATen kernels (the device runtime's "%s:%d: %s: block: [%d,%d,%d],
#: thread: [%d,%d,%d] Assertion `%s` failed.")
_ATEN_ASSERT = re.compile(
    r"aten/src/ATen/native/cuda/(?P<kernel>\w+)\.cu:\d+: \S.*: block: \[\d+,\d+,\d+\], thread: \[\d+,\d+,\d+\] "
    r"Assertion `(?P<cond>.*)` failed\.",
    re.ASCII,
)
#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (*_CANN_NO_DEVICE, _NEURON_CC, "aten/src/ATen/native/cuda/")

_CANN_CAUSE = (
    "Ascend's CANN runtime could not open the NPU (the device count or the default device failed: the driver, "
    "the device's visibility to this container, or a chip the release does not support): no engine starts, "
    "and no memory flag is the lever"
)
_CANN_OPEN_CAUSE = (
    "Ascend's CANN runtime could not open NPU {dev} (the raw driver's device open failed: a device id the node "
    "does not show the worker — ASCEND_RT_VISIBLE_DEVICES against the chips there — or its driver): that worker, "
    "and the engine, never started; no memory flag is the lever"
)
_NEURON_CAUSE = (
    "AWS Neuron's compiler (neuronx-cc) failed to compile the model's graph while the engine was built: the "
    "start failed (the compiler's own log names why; a smaller max model length or batch, or a supported "
    "tensor-parallel size, changes the graph)"
)


_ASSERT_CAUSE = (
    "a device-side assertion failed in PyTorch's CUDA kernel {kernel} (`{cond}`): CUDA's assert error is sticky, the "
    "process's CUDA context cannot be used anymore and every later CUDA call fails, so the engine is dead (an "
    "out-of-bounds index is a bad input or a model's bug, not memory: CUDA_LAUNCH_BLOCKING=1 shows the call)"
)


def death(text: str, run: RunState, prefixed: bool) -> Failure | None:
    """The failure an accelerator's runtime or compiler tells on a raw line: under a process prefix (the start-up's
    failures), or a CUDA device-side assertion of PyTorch's kernels (bare too)."""
    if run.requested:
        return None
    if (m := _ATEN_ASSERT.search(text)) is not None:
        cause = _ASSERT_CAUSE.format(kernel=m.group("kernel") + ".cu", cond=m.group("cond")[:120])
        d = {"text": text[:300], "phase": serving_or(run, "unknown"), "cause": cause}
        return Failure(FailureKind.ERROR_LINE, d, False, ("cuda", "device_assert"))
    if not prefixed:
        return None
    if any(lit in text for lit in _CANN_NO_DEVICE):
        return hosted.start_failed(text, _CANN_CAUSE, ("ascend", "no_device"))
    if CANN_OPEN_LITERAL in text and (m := CANN_OPEN.search(text)) is not None:
        return device_open(m, text, None, run)
    if _NEURON_CC in text:
        return hosted.start_failed(text, _NEURON_CAUSE, ("neuron", "compile_failed"))
    return None


def device_open(m: re.Match[str], msg: str, ctx: Ctx | None, run: RunState) -> Failure | None:
    """CANN's report that one NPU could not be opened (``CANN_OPEN``), in a vLLM ERROR record (ctx: its envelope) or
    on a raw line under a process prefix (ctx None: ``death`` checked the prefix): the worker's start failed."""
    if run.requested or (ctx is not None and ctx.level not in ("ERROR", "CRITICAL")):
        return None
    dev = m.group("a") or m.group("b") or m.group("c")
    return hosted.start_failed(msg.strip(), _CANN_OPEN_CAUSE.format(dev=dev), ("ascend", "no_device"))
