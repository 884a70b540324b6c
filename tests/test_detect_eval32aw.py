"""The classes of the blind set eval32aw fixed after its measurement (tests/data/eval32aw/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import critical, diagnose


def test_a_stream_generators_record_cut_in_its_own_frame_is_one_requests_error() -> None:
    """AW3: vllm-ascend serving, then serving_chat.py's "Error in chat completion stream generator." (logger.exception
    in one request's streaming generator) with its traceback hard-wrapped and cut in chat_completion_stream_generator:
    nothing says the engine died, so no critical finding and no failed launch."""
    d = diagnose("eval32aw/024.log")
    assert not critical(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")
