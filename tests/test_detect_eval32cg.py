"""The class of the blind set eval32cg fixed after its measurement (tests/data/eval32cg/RESULTS.md), on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe import versions
from tests.diagnosekit import by_id, critical, diagnose, lines


def test_a_short_kv_cache_before_vllms_check_is_a_warning_not_a_refused_start() -> None:
    """CG1 (020): a 0.2.x banner without 'enforce_eager=' (0.2.5 or older) and '# GPU blocks: 979' (15,664 tokens) under
    max_seq_len 32,768. vLLM's start-up check came in 0.2.7: the engine starts and drops the longer prompts, a warning."""
    d = diagnose("eval32cg/020.log")
    assert not critical(d), d["findings"]
    low = by_id(d).get("low_max_concurrency")
    assert low is not None and low["severity"] == "warning", d["findings"]
    assert "0.48x" in low["evidence"] and "no start-up check" in low["evidence"], low
    assert "max_model_len_exceeds_kv_cache" not in by_id(d), d["findings"]


def test_the_same_cache_under_a_banner_from_0_2_6_on_is_still_refused(tmp_path: Path) -> None:
    """The other side: the same lines with the banner's 'enforce_eager=False, ' (0.2.6 → 0.3.3, releases with or
    without the check: not known to lack it) keep the refused start."""
    text = "\n".join(lines("eval32cg/020.log")).replace(
        "quantization=None, seed=", "quantization=None, enforce_eager=False, seed="
    )
    log = tmp_path / "eager.log"
    log.write_text(text + "\n")
    d = diagnose(log)
    f = by_id(d).get("max_model_len_exceeds_kv_cache")
    assert f is not None and f["severity"] == "critical", d["findings"]


def test_the_banner_without_eager_bounds_the_release() -> None:
    r = versions.infer_range(None, unversioned_banner=True, banner_without_eager=True)
    assert r.hi == (0, 2, 5) and versions.available(r, "0.2.7") is False
    r = versions.infer_range(None, unversioned_banner=True)
    assert r.hi == (0, 3, 3) and versions.available(r, "0.2.7") is None
