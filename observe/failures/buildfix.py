"""The GPU runtime's errors that name the install, not the model: what fixes them (no launch flag does).

Two of the CUDA runtime's own error strings (``cudaGetErrorString``; HIP keeps the first word for word) say that
the binaries of the install do not fit the machine, whatever the model or the flags:

- ``cudaErrorNoKernelImageForDevice`` (209) "no kernel image is available for execution on the device" (HIP:
  ``hipErrorNoBinaryForGpu``, the same words): the compiled kernels (vLLM's ``_C``, PyTorch's, FlashAttention's,
  xformers') hold no code for this GPU's architecture — an old GPU the build dropped (Pascal sm_60, Volta sm_70),
  a GPU newer than the build (Blackwell sm_120 under a CUDA 12.6 wheel, Jetson's sm_87 in a server image), or a
  ROCm build without the GPU's gfx target. Seen at start-up (profiling, the first kernel) or on a request's path.
- ``cudaErrorUnsupportedPtxVersion`` (222) "the provided PTX was compiled with an unsupported toolchain": the
  driver is older than the CUDA toolkit that produced the PTX it is asked to JIT-compile (a wheel or image built
  for a newer CUDA than the driver supports).

Read only these words, in a failure's own text or message: each is the root cause of the failure that carries it.
No launch flag adds kernels or updates a driver (--enforce-eager runs the same kernels; memory flags do not touch
the binaries): the fix is the install. Pure.
"""

from __future__ import annotations

__all__ = ["fix_for"]

_NO_KERNEL = "no kernel image is available for execution on the device"
_OLD_DRIVER = "the provided PTX was compiled with an unsupported toolchain"

_FIXES = (
    (
        _NO_KERNEL,
        "the install's compiled kernels hold no code for this GPU's architecture (a build for other GPUs: one "
        "the release dropped, or one newer than the build); install a vLLM / PyTorch build that includes it (the "
        "wheel or image for a CUDA version that supports this GPU, e.g. CUDA 12.8+ for Blackwell; or build from "
        "source with TORCH_CUDA_ARCH_LIST set to its compute capability; on ROCm PYTORCH_ROCM_ARCH its gfx "
        "target), or run on a GPU the release supports; no launch flag adds kernels (--enforce-eager runs the "
        "same ones) and memory flags do not touch them",
    ),
    (
        _OLD_DRIVER,
        "the NVIDIA driver is older than the CUDA toolkit this vLLM / PyTorch build was compiled with; upgrade "
        "the driver to one that supports the build's CUDA version (nvidia-smi's header shows the highest it "
        "supports), or install the build made for the driver's CUDA version; no launch flag changes the driver",
    ),
)


def fix_for(text: str) -> str | None:
    """The fix of a runtime error that names the install (its words in ``text``), else None."""
    for words, fix in _FIXES:
        if words in text:
            return fix
    return None
