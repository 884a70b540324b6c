"""A threshold given with --config (Settings.from_yaml) moves the advice together with the finding:
the advisor reads the same Settings the rules judged by, never a number of its own."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from observe import advise, pipeline
from observe.model import EngineConfig, Finding
from observe.rules import failures, table
from observe.rules.context import Context
from observe.settings import Settings, from_yaml

ROOT = Path(__file__).resolve().parents[2]
SEQ_BOUND = ROOT / "examples" / "seq-bound"


def _kv_plan(settings: Settings | None) -> dict:
    cfg = EngineConfig(engine="v1", version="0.11.0", device="GPU", gpu_memory_utilization=0.8)
    sat = Finding(id="kv_cache_saturated", severity="critical", title="t", evidence="e")
    pre = Finding(id="preemptions", severity="warning", title="t", evidence="e", data={"total": 60})
    facts = {"max_kv_pct": 100.0, "max_running": 16, "max_waiting": 8}
    plan = advise.plan(cfg, [sat, pre], facts=facts, settings=settings)
    return {x.flag: x for r in plan.recommendations for x in (r, *r.alternatives)}


def test_max_gpu_util_from_config_moves_the_kv_plan() -> None:
    default = _kv_plan(None)["--gpu-memory-utilization"]
    assert default.suggested == 0.95 and "0.95 still leaves headroom" in default.reason
    mine = _kv_plan(from_yaml("max_gpu_util: 0.9\n"))["--gpu-memory-utilization"]
    assert mine.suggested == 0.9 and "0.9 still leaves headroom" in mine.reason


def test_max_gpu_util_from_config_moves_the_oom_finding_and_its_advice() -> None:
    log = ROOT / "tests" / "data" / "forms" / "v1-0.11-cudagraph-capture-oom.log"
    d = pipeline.diagnose_paths([log]).instances[0]
    cfg = dataclasses.replace(d.config, gpu_memory_utilization=0.92)

    def found(settings: Settings) -> list[Finding]:
        return failures.engine_errors(Context(d.summary, cfg, d.frame, settings=settings))

    assert "gpu_memory_utilization_too_high" not in {f.id for f in found(Settings())}  # 0.92 < 0.95
    strict = from_yaml("max_gpu_util: 0.9\n")
    fs = found(strict)
    assert "gpu_memory_utilization_too_high" in {f.id for f in fs}
    plan = table.plan(cfg, fs, settings=strict)
    answered = {i for r in plan.recommendations for i in r.finding_ids} | {
        i for n in plan.notes for i in n.finding_ids
    }
    assert "gpu_memory_utilization_too_high" in answered


def test_seq_bound_kv_share_from_config_moves_the_max_num_seqs_advice() -> None:
    metrics = sorted(SEQ_BOUND.glob("metrics*.txt"))

    def rec(settings: Settings | None):
        d = pipeline.diagnose_paths([SEQ_BOUND / "vllm.log"], metrics, settings=settings).instances[0]
        assert "queue_seq_bound" in {f.id for f in d.findings}
        return next(r for r in d.recommendations if r.flag == "--max-num-seqs")

    # 16 wanted at a cap of 2 (the most running + waiting of one stats line) and the KV room per request measured:
    # the step is that demand (issue 31), not a ×4 step
    default = rec(None)
    assert (
        default.suggested == 16
        and not default.coupled
        and "holds ~299 requests" in (default.expected_effect or "")
    )
    tight = rec(from_yaml("seq_bound_kv_share: 0.01\n"))  # 1 % of the cache holds 3: under the step
    assert tight.suggested == 16 and "holds ~3 requests" in (tight.expected_effect or "")
    assert [c.flag for c in tight.coupled] == ["--kv-cache-memory-bytes"]  # the step carries its KV
    # the ×4 cap (seq_step_max_factor) bounds a step only where the demand or the KV room is unmeasured
    assert rec(from_yaml("seq_step_max_factor: 2.5\n")).suggested == 16


def _mib(size: str) -> int:
    assert size.endswith("M"), size
    return int(size[:-1])


def test_a_step_the_kv_cache_bounds_is_taken_whole_with_its_kv_growth() -> None:
    """Issue 31: the KV cache holding a ×2 step but not the step the queue calls for, the advice took
    the ×2 (4 → 8 with 60 waiting) and a tune of 3 trials ended far from the best; now the step
    carries the KV growth it needs (--kv-cache-memory-bytes known), sized from the measured length,
    and a tighter seq_bound_kv_share asks for more of it."""
    metrics = sorted(SEQ_BOUND.glob("metrics*.txt"))

    def rec(share: float):
        cfg = from_yaml(f"seq_bound_kv_share: {share}\n")
        d = pipeline.diagnose_paths([SEQ_BOUND / "vllm.log"], metrics, settings=cfg).instances[0]
        return next(r for r in d.recommendations if r.flag == "--max-num-seqs")

    r = rec(0.018)
    assert "holds ~5 requests" in (r.expected_effect or "")  # a ×2 step (2 → 4) would fit, 16 not
    assert r.suggested == 16 and [c.flag for c in r.coupled] == ["--kv-cache-memory-bytes"]
    assert "16 requests of ~" in r.coupled[0].reason
    tighter = rec(0.01)
    assert _mib(str(tighter.coupled[0].suggested)) > _mib(str(r.coupled[0].suggested))


# ---------------------------------------------------------------- from tests/test_advise_context.py
def _offered(a: advise.Advice) -> dict:
    return {x.flag: x.suggested for r in a.recommendations for x in (r, *r.alternatives)}


def _f(fid: str, sev: str = "critical", **data) -> Finding:
    return Finding(id=fid, severity=sev, title="t", evidence="e", data=data)


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
