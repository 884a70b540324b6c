"""The classes of the blind set eval32bl fixed after its measurement (tests/data/eval32bl/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose, suggestions


def test_a_hip_oom_flattened_ahead_of_an_error_record_is_the_oom() -> None:
    """BL2 (010): a paste whose line breaks were lost: PyTorch's 'HIP out of memory. Tried to allocate 64.00 MiB. GPU 0
    has a total capacity of 15.98 GiB of which 22.00 MiB is free ...' (torch.OutOfMemoryError on a ROCm build), then,
    on the same line, V0's 'ERROR 07-04 14:53:23 [engine.py:458] Traceback (most recent call last):' and a frame. The
    text ahead of the record's prefix is PyTorch's message, not a wrapper's words: read as the OOM (cuda_oom, its
    figures), not a crash while serving. (The only real excerpt of the flattened form in the sets.)"""
    d = diagnose("eval32bl/010.log")
    assert critical(d) and "cuda_oom" in by_id(d), d["findings"]
    oom = by_id(d)["cuda_oom"]["data"]
    assert (oom["device"], oom["tried_to_allocate"], oom["free"]) == ("HIP", "64.00 MiB", "22.00 MiB"), oom
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert [la["status"] for la in d["launches"]] == ["failed"], d["launches"]


def test_a_bfloat16_refusal_below_7_0_without_the_build_floor_gets_dtype_half() -> None:
    """BL1 (002): V0's 'Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your Tesla P40 GPU
    has compute capability 6.1. You can use float16 instead ... --dtype=half.' (the pascal-pkgs-ci image). vLLM checks
    the dtype at run time for any GPU and names --dtype half itself; its floor of 7.0 is its build's (setup.py's 'GPUs
    with compute capability below 7.0 are not supported', its wheels' kernels), which this log does not show: vLLM's
    own lever, with the caveat that a stock wheel has no kernels for 6.x."""
    d = diagnose("eval32bl/002.log")
    assert "launch_rejected" in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]
    assert suggestions(d).get("--dtype") == ["half"], d["recommendations"]
    assert any("no kernel image is available" in n["text"] for n in d["advice_notes"]), d["advice_notes"]


def test_the_build_floor_in_the_log_still_gives_no_dtype() -> None:
    """The other side of BL1 (eval32f 020, 0.2.0): the same refusal on a P100 (6.0) with vLLM's build refusal 'GPUs
    with compute capability below 7.0 are not supported.' in the log: this vLLM has no kernels for the GPU, so no
    --dtype (float16 starts nothing either)."""
    d = diagnose("eval32f/020.log")
    assert "--dtype" not in suggestions(d), d["recommendations"]
    assert any("below 7.0" in n["text"] for n in d["advice_notes"]), d["advice_notes"]
