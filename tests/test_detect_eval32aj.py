"""The classes of the final blind set eval32aj fixed after its measurement (tests/data/eval32aj/RESULTS.md WB, WF,
WG), each on its real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import by_id, critical, diagnose


@pytest.mark.parametrize(
    "log",
    [
        # WB: gunicorn's '[ERROR] Exception in worker process' after a V0 0.4.3 engine's config (load_wsgi raised)
        "eval32aj/005.log",
        # WF: Xinference's worker traceback through launch_builtin_model, cut above its ERROR line, no vLLM line
        "eval32aj/026.log",
        # WG: Triton's model_lifecycle "failed to load 'vllm_model' version 1" after the backend's initialize raised
        "eval32aj/028.log",
    ],
)
def test_a_hosts_own_word_that_the_launch_failed_is_a_failed_start(log: str) -> None:
    """The program hosting vLLM says the model's launch failed (its worker's boot, its launch, its model load): a
    failed start-up, never a death while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
