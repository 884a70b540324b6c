"""The classes of the final blind set eval32az fixed after its measurement (tests/data/eval32az/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_nixls_dropped_notice_for_an_unknown_request_is_no_failure() -> None:
    """AZ1 (029): NixlConnectorWorker's 'Potentially invalid KV blocks for unrecognized request … They may have
    expired.' is logged at ERROR and the notice skipped; no request fails, the engine goes on."""
    d = diagnose("eval32az/029.log")
    assert not critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
