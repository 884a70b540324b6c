"""The classes of the blind set eval32ba fixed after its measurement (tests/data/eval32ba/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import by_id, critical, diagnose


def _failed(d: dict) -> bool:
    return bool(critical(d)) or any(la.get("status") == "failed" for la in d.get("launches") or [])


def test_a_trainer_scripts_rank0_traceback_with_no_vllm_line_is_not_the_engines() -> None:
    """BA4 (022: open-r1's GRPO trainer in TRL's server mode, '[rank0]: Traceback (most recent call last):' and three
    frames of open_r1/grpo.py, cut): the '[rankN]: ' prefix is PyTorch's distributed excepthook in any torchrun'd
    program; no frame is under vllm/ and no line is vLLM's, so it is a client of the server dying, not the engine.
    Not failing, no engine crash. (The only real excerpt of this shape found.)"""
    d = diagnose("eval32ba/022.log")
    assert not _failed(d), (d["findings"], d.get("launches"))
    assert "engine_crashed" not in by_id(d) and "engine_error" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "log",
    [
        # V0 0.6.1.post2: 'Starting to load model …' then the header, cut
        "eval32p/026.log",
        # vllm-fork on Gaudi: 'Loading model weights took …' then the header, cut mid-word
        "eval32ax/024.log",
        # V0 ~0.6.2 under debugpy: vLLM's start-up records, then a [rank0] traceback through runpy / debugpy only
        "eval32z/009.log",
    ],
)
def test_a_rank0_traceback_in_a_log_whose_other_lines_are_vllms_still_fails(log: str) -> None:
    """BA4's other side: the same excepthook header after vLLM's own records (its logger prefix) is the engine's
    process exiting: still critical."""
    d = diagnose(log)
    assert critical(d), d["findings"]
