"""bench/tune_vs_grid.py (issue 31 item 5's proof) counts what the issue's goals count, without a
vLLM: tune's budget is a quarter of the grid's trials (its points, the ones it does not measure
included), tune runs with its own default A B B A remeasurement (never a budget that forbids it),
and the table reports trials (configurations) and launches apart; a cache measured before the
per-run seeds is refused."""

from __future__ import annotations

import importlib.util
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from observe.trials import Trial
from observe.tune import Budget
from observe.tune.loop import Outcome

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tvg() -> Iterator[ModuleType]:
    spec = importlib.util.spec_from_file_location("tune_vs_grid", ROOT / "bench" / "tune_vs_grid.py")
    assert spec is not None and spec.loader is not None
    mod = importlib.util.module_from_spec(spec)
    sys.modules["tune_vs_grid"] = mod  # its dataclasses look their module up while being made
    try:
        spec.loader.exec_module(mod)
        yield mod
    finally:
        sys.modules.pop("tune_vs_grid", None)


def test_the_tune_budget_is_a_quarter_of_the_grids_trials(tvg: ModuleType) -> None:
    for c in tvg.CASES.values():
        assert c.full == len(c.num_seqs) * len(c.batched)
        assert c.points == c.full - len(set(c.skip))  # the points measured
        assert c.tune_trials == max(2, c.full // 4)
    lp = tvg.CASES["long-prompt"]
    assert (lp.full, lp.points, lp.tune_trials) == (12, 6, 3)  # a quarter of 12, not of the 6 measured


def _trial(n: int, tps: list[float], outcome: str, order: str = "") -> Trial:
    t = Trial(n=n, flags={"--max-num-seqs": 4 * n}, argv=["vllm", "serve", "m"], outcome=outcome)
    t.runs = [{"output_throughput": v, "completed": 64, "failed": 0} for v in tps]
    if n > 1:
        t.change = {"flag": "--max-num-seqs", "from": 4, "to": 4 * n, "coupled": []}
        t.decision = {"gain": 0.1, "two_se": 0.05, "order": order}
    return t


def test_a_tune_record_counts_trials_and_launches_apart_with_tunes_default_remeasurement(
    tvg: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    seen: dict[str, Any] = {}

    class FakeTuner:
        def __init__(self, spec: Any, out: Path, *, budget: Budget, **_: Any) -> None:
            seen["budget"] = budget
            self.out = out

        def run(self) -> Outcome:  # 3 configurations; trial 2 remeasured A B B A: 2 more launches
            ts = [_trial(1, [300, 320], "baseline"), _trial(2, [350, 360, 340, 350], "kept", "BBAABB")]
            ts.append(_trial(3, [330, 340], "reverted", "BB"))
            return Outcome(ts, ts[1], "the trial budget (3) is spent", "throughput", {}, self.out,
                           launches=5, stop_reason="trial_budget")  # fmt: skip

    monkeypatch.setattr(tvg, "Tuner", FakeTuner)
    monkeypatch.setattr(tvg, "env", lambda: {})
    c = tvg.CASES["long-prompt"]
    rec = tvg.tune_run(c, tmp_path, "triple-poor")
    assert seen["budget"].trials == 3 and seen["budget"].max_repeats == Budget().max_repeats
    assert rec["trial_count"] == 3 and rec["launches"] == 5
    assert (
        json.loads((tmp_path / "tune-triple-poor.json").read_text())["budget"]["max_repeats"]
        == Budget().max_repeats
    )
    row = tvg.summary([(c, tmp_path)]).splitlines()[2]
    cells = [x.strip() for x in row.split("|")]
    assert cells[2] == "triple-poor" and cells[6] == "3 of 12 (25%)" and cells[7] == "5"
    assert cells[8] == "0 of 12" and cells[9] == "trial_budget" and cells[10] == "not run"


def test_a_cache_measured_before_the_per_run_seeds_is_refused(
    tvg: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    old = tmp_path / "long-prompt"
    old.mkdir()
    (old / "grid-64-8192.json").write_text("{}")
    ran: list[Any] = []
    monkeypatch.setattr(tvg, "chunk", lambda *a: ran.append(a) or True)
    monkeypatch.setattr(
        sys, "argv", ["tune_vs_grid.py", "--cache", str(tmp_path), "--workload", "long-prompt"]
    )
    assert tvg.main() == 2 and not ran
    assert "before per-run seeds" in capsys.readouterr().err
    # a fresh cache is marked, and a marked one is resumed
    (old / "grid-64-8192.json").unlink()
    assert tvg.main() == 0 and len(ran) == 1
    (old / "grid-64-8192.json").write_text("{}")
    assert tvg.main() == 0 and len(ran) == 2
