"""`observe tune`'s decisions (observe.trials, pure) and its report (observe.tune.report): which lever
moves next, keep or revert against the measured spread, failed trials, SLO constraints, the record.

The figures come from a real `vllm bench serve` result (tests/data/tune/bench-result.json, see
PROVENANCE.md); the decisions are checked on numbers that sit on either side of each rule."""

from __future__ import annotations

import json
from pathlib import Path

import jsonschema
import pytest

from observe import trials
from observe.errors import ConfigError
from observe.model import Finding, Recommendation
from observe.settings import Settings, from_mapping
from observe.tune import report
from observe.tune.loop import Outcome, Tuner

ROOT = Path(__file__).resolve().parents[1]
RESULT = json.loads((ROOT / "tests" / "data" / "tune" / "bench-result.json").read_text())
S = Settings()


def fig(
    tps: float, *, completed: float = 60, failed: float = 0, ttft: float = 500, tpot: float = 20, goodput=None
):
    return {
        **dict.fromkeys(trials.FIGURE_KEYS),
        "completed": completed,
        "failed": failed,
        "output_throughput": tps,
        "request_goodput": goodput,
        "p99_ttft_ms": ttft,
        "p99_tpot_ms": tpot,
    }


def test_figures_read_the_clients_json() -> None:
    f = trials.figures(RESULT)
    assert f["output_throughput"] == pytest.approx(735.19, abs=0.01)
    assert f["completed"] == 60 and f["failed"] == 0
    assert f["p99_ttft_ms"] == pytest.approx(1521.85, abs=0.01)
    assert f["request_goodput"] is None  # run without --goodput
    assert trials.objective(f, "throughput") == f["output_throughput"]
    assert trials.objective(f, "goodput") is None
    with pytest.raises(ValueError):
        trials.objective(f, "latency")


def test_error_share_and_failed_trial() -> None:
    assert trials.error_share(fig(100, completed=57, failed=3)) == pytest.approx(0.05)
    assert trials.error_share(fig(100, completed=0, failed=0)) == 1.0
    # 5 % is the limit: at it the trial stands, above it the trial failed however fast it was
    assert trials.failed_why([fig(100, completed=57, failed=3)], S) is None
    why = trials.failed_why([fig(9999, completed=56, failed=4)], S)
    assert why is not None and "7%" in why and "failed trial" in why


def test_spread_needs_two_runs() -> None:
    assert trials.spread([100.0]) is None
    assert trials.spread([90.0, 110.0]) == pytest.approx(0.2)


def test_noise_is_twice_the_standard_error_of_the_difference() -> None:
    # two runs 10 % apart: a standard error of 5 % of the mean; with a steady candidate, 2 × 5 % = 10 %
    assert trials.rel_sem([95, 105]) == pytest.approx(0.05)
    assert trials.noise([95, 105], [120, 120]) == pytest.approx(0.1)
    # both alike 10 % apart: 2 × √2 × 5 % ≈ 14 %
    assert trials.noise([95, 105], [114, 126]) == pytest.approx(0.1414, abs=1e-3)
    # more runs of the same spread narrow it (the range would not)
    four = [95, 105, 95, 105]
    assert trials.spread(four) == trials.spread([95, 105])
    assert trials.noise(four, [120, 120]) < trials.noise([95, 105], [120, 120])
    assert trials.rel_sem([100]) is None and trials.noise([100], [100]) == 0.0


def test_keep_only_when_gain_beats_the_measured_noise() -> None:
    # baseline 95..105 (noise ~10.5 % with the candidate's own): +20 % is kept, +8 % is not
    keep = trials.judge([95, 105], [118, 122], S)
    assert (
        keep.action == "keep"
        and keep.gain == pytest.approx(0.2)
        and keep.noise == pytest.approx(0.1054, abs=1e-3)
    )
    rev = trials.judge([95, 105], [107, 109], S)
    assert rev.action == "revert" and "not more than the measured noise" in rev.why
    assert rev.undecided  # +8 % beats tune_min_gain (3 %): more runs of the candidate could decide it
    # more runs of the same candidate narrow the noise until the gain counts
    assert trials.judge([95, 105, 95, 105], [107, 109, 108, 108, 108], S).action == "keep"
    # a loss, or a gain under tune_min_gain, is not undecided: more runs cannot make it a keep
    assert not trials.judge([100, 101], [50, 52], S).undecided
    assert not trials.judge([100, 100], [102, 102], S).undecided
    # the candidate's own spread counts too
    assert trials.judge([100, 100], [80, 160], S).action == "revert"
    # with no spread measured, tune_min_gain (3 %) is the floor
    assert trials.judge([100, 100], [102, 102], S).action == "revert"
    assert trials.judge([100, 100], [104, 104], S).action == "keep"
    assert trials.judge([100, 100], [104, 104], from_mapping({"tune_min_gain": 0.05})).action == "revert"
    # a loss is reverted
    assert trials.judge([100, 101], [50, 52], S).action == "revert"


def test_one_baseline_run_is_remeasured_not_judged() -> None:
    assert trials.judge([100], [200, 200], S).action == "remeasure"
    assert trials.judge([100, 100], [], S).action == "revert"


def test_a_kept_change_never_breaks_an_slo_the_baseline_met() -> None:
    base = fig(100, ttft=800)
    fast_but_slow_first = fig(200, ttft=1500)
    breaks = trials.slo_breaks(fast_but_slow_first, S)
    assert breaks == ["p99 TTFT 1,500 ms > 1,000 ms"]
    assert trials.slo_breaks(base, S) == []
    v = trials.judge([100, 100], [200, 200], S, cand_slo_breaks=breaks)
    assert v.action == "revert" and "SLO" in v.why
    # an SLO the start already broke does not veto a change that does not make it new
    v = trials.judge([100, 100], [200, 200], S, cand_slo_breaks=breaks, base_slo_breaks=breaks)
    assert v.action == "keep"


def test_goodput_slos_come_from_settings() -> None:
    assert trials.goodput_slos(S) == {"ttft": 1000.0, "tpot": 100.0}
    s = from_mapping({"ttft_slo_seconds": 0.5, "tune_e2el_slo_seconds": 4})
    assert trials.goodput_slos(s) == {"ttft": 500.0, "tpot": 100.0, "e2el": 4000.0}
    assert trials.slo_breaks(fig(1, ttft=100) | {"p99_e2el_ms": 4100.0}, s) == [
        "p99 E2EL 4,100 ms > 4,000 ms"
    ]


def test_settings_refuse_impossible_tune_fields() -> None:
    with pytest.raises(ConfigError):
        from_mapping({"tune_max_error_share": 1.5})
    with pytest.raises(ConfigError):
        from_mapping({"tune_e2el_slo_seconds": -1})


def rec(flag: str, value, ids=("queue_seq_bound",)) -> Recommendation:
    return Recommendation(flag=flag, current=2, suggested=value, reason="r", finding_ids=tuple(ids))


def test_next_change_is_the_plans_first_untried() -> None:
    plan = [rec("--max-num-seqs", 16), rec("--max-num-batched-tokens", 512, ["queue_prefill_bound"])]
    assert trials.next_change(plan, set()) is plan[0]
    assert trials.next_change(plan, {("--max-num-seqs", "16")}) is plan[1]
    # another value of a tried flag is another change
    assert trials.next_change([rec("--max-num-seqs", 32)], {("--max-num-seqs", "16")}).suggested == 32
    assert trials.next_change(plan, {trials.change_key(r) for r in plan}) is None


def test_motivating_finding() -> None:
    f = Finding(id="queue_seq_bound", severity="warning", title="t", evidence="waiting 14 at the cap of 2")
    m = trials.motivating(rec("--max-num-seqs", 16), [f])
    assert m == {"id": "queue_seq_bound", "severity": "warning", "title": "t", "evidence": f.evidence}


def outcome(tmp_path: Path) -> Outcome:
    t1 = trials.Trial(n=1, flags={"--max-num-seqs": "2"}, argv=["vllm", "serve", "m", "--max-num-seqs", "2"])
    t1.runs = [trials.figures(RESULT), trials.figures({**RESULT, "output_throughput": 700.0})]
    t1.outcome, t1.why = "baseline", "the starting configuration"
    t2 = trials.Trial(
        n=2,
        flags={"--max-num-seqs": 16},
        argv=["vllm", "serve", "m", "--max-num-seqs", "16"],
        change={"flag": "--max-num-seqs", "from": "2", "to": 16},
        finding={"id": "queue_seq_bound", "severity": "warning", "title": "t", "evidence": "e"},
        reason="r",
    )
    t2.runs = [trials.figures({**RESULT, "output_throughput": v}) for v in (2000.0, 2100.0)]
    t2.outcome, t2.why = "kept", "objective +180%"
    t3 = trials.Trial(
        n=3,
        flags={"--max-num-seqs": 16, "--max-num-batched-tokens": 4096},
        argv=["vllm", "serve", "m", "<script>"],
        change={
            "flag": "--max-num-seqs",
            "from": 16,
            "to": 4096,
            "coupled": [
                {"flag": "--max-num-batched-tokens", "from": None, "to": 4096, "why": "vLLM refuses"}
            ],
        },
    )
    t3.outcome, t3.why = "failed", "did not start: vLLM said <no>; reverted"
    return Outcome(
        trials=[t1, t2, t3],
        best=t2,
        stopped="the trial budget (3) is spent",
        objective="throughput",
        workload={"dataset": "random", "num_prompts": 60},
        out=tmp_path,
    )


def test_report_json_validates_and_names_the_winner(tmp_path: Path) -> None:
    doc = report.to_dict(outcome(tmp_path))
    schema = json.loads((ROOT / "observe" / "schemas" / "tune-v1.json").read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(doc, default=str)))
    assert doc["best"]["trial"] == 2 and doc["best"]["command"] == "vllm serve m --max-num-seqs 16"
    assert doc["best"]["gain_over_start"] == pytest.approx(2050 / ((735.1893013658623 + 700) / 2) - 1)
    assert [t["outcome"] for t in doc["trials"]] == ["baseline", "kept", "failed"]
    assert doc["trials"][0]["objective"]["spread"] == pytest.approx(35.1893013658623 / 717.5946506829312)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.Draft202012Validator(schema).validate({**doc, "trials": [{"trial": 0}]})


def test_report_text_and_html(tmp_path: Path) -> None:
    doc = report.to_dict(outcome(tmp_path))
    text = report.to_text(doc)
    assert "trial 2: --max-num-seqs 2 → 16 [queue_seq_bound]" in text
    assert "winning command:\n  vllm serve m --max-num-seqs 16" in text
    # a coupled change is one trial that names both flags
    assert "trial 3: --max-num-seqs 16 → 4096 with --max-num-batched-tokens (default) → 4096" in text
    assert "failed" in text
    html = report.to_html(doc)
    assert html.count("<svg") == 1 and html.count("<circle") == 4  # two runs each of trials 1 and 2
    assert "<script>" not in html and "&lt;no&gt;" in html  # what vLLM said is escaped
    assert "vllm serve m --max-num-seqs 16" in html


def _tuner(tmp_path: Path, env: dict[str, str]) -> tuple[Tuner, list[str]]:
    from observe.manage import parse_command
    from observe.tune.bench import Workload

    said: list[str] = []
    spec = parse_command(["vllm", "serve", "m", "--max-num-seqs", "2"])
    t = Tuner(spec, tmp_path, workload=Workload(), settings=S, python="python", env=env, notify=said.append)
    return t, said


def test_a_run_shorter_than_two_stats_intervals_is_said_once(tmp_path: Path) -> None:
    """A 4.5 s run under vLLM's default 10 s stats interval can fall between two stats lines (the
    managed real-vLLM test's 60 prompts did): said once; a run of 25 s, or under tune's own 2 s, is not."""
    t, said = _tuner(tmp_path, {"VLLM_LOG_STATS_INTERVAL": "10"})
    t._warn_short(25.0)
    assert said == []
    t._warn_short(4.5)
    t._warn_short(3.0)
    assert len(said) == 1 and "4.5 s" in said[0] and "(10 s)" in said[0] and "--num-prompts" in said[0]
    t, said = _tuner(tmp_path, {})  # observe tune's own launches: VLLM_LOG_STATS_INTERVAL=2
    t._warn_short(4.5)
    assert said == []
