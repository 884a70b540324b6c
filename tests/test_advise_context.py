"""The advisor in context (issue 20 items 2, 4, 8 and issue 19's cheap fixes): OOM levers by phase,
advice that fits the deployment and the release, numbers from rounded messages, rejected launches."""

from __future__ import annotations

from observe import advise
from observe.model import EngineConfig, Finding
from observe.settings import Settings


def _offered(a: advise.Advice) -> dict:
    return {x.flag: x.suggested for r in a.recommendations for x in (r, *r.alternatives)}


def _f(fid: str, sev: str = "critical", **data) -> Finding:
    return Finding(id=fid, severity=sev, title="t", evidence="e", data=data)


# ---------------------------------------------------------------- issue 19: notes and settings


def test_swap_space_exhausted_gets_its_own_sentence() -> None:
    """detect emits swap_space_exhausted; the note was keyed swap_exhausted and never appeared."""
    plan = advise.plan(EngineConfig(engine="v0"), [_f("swap_space_exhausted")])
    text = " ".join(n.text for n in plan.notes)
    assert "swap space ran full" in text and "observe knows no launch flag" not in text


def test_the_advice_kv_lines_move_with_the_settings() -> None:
    """A --config kv_high_pct / kv_full_pct moves the finding; the advice must move with it."""
    cfg = EngineConfig(engine="v1", version="0.10.1", max_concurrency=0.8, max_model_len=131072)
    f = _f("low_max_concurrency", "warning")
    facts = {"max_kv_pct": 85.0, "max_running": 4, "max_waiting": 0}
    assert advise.plan(cfg, [f], facts=facts).recommendations == []  # 85 % < the default 90 %
    strict = advise.plan(cfg, [f], facts=facts, settings=Settings(kv_high_pct=80.0, kv_full_pct=85.0))
    assert strict.recommendations  # 85 % is "high" under this config: the cache is grown
    # the cap at what a full cache held starts at kv_full_pct
    sat = [_f("kv_cache_saturated")]
    full = {"max_running": 40, "max_waiting": 60, "max_kv_pct": 92.0}
    gpu = EngineConfig(engine="v1", version="0.11.0", device="GPU")
    assert "--max-num-seqs" not in _offered(advise.plan(gpu, sat, facts=full))
    assert "--max-num-seqs" in _offered(
        advise.plan(gpu, sat, facts=full, settings=Settings(kv_high_pct=85.0, kv_full_pct=90.0))
    )
