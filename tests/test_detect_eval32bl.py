"""The classes of the blind set eval32bl fixed after its measurement (tests/data/eval32bl/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


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
