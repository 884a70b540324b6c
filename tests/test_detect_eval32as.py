"""The classes of the blind set eval32as fixed after its measurement (tests/data/eval32as/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import critical, diagnose


def test_v0_client_request_frames_cut_before_any_exception_are_no_engine_failure() -> None:
    """AS2: dynamo-run's DEBUG relay of interleaved request tracebacks cut in V0's MQLLMEngineClient._process_request
    (one request's stream re-raising what the engine sent for it), no exception line, no dead-engine word, no
    'raise request_output' twice in one record: no critical finding, no failed launch."""
    d = diagnose("eval32as/029.log")
    assert not critical(d), d["findings"]
    assert all(la.get("status") not in ("crashed", "failed") for la in d.get("launches") or []), d["launches"]


@pytest.mark.parametrize("log", ["eval32h/014.log", "eval32q/016.log"])
def test_v0_client_request_frames_with_the_engines_death_still_page(log: str) -> None:
    """The other side: _process_request's 'raise request_output' twice in one record (one exception through several
    requests' streams), or MQEngineDeadError's 'Engine loop is not running' under it, is still the engine's death."""
    d = diagnose(log)
    assert critical(d), d["findings"]
