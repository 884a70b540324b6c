"""The classes of the blind set eval32cc fixed after its measurement (tests/data/eval32cc/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosekit import by_id, critical, diagnose, lines


@pytest.mark.parametrize("log", ["eval32cc/011.log", "eval32by/007.log"])
def test_fa_utils_unsupported_fa_version_line_is_a_notice(log: str) -> None:
    """CC1 (cc 011; by 007, BY1's excerpt): fa_utils.get_flash_attn_version logs 'Cannot use FA version 2 is not
    supported due to FA2 is only supported on devices with compute capability >= 8' at ERROR, then its assert is caught
    (``except (ImportError, AssertionError): return None``, read in the 0.11.0 wheel) and another attention backend is
    chosen: a notice vLLM carries on from, no engine error of any severity."""
    d = diagnose(log)
    assert not critical(d), d["findings"]
    assert "engine_error" not in by_id(d) and "engine_startup_failed" not in by_id(d), d["findings"]


def test_the_same_logger_with_other_words_is_still_an_error(tmp_path: Path) -> None:
    """The other side: only that sentence is the notice; another ERROR record at the same site stays the catch-all's."""
    line = next(x for x in lines("eval32cc/011.log") if "[fa_utils.py:57]" in x)
    log = tmp_path / "other.log"
    log.write_text(
        line.split("Cannot use FA", 1)[0] + "flash_attn_varlen_func failed: CUDA error: invalid argument\n"
    )
    d = diagnose(log)
    assert "engine_error" in by_id(d), d["findings"]
