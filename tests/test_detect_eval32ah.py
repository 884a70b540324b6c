"""The class of the final blind set eval32ah fixed after its measurement (tests/data/eval32ah/RESULTS.md UB), on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_gpustacks_provisioning_error_is_a_failed_start() -> None:
    """UB: GPUStack's 'gpustack.worker.serve_manager - ERROR - Error provisioning model instance …: Failed to get
    vLLM backend image' and its traceback (no line vLLM wrote): the instance's engine never started — a failed
    start, not a crash."""
    d = diagnose("eval32ah/024.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
