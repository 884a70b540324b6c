"""The classes of the blind set eval32bg fixed after its measurement (tests/data/eval32bg/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_a_flattened_start_up_whose_worker_died_before_the_core_was_ready_is_a_failed_start() -> None:
    """BG3 (015): one flattened line, CUDA-graph capture failing at 143/147, 'Worker proc VllmWorker-7 died
    unexpectedly, shutting down executor.' and then, on the same line, the client's 'RuntimeError: Engine core
    initialization failed.' (raised when a core process exits before its ready handshake): the engine died starting,
    it never served. (The only real excerpt of the flattened form found.)"""
    d = diagnose("eval32bg/015.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_workers_death_notice_alone_is_still_a_crash() -> None:
    """The other side of BG3 (eval32r 025): the engine client's 'died unexpectedly' notice with no failed start after
    it on its line stays the crash it was."""
    d = diagnose("eval32r/025.log")
    assert "engine_crashed" in by_id(d), d["findings"]
