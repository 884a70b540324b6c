"""Golden tests: `observe diagnose` on every real corpus log reproduces what an expert reads off it.

Each tests/data/corpus/NNN-*.log comes with the .json its curator wrote (source URL, version, the
facts, the expert's diagnosis); see tests/data/PROVENANCE.md. The numbers must match the
`normalized_facts`; the findings and recommendations must agree with `expert_diagnosis`
(EXPECT below paraphrases each one).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from observe import pipeline, report
from tests.diagnosekit import suggestions

CORPUS = Path(__file__).parent / "data" / "corpus"
LOGS = sorted(CORPUS.glob("*.log"))


def diag_json(path: Path) -> dict:
    return report.to_dict(pipeline.diagnose_paths([path]))


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem[:3])
def test_numbers_match_expert_facts(log: Path) -> None:
    facts = json.loads(log.with_suffix(".json").read_text())["normalized_facts"]
    d = diag_json(log)
    stats, events = d["stats"], d["events"]
    assert stats["samples"] == facts["stats_lines"]
    if facts["stats_lines"]:
        assert stats["max_kv_cache_usage_pct"] == pytest.approx(facts["max_gpu_kv_usage_pct"])
        assert stats["max_running"] == facts["max_running"]
        assert stats["max_waiting"] == facts["max_waiting"]
        assert d["sources"][0]["format"] == "vllm-" + facts["engine_format"]
    assert events["preemption_warnings"] == facts["preemption_warnings"]
    assert events["cumulative_preemptions"] == facts["max_total_num_cumulative_preemption"]
    assert events["oom_errors"] == facts["oom_errors"]
    assert events["spec_decode_lines"] == facts["spec_decode_lines"]


# ------------------------------------------------------------------ expectations, one row per corpus log
# Each row paraphrases the log's expert_diagnosis (and thread_recommendations) in its .json: the
# finding ids that must / must not be reported, values the findings' data must carry, and flag
# predicates on the plan. A row the advisor does not meet yet is marked xfail(strict=True) with what
# is missing: when the advisor meets it, the xfail fails and the mark must go.


@dataclass(frozen=True)
class Flag:
    """A predicate on the plan's suggestion for one flag: suggested or not, its direction against
    the value in force, and bounds. Every field set is checked."""

    flag: str
    suggested: bool = True
    direction: str | None = None  # "up" / "down" against the value in force (must be known)
    at_most: float | None = None
    at_least: float | None = None
    equals: Any = None

    def check(self, d: dict) -> str | None:
        """None when the plan meets it, else why not."""
        vals = suggestions(d).get(self.flag, [])
        if not self.suggested:
            bad = [v for v in vals if self._bounds_ok(v)] if self._bounded() else vals
            return f"{self.flag} suggested ({bad})" if bad else None
        if not vals:
            return f"no {self.flag} suggested; plan {suggestions(d)}"
        if not any(self._ok(v, d) for v in vals):
            return f"{self.flag} {vals} fails {self}"
        return None

    def _bounded(self) -> bool:
        return self.at_most is not None or self.at_least is not None

    def _bounds_ok(self, v: Any) -> bool:
        """For suggested=False with bounds: the values that are forbidden (inside the bounds)."""
        return (self.at_least is None or v >= self.at_least) and (self.at_most is None or v <= self.at_most)

    def _ok(self, v: Any, d: dict) -> bool:
        if self.equals is not None and v != self.equals:
            return False
        if self.at_most is not None and not (isinstance(v, (int, float)) and v <= self.at_most):
            return False
        if self.at_least is not None and not (isinstance(v, (int, float)) and v >= self.at_least):
            return False
        if self.direction is not None:
            cur = in_force(d, self.flag)
            if cur is None or not isinstance(v, (int, float)):
                return False
            return v > cur if self.direction == "up" else v < cur
        return True


@dataclass(frozen=True)
class AnyOf:
    """Several levers, any one of which answers the finding (the plan's alternatives)."""

    options: tuple[Flag, ...]

    def check(self, d: dict) -> str | None:
        fails = [o.check(d) for o in self.options]
        return None if any(f is None for f in fails) else "none of: " + "; ".join(str(f) for f in fails)


@dataclass(frozen=True)
class Data:
    """A value a finding's data must carry."""

    finding: str
    key: str
    ok: Callable[[Any], bool]
    says: str

    def check(self, d: dict) -> str | None:
        f = next((f for f in d["findings"] if f["id"] == self.finding), None)
        if f is None:
            return f"no {self.finding} finding"
        v = f["data"].get(self.key)
        return None if self.ok(v) else f"{self.finding}.data[{self.key!r}] = {v!r}, want {self.says}"


def no_kv_flags(*more: str) -> tuple[Flag, ...]:
    """Nothing to change on the KV cache (and the given flags): none of them suggested."""
    return tuple(
        Flag(f, suggested=False)
        for f in (
            "--gpu-memory-utilization",
            "--kv-cache-dtype",
            "--max-model-len",
            "--num-gpu-blocks-override",
        )
        + more
    )


def in_force(d: dict, flag: str) -> Any:
    eng = d["engine"]
    v = eng.get("flags", {}).get(flag)
    if v is None:
        v = eng.get(flag.lstrip("-").replace("-", "_"))
    return v


XF = pytest.mark.xfail


def _xfail(reason: str):
    return XF(strict=True, reason="advisor: " + reason)


# prefix → (ids that must be found, ids that must not, predicates, xfail mark or None)
Row = tuple[set, set, tuple, Any]
EXPECT: dict[str, Row] = {
    # KV (not compute) keeps requests out; V0 RECOMPUTE preemption never uses swap space
    "001": (
        {"queue_memory_bound"},
        {"queue_seq_bound", "swap_space_in_use", "swap_space_exhausted"},
        (
            AnyOf((Flag("--gpu-memory-utilization", at_least=0.91), Flag("--kv-cache-dtype", equals="fp8"))),
            Flag("--swap-space", suggested=False),
        ),
        None,
    ),
    # KV-bound at 95-98% with a queue: free KV (fp8); or cap --max-num-seqs against preemption thrash
    "003": (
        {"kv_cache_saturated", "queue_memory_bound"},
        set(),
        (Flag("--kv-cache-dtype", equals="fp8"), Flag("--max-num-seqs", at_most=64)),
        None,
    ),
    # KV > 92% and rising at 16 running: more KV, or fewer sequences
    "005": (
        {"kv_cache_saturated"},
        set(),
        (
            AnyOf(
                (
                    Flag("--gpu-memory-utilization", at_least=0.91),
                    Flag("--max-num-seqs", at_most=15),
                    Flag("--kv-cache-dtype", equals="fp8"),
                )
            ),
        ),
        None,
    ),
    # healthy: KV below 30%, no queue
    "007": (set(), {"kv_cache_saturated", "queue_memory_bound", "preemptions"}, no_kv_flags(), None),
    # single stream, nearly idle
    "009": (set(), {"kv_cache_saturated", "throughput_collapse"}, no_kv_flags("--max-num-seqs"), None),
    # recompute preemptions (cumulative 51) on long reasoning runs: raise --gpu-memory-utilization
    "011": (
        {"preemptions"},
        set(),
        (Flag("--gpu-memory-utilization", at_least=0.9), Flag("--swap-space", suggested=False)),
        None,
    ),
    # >= 101 recompute preemptions: more KV by TP, memory, or fp8
    "013": (
        {"preemptions"},
        set(),
        (
            AnyOf(
                (
                    Flag("--tensor-parallel-size", at_least=2),
                    Flag("--gpu-memory-utilization", at_least=0.91),
                    Flag("--kv-cache-dtype", equals="fp8"),
                )
            ),
        ),
        None,
    ),
    # KV 0.0% with one short request is rounding, not a bug
    "015": (set(), {"kv_cache_saturated", "throughput_collapse", "engine_stalled"}, no_kv_flags(), None),
    # KV 100%, 260 running, 475 waiting: fewer sequences beat thrashing
    "017": (
        {"kv_cache_saturated", "preemptions_likely", "queue_memory_bound"},
        set(),
        (Flag("--max-num-seqs", at_most=259),),
        None,
    ),
    # 1.3 full-length requests fit: any lever that adds KV or shortens the context
    "019": (
        {"low_max_concurrency"},
        set(),
        (
            AnyOf(
                (
                    Flag("--kv-cache-dtype", equals="fp8"),
                    Flag("--gpu-memory-utilization", at_least=0.91),
                    Flag("--tensor-parallel-size", at_least=2),
                    Flag("--max-model-len", at_most=32767),
                )
            ),
        ),
        None,
    ),
    # a crash in execute_model, not KV tuning; the exception itself is cut off
    "021": ({"engine_error"}, {"cuda_oom", "kv_cache_saturated"}, no_kv_flags(), None),
    # OOM while loading the weights: only TP / quantization / offload help
    "023": (
        {"cuda_oom"},
        set(),
        (
            Data("cuda_oom", "phase", lambda v: v == "loading_weights", "loading_weights"),
            Data("cuda_oom", "fragmentation", lambda v: v is False, "False (23 MiB reserved-unallocated)"),
            Flag("--tensor-parallel-size", at_least=2),
            Flag("--gpu-memory-utilization", suggested=False),
            Flag("--kv-cache-dtype", suggested=False),
        ),
        None,
    ),
    # low KV alone is nothing to fix
    "025": (
        set(),
        {"kv_cache_saturated", "queue_seq_bound", "queue_prefill_bound"},
        no_kv_flags("--max-num-seqs", "--block-size", "--enable-prefix-caching"),
        None,
    ),
    # stats lines minutes apart: the engine loop is stalled; prefix hits over-counted
    "027": ({"engine_stalled"}, {"throughput_collapse", "kv_cache_saturated"}, no_kv_flags(), None),
    # startup config only (102k context, eager): nothing measured to size the KV cache by
    "029": (set(), {"kv_cache_saturated", "max_model_len_exceeds_kv_cache"}, no_kv_flags(), None),
    # 2.38 full 256k contexts fit; PCIe TP is the cost, not KV
    "031": (set(), {"low_max_concurrency", "kv_cache_saturated"}, no_kv_flags(), None),
    # well matched: fp8 KV already, 2.36 contexts for max_num_seqs=2
    "033": (
        set(),
        {"kv_cache_saturated", "low_max_concurrency", "spec_decode_low_acceptance"},
        no_kv_flags(),
        None,
    ),
    # ~3,000 concurrent 1k-token requests fit: KV is no constraint
    "035": (set(), {"low_max_concurrency", "kv_cache_saturated"}, no_kv_flags(), None),
    # multi-node startup, 501,760 KV tokens: nothing failed
    "037": (
        set(),
        {"max_model_len_exceeds_kv_cache", "cuda_oom"},
        (Flag("--kv-cache-dtype", suggested=False),),
        None,
    ),
    # 229 blocks = 3,664 tokens < 4,096: --max-model-len 3664 or lower
    "039": (
        {"max_model_len_exceeds_kv_cache"},
        set(),
        (
            Data("max_model_len_exceeds_kv_cache", "max_model_len_fits", lambda v: v == 3664, "3664"),
            Flag("--max-model-len", at_most=3664, at_least=1024),
        ),
        None,
    ),
    # PP bottleneck stage: vLLM estimates 34,736 tokens fit
    "041": (
        {"max_model_len_exceeds_kv_cache"},
        set(),
        (
            Data("max_model_len_exceeds_kv_cache", "max_model_len_fits", lambda v: v == 34736, "34736"),
            Data("max_model_len_exceeds_kv_cache", "available_gib", lambda v: v == 3.18, "3.18"),
            Flag("--max-model-len", at_most=34736, at_least=16384),
        ),
        None,
    ),
    # 0.71 GiB of KV: --max-model-len <= 5632
    "043": (
        {"max_model_len_exceeds_kv_cache"},
        set(),
        (
            Data("max_model_len_exceeds_kv_cache", "max_model_len_fits", lambda v: v == 5632, "5632"),
            Flag("--max-model-len", at_most=5632, at_least=1024),
        ),
        None,
    ),
    # CPU backend, 90% prefix hits, one request: nothing to tune
    "045": (set(), {"kv_cache_saturated", "low_prefix_cache_hit_rate"}, no_kv_flags("--max-num-seqs"), None),
    # 64% acceptance with k=3 is reasonable
    "047": (
        set(),
        {"spec_decode_low_acceptance", "kv_cache_saturated"},
        (Flag("--num-speculative-tokens", suggested=False), Flag("--kv-cache-dtype", suggested=False)),
        None,
    ),
    # a 9,040-token prompt over the 4,000 limit: raise --max-model-len (not a memory problem)
    "049": (
        {"prompt_too_long"},
        set(),
        (
            Data("prompt_too_long", "prompt_tokens", lambda v: v == 9040, "9040"),
            Data("prompt_too_long", "limit", lambda v: v == 4000, "4000"),
            Flag("--max-model-len", at_least=9040),
            Flag("--kv-cache-dtype", suggested=False),
        ),
        None,
    ),
    # KV budget negative on a shared GPU: raise --gpu-memory-utilization (fp8 cannot help)
    "051": (
        {"no_kv_cache_memory"},
        set(),
        (
            Data("no_kv_cache_memory", "max_model_len_fits", lambda v: v == 0, "0"),
            Flag("--kv-cache-dtype", suggested=False),
            Flag("--max-model-len", suggested=False),
        ),
        None,
    ),
    # engine core failed at startup; the traceback is cut before its exception
    "053": (
        {"engine_startup_failed"},
        {"cuda_oom"},
        (
            Data("engine_startup_failed", "root_cause", lambda v: v is None, "None (cut before it)"),
            Flag("--kv-cache-dtype", suggested=False),
        ),
        None,
    ),
    # 70B on one GPU at 0.98: no headroom; never raise it further
    "055": (
        {"gpu_memory_utilization_high"},
        set(),
        (Flag("--gpu-memory-utilization", suggested=False, at_least=0.981),),
        None,
    ),
    # one request holds 77% of KV, 14 wait: cap the length or add KV capacity
    "057": (
        {"queue_memory_bound"},
        {"queue_seq_bound"},
        (AnyOf((Flag("--kv-cache-dtype", equals="fp8"), Flag("--max-model-len", direction="down"))),),
        None,
    ),
    # startup completed; generation-config defaults are no performance problem
    "059": (set(), {"kv_cache_saturated", "cuda_oom"}, no_kv_flags("--max-num-seqs"), None),
}


def _rows():
    for log in LOGS:
        row = EXPECT.get(log.stem[:3])
        marks = [row[3]] if row is not None and row[3] is not None else []
        yield pytest.param(log, marks=marks, id=log.stem[:3])


def test_every_corpus_log_has_an_expectation() -> None:
    stems = {p.stem[:3] for p in LOGS}
    assert len(LOGS) == len(list(CORPUS.glob("*.json"))) and stems
    assert stems == set(EXPECT), (
        f"without a row: {sorted(stems - set(EXPECT))}; stale: {sorted(set(EXPECT) - stems)}"
    )
    for prefix, (_, _, preds, _) in EXPECT.items():
        assert preds, f"{prefix}: a row needs at least one flag or data predicate"


@pytest.mark.parametrize("log", list(_rows()))
def test_findings_agree_with_expert(log: Path) -> None:
    must, must_not, preds, _ = EXPECT[log.stem[:3]]
    d = diag_json(log)
    ids = {f["id"] for f in d["findings"]}
    assert must <= ids, f"missing {must - ids}; found {ids}"
    assert not (must_not & ids), f"unexpected {must_not & ids}"
    fails = [why for p in preds if (why := p.check(d)) is not None]
    assert not fails, "; ".join(fails)


def test_the_predicates_can_fail() -> None:
    d = {
        "findings": [{"id": "x", "data": {"k": 1}}],
        "recommendations": [{"flag": "--max-model-len", "suggested": 5000}],
        "engine": {"flags": {"--max-model-len": 4096}},
    }
    assert Flag("--max-model-len", at_most=4000).check(d)
    assert Flag("--max-model-len", direction="down").check(d)
    assert Flag("--max-model-len", direction="up").check(d) is None
    assert Flag("--max-model-len", suggested=False).check(d)
    assert Flag("--kv-cache-dtype").check(d)
    assert Flag("--gpu-memory-utilization", suggested=False).check(d) is None
    assert AnyOf((Flag("--kv-cache-dtype"), Flag("--max-model-len", at_least=6000))).check(d)
    assert Data("x", "k", lambda v: v == 2, "2").check(d) and Data("y", "k", lambda v: True, "").check(d)


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.stem[:3])
def test_recommendations_are_one_coherent_plan(log: Path) -> None:
    d = diag_json(log)
    flags = [r["flag"] for r in d["recommendations"]]
    assert len(flags) == len(set(flags)), "one value per flag"
    engine = d["engine"]
    for r in d["recommendations"]:
        assert r["finding_ids"], "each recommendation answers a finding"
        assert set(r["finding_ids"]) <= {f["id"] for f in d["findings"]} | {"cuda_oom"}
        cur = engine["flags"].get(r["flag"])
        assert cur is None or str(cur) != str(r["suggested"]), "never a flag already at that value"
        if engine["engine"] == "v1":
            assert r["flag"] not in ("--swap-space", "--enable-chunked-prefill", "--preemption-mode")
    if d["recommendations"]:
        for r in d["recommendations"]:
            assert f"{r['flag']} {r['suggested']}" in d["command"]


def test_fp8_never_suggested_when_already_fp8() -> None:
    # 033: --kv-cache-dtype fp8_e5m2 is set in `non-default args`
    d = diag_json(next(CORPUS.glob("033-*.log")))
    assert d["engine"]["flags"]["--kv-cache-dtype"] == "fp8_e5m2"
    assert "--kv-cache-dtype" not in {r["flag"] for r in d["recommendations"]}


GOLDEN = Path(__file__).parent / "golden"


@pytest.mark.parametrize("stem", ["003", "041"])
def test_golden_markdown(stem: str, request) -> None:
    """The whole markdown report is checked in (tests/golden/); UPDATE_GOLDEN=1 rewrites it."""
    import os

    log = next(CORPUS.glob(f"{stem}-*.log"))
    text = report.render(pipeline.diagnose_paths([log]), "markdown").replace(str(log), log.name)
    gold = GOLDEN / f"diagnose-{stem}.md"
    if os.environ.get("UPDATE_GOLDEN"):
        gold.write_text(text)
    assert text == gold.read_text()


# ------------------------------------------------------------------ one row per failure form (issue 20)
# tests/data/forms/*.log: short logs in the wordings vLLM's own source prints, release by release (see
# tests/data/PROVENANCE.md and tests/test_parse_forms.py). Each row is what a senior engineer reads off
# the log; each fails if the parser misses the form or the detector its meaning.
FORMS = Path(__file__).parent / "data" / "forms"


def _is(v: Any) -> Callable[[Any], bool]:
    return lambda x: x == v


FORM_EXPECT: dict[str, Row] = {
    # a rank-prefixed traceback ending in an OOM while serving: the OOM, on rank 1
    "v0-rank-prefixed-oom-serving": (
        {"cuda_oom"},
        {"engine_error"},
        (Data("cuda_oom", "rank", _is(1), "rank 1"), Data("cuda_oom", "gpu", _is(1), "GPU 1")),
        None,
    ),
    # an OOM while a layer creates its weights: the weights phase (no batch or utilization lever helps)
    "v1-0.11-oom-creating-weights": (
        {"cuda_oom"},
        set(),
        (Data("cuda_oom", "phase", _is("loading_weights"), "loading_weights"),),
        None,
    ),
    # "RuntimeError: CUDA error: out of memory" while capturing CUDA graphs: an OOM, in that phase
    "v1-0.11-cudagraph-capture-oom": (
        {"cuda_oom"},
        {"engine_crashed"},
        (Data("cuda_oom", "phase", _is("cuda_graph_capture"), "cuda_graph_capture"),),
        None,
    ),
    # the V1 processor's "prompt (length N) is longer than the maximum model length of M": a rejected
    # request (a warning), not an engine error
    "v1-0.8.5-prompt-longer-than-max-model-len": (
        {"prompt_too_long"},
        {"engine_error", "engine_crashed", "engine_startup_failed"},
        (Data("prompt_too_long", "limit", _is(8192), "8192"),),
        None,
    ),
    # the OpenAI server's "your request has N input tokens" (0.10 → 0.11)
    "v1-0.11-request-has-input-tokens": (
        {"prompt_too_long"},
        {"engine_error", "engine_crashed"},
        (Data("prompt_too_long", "max_prompt_tokens", _is(5000), "5000"),),
        None,
    ),
    # "Engine core proc EngineCore_0 died unexpectedly" after serving: a crash, not a failed start
    "v1-0.10-engine-core-died": (
        {"engine_crashed"},
        {"engine_startup_failed"},
        (Data("engine_crashed", "process", _is("EngineCore_0"), "EngineCore_0"),),
        None,
    ),
    # a worker killed with SIGKILL (exit code -9): the crash names the signal
    "v1-0.32-worker-killed": (
        {"engine_crashed"},
        {"engine_startup_failed", "engine_error"},
        (Data("engine_crashed", "signal", _is("SIGKILL"), "SIGKILL"),),
        None,
    ),
    # an exception no rule knows while loading the weights: the engine failed to start, root cause KeyError
    "v1-0.11-unknown-error-loading": (
        {"engine_startup_failed"},
        set(),
        (
            Data(
                "engine_startup_failed",
                "root_cause",
                lambda v: bool(v) and v.get("type") == "KeyError",
                "KeyError",
            ),
        ),
        None,
    ),
    # an ERROR record and exception while serving, and the engine served on: a warning with its cause
    "v1-0.11-error-while-serving-continues": (
        {"engine_error"},
        set(),
        (
            Data("engine_error", "type", _is("UnicodeDecodeError"), "UnicodeDecodeError"),
            Data("engine_error", "phase", _is("serving"), "serving"),
            Data("engine_error", "failed", _is(None), "None (served on: a warning)"),
        ),
        None,
    ),
    # the engine core's own exception while serving, then EngineDeadError: a crash, its root cause named
    "v1-0.10-illegal-memory-access-crash": (
        {"engine_crashed"},
        {"engine_startup_failed", "engine_error"},
        (
            Data(
                "engine_crashed",
                "root_cause",
                lambda v: (
                    bool(v) and v.get("type") == "RuntimeError" and "illegal memory" in v.get("message", "")
                ),
                "RuntimeError: CUDA error: an illegal memory access",
            ),
        ),
        None,
    ),
    # Ctrl-C: the EngineDeadError, CancelledError and KeyboardInterrupt of a requested stop are quiet
    "v1-0.10-ctrl-c-quiet": (set(), {"engine_error", "engine_crashed", "engine_startup_failed"}, (), None),
}


def test_every_form_log_has_an_expectation() -> None:
    stems = {p.stem for p in FORMS.glob("*.log")} - {"failure-forms"}
    assert stems - {"v1-0.32-hang-warning"} == set(FORM_EXPECT)


@pytest.mark.parametrize("stem", sorted(FORM_EXPECT))
def test_form_log_findings(stem: str) -> None:
    must, must_not, preds, _ = FORM_EXPECT[stem]
    d = diag_json(FORMS / f"{stem}.log")
    ids = {f["id"] for f in d["findings"]}
    assert must <= ids, f"missing {must - ids}; found {ids}"
    assert not (must_not & ids), f"unexpected {must_not & ids}"
    fails = [why for p in preds if (why := p.check(d)) is not None]
    assert not fails, "; ".join(fails)
    serious = {f["id"] for f in d["findings"] if f["severity"] in ("critical", "warning")}
    assert bool(serious) == bool(must), serious
