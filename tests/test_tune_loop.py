"""`observe tune`'s loop (observe.tune.loop.Tuner) without a vLLM: a fake launcher (no process; a
launch folder per start), a fake benchmark client (each run's output tokens/s scripted per
configuration, in the order the runs come) and a fake diagnosis (a plan per configuration). The
decisions, the record and the exit codes are the real code's; the real client and vLLM are the
slow tests' (test_tune_realvllm.py).

What each test pins: the noise is decided by measuring the start and the change in turn (A B B A)
before a revert; a lever that stopped paying hands over to the next finding's; each stop reason;
Ctrl-C records the trial in flight as interrupted, exits 130 and names no unmeasured winner."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from click.testing import CliRunner

from observe import errors
from observe.cli import command
from observe.manage import LaunchSpec, Proposal, parse_command, read_history
from observe.model import Finding, Recommendation
from observe.settings import Settings
from observe.tune import Budget, Tuner, Workload, bench, loop, report
from tests.realvllm import free_port

ROOT = Path(__file__).resolve().parents[1]
S = Settings()
SEQS, BATCH, KV = "--max-num-seqs", "--max-num-batched-tokens", "--kv-cache-memory-bytes"


def rec(flag: str, value: Any, fid: str, alternatives: tuple[Recommendation, ...] = ()) -> Recommendation:
    return Recommendation(
        flag=flag, current=None, suggested=value, reason=f"{fid} calls for it", finding_ids=(fid,),
        alternatives=alternatives,
    )  # fmt: skip


def finding(fid: str) -> Finding:
    return Finding(id=fid, severity="warning", title=fid, evidence=f"{fid} seen")


class Rig:
    """The fakes: `tps(flags)` is an iterator of output tokens/s for the runs of that configuration
    (a new iterator per configuration, continued across its launches); `plan(flags)` its diagnosis."""

    def __init__(
        self,
        tps: Callable[[dict[str, Any]], Iterator[float]],
        plan: Callable[[dict[str, Any]], list[Recommendation]],
        *,
        interrupt_at: int | None = None,
        hang_at: tuple[int, Path] | None = None,
        failed: Callable[[dict[str, Any]], int] = lambda f: 0,
    ) -> None:
        self.tps, self.plan, self.failed = tps, plan, failed
        self.interrupt_at = interrupt_at  # the benchmark run (1-based, all configurations) Ctrl-C hits
        self.hang_at = hang_at  # (run, marker): that run writes the marker and waits for a signal
        self.launches: list[dict[str, Any]] = []
        self.runs: list[dict[str, Any]] = []
        self.seeds: list[tuple[int, int]] = []  # (launch, the workload's seed) of each run
        self.current: dict[str, Any] | None = None
        self._series: dict[str, Iterator[float]] = {}

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        rig = self

        class FakeLauncher:
            def __init__(self, spec: LaunchSpec, run_dir: Path, **_: Any) -> None:
                self.spec, self.run_dir, self.env = spec, run_dir, None
                self.launch_dir: Path | None = None
                run_dir.mkdir(parents=True, exist_ok=True)

            def start(self, timeout: float = 600.0) -> None:
                rig.launches.append(dict(self.spec.flags))
                self.launch_dir = self.run_dir / f"{len(rig.launches):03d}"
                self.launch_dir.mkdir()
                rig.current = dict(self.spec.flags)

            def stop(self, timeout: float = 30.0) -> None:
                rig.current = None

            def alive(self) -> bool:
                return rig.current is not None

            def snapshot(self, note: str = "") -> Path:
                assert self.launch_dir is not None
                return self.launch_dir / "metrics-1.txt"

        def run(python, url, model, tok, workload, result, **_: Any) -> dict[str, Any]:
            assert rig.current is not None, "a run with nothing launched"
            rig.runs.append(dict(rig.current))
            rig.seeds.append((len(rig.launches), workload.seed))
            if rig.interrupt_at == len(rig.runs):
                raise KeyboardInterrupt
            if rig.hang_at is not None and rig.hang_at[0] == len(rig.runs):
                rig.hang_at[1].write_text("in flight")
                time.sleep(120)  # a real SIGINT ends it
            key = json.dumps(rig.current, sort_keys=True)
            series = rig._series.setdefault(key, rig.tps(rig.current))
            bad = rig.failed(rig.current)
            return {"completed": 60 - bad, "failed": bad, "output_throughput": next(series), "duration": 30.0}

        def propose(spec: LaunchSpec, folder: Path, flags: Any) -> Proposal:
            recs = rig.plan(dict(spec.flags))
            found = [finding(f) for r in recs for f in r.finding_ids]
            return Proposal(
                before=spec, after=None, accepted=recs, rejected=[], findings=found, folder=folder
            )

        monkeypatch.setattr(loop, "Launcher", FakeLauncher)
        monkeypatch.setattr(loop, "propose", propose)
        monkeypatch.setattr(bench, "run", run)
        monkeypatch.setattr(bench, "preflight", lambda *a, **k: None)


def steady(*values: float) -> Iterator[float]:
    """The values given, then the last one for ever."""
    yield from values
    while True:
        yield values[-1]


START = ["vllm", "serve", "m", SEQS, "4"]


def tune_with(rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, **budget: Any) -> tuple[Tuner, Any]:
    rig.install(monkeypatch)
    said: list[str] = []
    t = Tuner(
        parse_command(START), tmp_path, workload=Workload(), settings=S, budget=Budget(**budget),
        python="python", env={}, notify=said.append,
    )  # fmt: skip
    return t, t.run()


def history(tmp_path: Path) -> list[dict[str, Any]]:
    return [e for e in read_history(tmp_path / "history.jsonl") if e["event"] == "trial"]


def validate(doc: dict[str, Any]) -> None:
    schema = json.loads((ROOT / "observe" / "schemas" / "tune-v1.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(json.loads(json.dumps(doc, default=str)))


def test_run_k_of_every_launch_sends_the_same_prompts_and_no_run_repeats_the_one_before(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """vLLM's prefix cache serves a repeated prompt set from the cache (more so the larger the KV
    cache): the runs on one launch take seeds seed, seed + 1, …, the same on every launch."""
    rig = Rig(
        lambda f: steady(80, 120, 100, 100) if str(f[SEQS]) == "4" else steady(110),
        lambda f: [rec(SEQS, 8, "queue_seq_bound")] if str(f[SEQS]) == "4" else [],
    )
    tune_with(rig, tmp_path, monkeypatch)
    by_launch: dict[int, list[int]] = {}
    for launch, seed in rig.seeds:
        by_launch.setdefault(launch, []).append(seed)
    assert len(by_launch) >= 3 and any(len(s) >= 2 for s in by_launch.values())
    for seeds in by_launch.values():
        assert seeds == list(range(len(seeds)))  # Workload().seed is 0


# ---------------------------------------------------------------- deciding under noise


def test_a_change_the_noise_leaves_undecided_is_measured_against_the_start_in_turn_and_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start measured 80, 120, 100 (a noisy host): +10 % is inside its ±23 % noise. Re-measured
    on its own launch the change stays inside it; relaunched in turn with the start (B B A A B B),
    both steady, the gain is told from the noise and kept."""
    rig = Rig(
        lambda f: steady(80, 120, 100, 100) if str(f[SEQS]) == "4" else steady(110),
        lambda f: [rec(SEQS, 8, "queue_seq_bound")] if str(f[SEQS]) == "4" else [],
    )
    _, o = tune_with(rig, tmp_path, monkeypatch)
    t2 = o.trials[1]
    assert t2.outcome == "kept" and o.best is t2
    assert [str(f[SEQS]) for f in rig.launches] == ["4", "8", "4", "8"]  # start, change, start, change
    assert t2.order == "BBAABB"
    d = t2.decision
    assert d is not None and d["action"] == "keep" and d["order"] == "BBAABB"
    assert d["gain"] == pytest.approx(0.10) and d["baseline_runs"] == 2 and d["candidate_runs"] == 4
    assert d["interval"] == pytest.approx([0.10, 0.10])  # both steady in turn: no spread left
    line = history(tmp_path)[1]
    assert line["decision"] == d and line["baseline_runs"] == [100.0, 100.0]
    assert "interleaved with the start (B B A A B B)" in line["why"]
    doc = report.to_dict(o)
    validate(doc)
    assert doc["launches"] == 4  # the interleaved relaunches are counted


def test_a_remeasurement_in_turn_is_launches_not_trials(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--trials counts configurations: with 2 the undecided change is still remeasured A B B A (4
    launches), kept, and the budget stops the tune before a third configuration; the report says
    both counts apart."""
    rig = Rig(
        lambda f: steady(80, 120, 100, 100) if str(f[SEQS]) == "4" else steady(110),
        lambda f: (
            [rec(SEQS, 8, "queue_seq_bound")] if str(f[SEQS]) == "4" else [rec(BATCH, 2048, "ttft_spikes")]
        ),
    )
    _, o = tune_with(rig, tmp_path, monkeypatch, trials=2)
    assert [t.outcome for t in o.trials] == ["baseline", "kept"] and o.stop_reason == "trial_budget"
    assert len(rig.launches) == o.launches == 4
    doc = report.to_dict(o)
    assert doc["launches"] == 4 and len(doc["trials"]) == 2
    text = report.to_text(doc)
    assert "spent: 2 trials (configurations measured) in 4 vLLM launches, 2 of them relaunches" in text


def test_a_change_is_recorded_under_its_own_flag_with_its_coupled_ones_after_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The KV growth carrying a --max-num-seqs step (a flag that comes first on the command line):
    the trial is the KV change with the step coupled, never the step twice (the bench's triple-poor
    rerun recorded `--max-num-seqs 16 → 64 with --max-num-seqs 16 → 64`)."""
    step = rec(SEQS, 16, "queue_memory_bound")
    grow = Recommendation(
        flag=KV,
        current=None,
        suggested="48M",
        reason="grow",
        finding_ids=("queue_memory_bound",),
        coupled=(step,),
    )
    rig = Rig(
        lambda f: steady(100, 100) if str(f[SEQS]) == "4" else steady(150),
        lambda f: [grow] if str(f[SEQS]) == "4" else [],
    )
    _, o = tune_with(rig, tmp_path, monkeypatch)
    assert rig.launches[1][KV] == "48M" and str(rig.launches[1][SEQS]) == "16"
    c = o.trials[1].change
    assert c is not None and (c["flag"], c["to"]) == (KV, "48M")
    assert [(x["flag"], x["from"], x["to"]) for x in c["coupled"]] == [(SEQS, 4, 16)]
    assert "trial 2: --kv-cache-memory-bytes (default) → 48M with --max-num-seqs 4 → 16" in report.to_text(
        report.to_dict(o)
    )


def test_still_undecided_at_max_repeats_is_reverted_with_its_interval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    rig = Rig(
        lambda f: (
            steady(90, 110, 100, 90, 110) if str(f[SEQS]) == "4" else steady(98, 118, 108, 98, 118, 108)
        ),
        lambda f: [rec(SEQS, 5, "queue_seq_bound")] if str(f[SEQS]) == "4" else [],
    )
    _, o = tune_with(rig, tmp_path, monkeypatch, max_repeats=6)
    t2 = o.trials[1]
    assert t2.outcome == "reverted" and o.best is o.trials[0]
    assert [str(f[SEQS]) for f in rig.launches] == ["4", "5", "4", "5"]
    assert t2.order == "BBBAABB" and len(t2.runs) == 5  # 3 + 2: another round would pass 6
    d = t2.decision
    assert d is not None and d["undecided"] and d["action"] == "revert"
    low, high = d["interval"]
    assert low < 0 < d["gain"] < high  # +8 %, the interval spans no gain: not trusted
    assert "still undecided at 5 runs (--max-repeats 6)" in t2.why
    text = report.to_text(report.to_dict(o))
    assert "± " in text and "2·SE" in text


# ---------------------------------------------------------------- the next lever


def test_a_lever_that_stopped_paying_hands_over_to_the_next_findings_lever(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The start's diagnosis names only the sequences; raised, they do not pay (KV binds them), and
    that launch's diagnosis names the KV cache: its lever is tried on the start, and it pays."""

    def tps(f: dict[str, Any]) -> Iterator[float]:
        return steady(150) if KV in f else steady(100)

    def plan(f: dict[str, Any]) -> list[Recommendation]:
        if KV in f:
            return []
        if str(f[SEQS]) == "4":
            return [rec(SEQS, 8, "queue_seq_bound")]
        return [rec(SEQS, 16, "queue_seq_bound"), rec(KV, "12M", "kv_cache_saturated")]

    _, o = tune_with(rig := Rig(tps, plan), tmp_path, monkeypatch)
    assert [t.outcome for t in o.trials] == ["baseline", "reverted", "kept"]
    t3 = o.trials[2]
    assert t3.flags == {SEQS: 4, KV: "12M"}  # on the start's flags, the spent lever left as it was
    assert t3.finding is not None and t3.finding["id"] == "kv_cache_saturated"
    assert o.stop_reason == "no_finding" and o.best is t3
    assert len(rig.launches) == 3


def test_the_plans_alternative_is_tried_when_its_first_lever_stopped_paying(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    alt = rec(BATCH, 2048, "queue_prefill_bound")
    rig = Rig(
        lambda f: steady(130) if BATCH in f else steady(100),
        lambda f: [rec(SEQS, 8, "queue_prefill_bound", (alt,))] if f == {SEQS: 4} else [],
    )
    _, o = tune_with(rig, tmp_path, monkeypatch)
    assert [t.outcome for t in o.trials] == ["baseline", "reverted", "kept"]
    assert o.trials[2].flags == {SEQS: 4, BATCH: 2048}


# ---------------------------------------------------------------- why it stopped


def _plan3(f: dict[str, Any]) -> list[Recommendation]:
    return [rec(SEQS, 8, "queue_seq_bound"), rec(BATCH, 1024, "queue_prefill_bound"), rec(KV, "12M", "kv")]


@pytest.mark.parametrize(
    ("case", "budget", "reason", "outcomes"),
    [
        ("nothing to change", {}, "no_finding", ["baseline"]),
        ("two levers flat", {}, "plateau", ["baseline", "reverted", "reverted"]),
        ("trials", {"trials": 2}, "trial_budget", ["baseline", "reverted"]),
        ("time", {"seconds": 1e-9}, "time_budget", ["baseline"]),
        ("start fails", {}, "start_failed", ["failed"]),
    ],
)
def test_each_stop_reason_is_said(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, case: str, budget: dict, reason: str, outcomes: list[str]
) -> None:
    rig = Rig(
        lambda f: steady(100),
        (lambda f: []) if case == "nothing to change" else _plan3,
        failed=lambda f: 60 if case == "start fails" else 0,
    )
    _, o = tune_with(rig, tmp_path, monkeypatch, **budget)
    assert [t.outcome for t in o.trials] == outcomes
    assert o.stop_reason == reason
    doc = report.to_dict(o)
    validate(doc)
    assert doc["stop_reason"] == reason and f"[{reason}]" in report.to_text(doc)
    if reason == "plateau":  # a third finding was left: the plateau, not the plan, stopped it
        assert "2 levers in a row did not pay (--max-num-seqs, --max-num-batched-tokens)" in o.stopped


# ---------------------------------------------------------------- Ctrl-C


def _cli_tune(tmp_path: Path, *extra: str) -> Any:
    port = free_port()
    return CliRunner().invoke(
        command(),
        ["tune", "--out", str(tmp_path / "out"), *extra, "--", *START, "--port", str(port)],
        prog_name="observe",
    )


@pytest.mark.parametrize("at_run", [3, 1])
def test_ctrl_c_mid_trial_exits_130_with_the_trial_interrupted_and_no_unmeasured_winner(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, at_run: int
) -> None:
    """Ctrl-C during the change's first run (run 3), or during the start's (run 1)."""
    rig = Rig(lambda f: steady(100), lambda f: [rec(SEQS, 8, "queue_seq_bound")], interrupt_at=at_run)
    rig.install(monkeypatch)
    r = _cli_tune(tmp_path)
    assert r.exit_code == errors.EXIT_INTERRUPTED
    assert "Traceback" not in r.stderr
    err = [ln for ln in r.stderr.splitlines() if ln.startswith("observe: error:")]
    assert len(err) == 1 and "interrupted (Ctrl-C) during trial" in err[0]
    out = tmp_path / "out"
    lines = history(out)
    assert lines[-1]["outcome"] == "interrupted" and lines[-1]["trial"] == (2 if at_run == 3 else 1)
    doc = json.loads((out / "report.json").read_text())
    assert doc["stop_reason"] == "interrupted" and "winning command" not in r.stdout
    text = (out / "report.txt").read_text()
    if at_run == 3:  # the start was measured: it is the best, the change is not
        assert doc["best"]["trial"] == 1 and f"{SEQS} 8" not in doc["best"]["command"]
        assert "best measured: trial 1" in err[0]
    else:
        assert doc["best"] is None and "winning command" not in text
        assert "no configuration was measured" in err[0]
    assert [t["outcome"] for t in doc["trials"]] == [t["outcome"] for t in lines]


# ---------------------------------------------------------------- the bench client's budget


def test_max_repeats_below_repeats_is_refused(tmp_path: Path) -> None:
    r = _cli_tune(tmp_path, "--repeats", "3", "--max-repeats", "2")
    assert r.exit_code == errors.EXIT_USAGE and "--max-repeats must be at least --repeats (3)" in r.stderr
    assert not (tmp_path / "out").exists()


CHILD = """
import sys
from pathlib import Path
import pytest
from observe.cli import main
from tests.test_tune_loop import Rig, rec, steady, SEQS
marker, port = Path(sys.argv[1]), sys.argv[3]
Rig(lambda f: steady(100), lambda f: [rec(SEQS, 8, "queue_seq_bound")], hang_at=(3, marker)).install(
    pytest.MonkeyPatch()
)
sys.argv = ["observe", "tune", "--out", sys.argv[2], "--", "vllm", "serve", "m", SEQS, "4", "--port", port]
main()
"""


def test_a_real_sigint_during_a_trial_exits_130_with_the_record(tmp_path: Path) -> None:
    """SIGINT, as the terminal sends it, to an `observe tune` whose third benchmark run (the
    change's first) is in flight."""
    marker, out = tmp_path / "in-flight", tmp_path / "out"
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}, "PYTHONPATH": str(ROOT)}
    p = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(marker), str(out), str(free_port())],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=ROOT,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not marker.exists():
            assert p.poll() is None and time.monotonic() < deadline, p.stderr and p.stderr.read()
            time.sleep(0.05)
        p.send_signal(signal.SIGINT)
        stdout, stderr = p.communicate(timeout=120)
    finally:
        if p.poll() is None:
            p.kill()
    assert p.returncode == errors.EXIT_INTERRUPTED, stderr
    assert "Traceback" not in stderr and "winning command" not in stdout
    assert stderr.splitlines()[-1].startswith("observe: error: interrupted (Ctrl-C) during trial 2")
    assert [(t["trial"], t["outcome"]) for t in history(out)] == [(1, "baseline"), (2, "interrupted")]
    assert json.loads((out / "report.json").read_text())["best"]["trial"] == 1
