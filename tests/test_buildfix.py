"""The GPU runtime's errors that name the install, not the model (observe/failures/buildfix.py): their fix is the
install, on real excerpts (sources in tests/data/PROVENANCE.md). Before it they got "no launch flag is known to fix
it; check the model, its config and the vLLM version"."""

from __future__ import annotations

import pytest

from tests.diagnosekit import by_id, critical, diagnose, notes, suggestions


def _failure_note(d: dict) -> str:
    return notes(d, "engine_error", "engine_startup_failed")


@pytest.mark.parametrize(
    "log",
    [
        "eval32bj/009.log",  # v0.2.3 image on a P100 (sm_60), compose prefix
        "eval32ap/030.log",  # V0 ~0.8 on a V100S, after the weights loaded: the failed start
        "eval32y/013.log",  # V1 ~0.9.1, an FP8 model on an RTX 50xx: the failed start
        "eval32s/003.log",  # V1 0.14.0 ROCm image on an MI355X: HIP's same words
    ],
)
def test_no_kernel_image_for_the_gpu_asks_for_a_build_that_has_its_architecture(log: str) -> None:
    d = diagnose(log)
    assert critical(d), d["findings"]
    note = _failure_note(d)
    assert "TORCH_CUDA_ARCH_LIST" in note and "no launch flag adds kernels" in note, d["advice_notes"]
    assert "check the model, its config" not in note, d["advice_notes"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]


@pytest.mark.parametrize(
    "log",
    [
        "eval32bc/025.log",  # V1 0.11.2 nightly on an H20: the lone exception line
        "eval32cf/004.log",  # a Jetson Thor's vision encoder, a flattened cut traceback carrying the words
    ],
)
def test_ptx_from_an_unsupported_toolchain_asks_for_a_newer_driver(log: str) -> None:
    d = diagnose(log)
    assert by_id(d).get("engine_error") is not None, d["findings"]
    note = _failure_note(d)
    assert "NVIDIA driver is older than the CUDA toolkit" in note and "upgrade the driver" in note, d[
        "advice_notes"
    ]
    assert not suggestions(d), d["recommendations"]


def test_other_gpu_errors_keep_the_generic_sentence() -> None:
    """The other side: HIP's "invalid device function" (eval32ab 018, ROCm) is neither of the two strings: its note stays
    the generic one, not an install fix."""
    d = diagnose("eval32ab/018.log")
    note = _failure_note(d)
    assert note and "TORCH_CUDA_ARCH_LIST" not in note and "NVIDIA driver" not in note, d["advice_notes"]
