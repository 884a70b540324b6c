"""Failures an accelerator's own runtime or compiler reports in a vLLM process, on its own lines (not vLLM records).

- Huawei Ascend's CANN runtime, when the process cannot open its NPU: the runtime's error report lines
  "rtGetDeviceCount execution failed, reason=…", "get device count failed, runtime result = <n>.", "drv devId is
  invalid, …", "rtSetDefaultDeviceId execution failed, …", "set default device id failed, ret:<n>" (CANN's
  ``[FUNC:…][FILE:…][LINE:…]`` suffixed messages, printed into the process's stderr when the first device call
  fails: torch_npu's device init, which vllm-ascend's platform runs while the engine core sets its worker up).
  No device, no engine: the start failed, and no memory flag is the lever (the driver, the device's visibility).
- AWS Neuron's compiler wrapper, when compiling the model's graph failed: "ERROR ||NEURON_CC_WRAPPER||: Failed
  compilation with ['neuronx-cc', …" (libneuronxla / torch-neuronx). vLLM's Neuron backend compiles the model
  (transformers-neuronx / neuronx-distributed) while the engine is built, before it serves: the start failed.

Each is read only on a line under a process prefix (a worker's, an engine core's, a launcher's task): bare, it is
anybody's program. Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

from observe.parse import hosted
from observe.parse.failtypes import Failure, RunState

#: CANN runtime's messages when the NPU cannot be opened (device count, device id)
_CANN_NO_DEVICE = (
    "rtGetDeviceCount execution failed",
    "get device count failed, runtime result = ",
    "set default device id failed",
    "rtSetDefaultDeviceId execution failed",
)
_NEURON_CC = "||NEURON_CC_WRAPPER||: Failed compilation"
#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (*_CANN_NO_DEVICE, _NEURON_CC)

_CANN_CAUSE = (
    "Ascend's CANN runtime could not open the NPU (the device count or the default device failed: the driver, "
    "the device's visibility to this container, or a chip the release does not support): no engine starts, "
    "and no memory flag is the lever"
)
_NEURON_CAUSE = (
    "AWS Neuron's compiler (neuronx-cc) failed to compile the model's graph while the engine was built: the "
    "start failed (the compiler's own log names why; a smaller max model length or batch, or a supported "
    "tensor-parallel size, changes the graph)"
)


def death(text: str, run: RunState, prefixed: bool) -> Failure | None:
    """The start-up failure an accelerator's runtime or compiler tells on a raw line under a process prefix."""
    if not prefixed or run.requested:
        return None
    if any(lit in text for lit in _CANN_NO_DEVICE):
        return hosted.start_failed(text, _CANN_CAUSE, ("ascend", "no_device"))
    if _NEURON_CC in text:
        return hosted.start_failed(text, _NEURON_CAUSE, ("neuron", "compile_failed"))
    return None
