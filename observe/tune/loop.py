"""The tuning loop: launch, measure with `vllm bench serve`, diagnose, move the one lever the plan
ranks first, relaunch, measure again; keep the change only when the gain beats the measured noise
(while it is undecided, the start and the change relaunched in turn, A B B A, up to
`Budget.max_repeats` runs); a lever that stopped paying hands over to the next finding's, until no
finding is left, two levers in a row did not pay, or the budget is spent (`STOP_REASONS`).

Each launch runs through `manage.Launcher` (its own folder: vLLM's log and /metrics snapshots, so
`observe diagnose OUT/launches/NNN` reads any of them); each trial is one line of
`OUT/history.jsonl` (`trials.Trial.to_dict`). The decisions are `observe.trials`' (pure).
"""

from __future__ import annotations

import dataclasses
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from observe import trials
from observe.errors import ConfigError, ObserveError
from observe.flags import vllmflags
from observe.manage import Launcher, LaunchError, LaunchSpec, VllmFlags, apply, propose, record
from observe.model import Recommendation
from observe.settings import Settings
from observe.trials import OBJECTIVES, Trial
from observe.tune import bench
from observe.tune.bench import Workload, WorkloadError

# vLLM prints its stats line every 10 s by default (vllmflags.stats_interval_s); a short benchmark
# would leave the diagnosis one line or none. The operator's own setting (stats_interval_env) wins.
STATS_INTERVAL_S = "2"


def model_name(spec: LaunchSpec) -> str:
    """The name the server answers to: --served-model-name (its first), else the model."""
    name = spec.get("--served-model-name")
    if isinstance(name, list):
        name = name[0]
    return str(name or spec.model)


def tokenizer(spec: LaunchSpec) -> str | None:
    """The tokenizer the client counts tokens with: the server's --tokenizer, else the model."""
    tok = spec.get("--tokenizer")
    return str(tok) if isinstance(tok, str) else spec.model


@dataclass
class Budget:
    trials: int = 6  # configurations measured, the baseline's included
    seconds: float = 1800.0
    repeats: int = 2  # measurements of each configuration on its launch (and per interleaved launch)
    # a candidate's runs at most: while its gain is between tune_min_gain and the noise, the baseline
    # and the candidate are relaunched in turn (A B B A), `repeats` runs each, up to this many
    max_repeats: int = 6
    plateau: int = 2  # stop when this many levers in a row stopped paying (reverted) since the last keep


# why a tune stopped (`Outcome.stop_reason`, the report's `stop_reason`)
STOP_REASONS = ("no_finding", "plateau", "trial_budget", "time_budget", "interrupted", "start_failed")


@dataclass
class Outcome:
    """The loop's result: every trial, the best one, why it stopped."""

    trials: list[Trial]
    best: Trial | None
    stopped: str
    objective: str
    workload: dict[str, Any]
    out: Path
    started_at: str = ""
    rejected: list[dict[str, Any]] = field(default_factory=list)
    launches: int | None = None  # vLLM launches the tune made (None: not counted, one per trial)
    stop_reason: str = ""  # one of STOP_REASONS
    interrupted: bool = False  # Ctrl-C: the trial in flight is recorded `interrupted`


def _change(flag: str, rec: Recommendation, before: dict[str, Any], after: dict[str, Any]) -> dict[str, Any]:
    """A trial's change: the one lever moved, and the changes coupled to it (vLLM refuses the lever
    alone), each with the plan's reason why."""
    return {
        "flag": flag,
        "from": before.get(flag, rec.current),
        "to": after.get(flag),
        "coupled": [
            {"flag": c.flag, "from": before.get(c.flag, c.current), "to": after.get(c.flag), "why": c.reason}
            for c in rec.coupled
        ],
    }


class Tuner:
    """One tuning session over a launch command. Nothing here prints: `notify` gets one line per
    step (the CLI prints them)."""

    def __init__(
        self,
        spec: LaunchSpec,
        out: Path,
        *,
        workload: Workload,
        settings: Settings,
        objective: str = "throughput",
        budget: Budget | None = None,
        flags: VllmFlags | None = None,
        python: str,
        env: dict[str, str] | None = None,
        notify: Callable[[str], None] = lambda s: None,
        echo: IO[str] | None = None,
        stop: threading.Event | None = None,
        launch_timeout: float = 600.0,
        snapshot_every: float = 5.0,
        launcher: Launcher | None = None,
        running: bool = False,
    ) -> None:
        """`launcher`: an existing one (`observe run`'s) instead of a new one under OUT/launches,
        each trial a launch of its own; with it the instance is left RUNNING the best configuration
        at the end (`settle`). `running`: that launcher already runs `spec`, so trial 1 is measured
        on that launch without relaunching."""
        if objective not in trials.OBJECTIVES:
            raise ObserveError(f"--objective must be one of {', '.join(trials.OBJECTIVES)}")
        self.spec = spec
        self.out = out
        self.workload = workload
        self.settings = settings
        self.objective = objective
        self.budget = budget or Budget()
        self.flags = flags
        self.python = python
        env = dict(os.environ if env is None else env)
        env.setdefault(vllmflags.stats_interval_env(), STATS_INTERVAL_S)
        self.managed = launcher is not None
        self.launcher = launcher or Launcher(spec, out / "launches", env=env, echo=echo)
        self._adopt = running and launcher is not None and launcher.alive()
        self.notify = notify
        self.stop = stop or threading.Event()
        self.launch_timeout = launch_timeout
        self.snapshot_every = snapshot_every
        self.history = out / "history.jsonl"
        self.trials: list[trials.Trial] = []
        self.launches = 0  # launcher starts made by this tune (settling relaunch included)
        self.rejected: list[dict[str, Any]] = []
        self.noisy = 2 * settings.tune_min_gain
        self.interrupted = False
        self._started = time.monotonic()
        self._warned_short = False
        self._findings: dict[str, Any] = {}
        self._plan: list[Recommendation] = []

    # ------------------------------------------------------------ one measurement

    @property
    def model_name(self) -> str:
        return model_name(self.spec)

    @property
    def tokenizer(self) -> str | None:
        return tokenizer(self.spec)

    def _measure(self, trial: trials.Trial, k: int) -> dict[str, float | None]:
        """One benchmark run on the running launch, with /metrics snapshots around and during it."""
        folder = self.launcher.launch_dir
        assert folder is not None
        done = threading.Event()

        def snapshots() -> None:
            while not done.wait(self.snapshot_every):
                try:
                    self.launcher.snapshot("tune")
                except (OSError, ObserveError):
                    pass

        self.launcher.snapshot(f"tune before run {k}")
        t = threading.Thread(target=snapshots, daemon=True)
        t.start()
        # run k of every launch sends the same prompts (seed + k - 1), and no run repeats the one
        # before it on the same launch: vLLM's prefix cache would serve a repeat from the cache, and
        # more so the larger the KV cache, which favoured large caches over the measured lever
        workload = dataclasses.replace(self.workload, seed=self.workload.seed + k - 1)
        try:
            doc = bench.run(
                self.python,
                self.launcher.spec.url,
                self.model_name,
                self.tokenizer,
                workload,
                self.out / "bench" / f"{folder.name}-{k}.json",
                goodput=trials.goodput_slos(self.settings) if self.objective == "goodput" else None,
                log=self.out / "bench" / f"{folder.name}-{k}.txt",
            )
        finally:
            done.set()
            t.join(timeout=10)
        self.launcher.snapshot(f"tune after run {k}")
        fig = trials.figures(doc)
        self._warn_short(fig.get("duration"))
        return fig

    def _stats_interval(self) -> float:
        """vLLM's stats-line interval in force for the launcher's vLLM (its env; vLLM's default 10 s)."""
        env = self.launcher.env if self.launcher.env is not None else os.environ
        try:
            return float(env[vllmflags.stats_interval_env()])
        except (KeyError, ValueError):
            return vllmflags.stats_interval_s()

    def _warn_short(self, duration: float | None) -> None:
        """Once: a measured run shorter than two stats intervals may fall between vLLM's stats lines,
        and the diagnosis then sees no load to name a lever by."""
        every = self._stats_interval()
        if duration is None or duration >= 2 * every or self._warned_short:
            return
        self._warned_short = True
        self.notify(
            f"a measured run took {duration:.1f} s, less than two of vLLM's stats intervals ({every:g} s): "
            "the diagnosis may see no load between its stats lines; raise --num-prompts"
            + (f" (or {vllmflags.stats_interval_env()} for the managed vLLM)" if self.managed else "")
        )

    def _launch_and_measure(self, trial: trials.Trial, repeats: int) -> None:
        """Launch `trial`'s flags and measure them `repeats` times (one more where the runs disagree)."""
        t0 = time.monotonic()
        self.launcher.spec = self._spec(trial.flags)
        try:
            if self._adopt:  # trial 1 on the launch the caller runs already: measured, not relaunched
                self._adopt = False
            else:
                self._start()
            trial.dir = str(self.launcher.launch_dir)
            k = 0
            while not self.stop.is_set() and k < repeats + 1:
                k += 1
                trial.runs.append(self._measure(trial, k))
                if k >= repeats and (trials.spread(trial.values(self.objective)) or 0.0) <= self.noisy:
                    break  # a third run only where the first two disagree by more than `noisy`
        finally:
            trial.dir = trial.dir or str(self.launcher.launch_dir)
            trial.seconds = round(time.monotonic() - t0, 1)

    def _spec(self, flags: dict[str, Any]) -> LaunchSpec:
        return LaunchSpec(
            program=self.spec.program, form=self.spec.form, model=self.spec.model, flags=dict(flags)
        )

    def _segment(self, trial: trials.Trial, flags: dict[str, Any], letter: str) -> None:
        """One launch of an interleaved remeasurement: `flags` relaunched, `repeats` runs, kept in
        `trial.base_runs` (A, the baseline) or `trial.runs` (B, the candidate)."""
        t0 = time.monotonic()
        self.launcher.stop()
        self.launcher.spec = self._spec(flags)
        try:
            self._start()
            runs = trial.base_runs if letter == "A" else trial.runs
            for k in range(1, self.budget.repeats + 1):
                if self.stop.is_set():
                    break
                runs.append(self._measure(trial, k))
                trial.order += letter
        finally:
            trial.seconds = round((trial.seconds or 0.0) + time.monotonic() - t0, 1)

    def _start(self) -> None:
        """Launch the launcher's spec, counting it (a managed tune's trial 1 is no launch)."""
        self.launches += 1
        self.launcher.start(timeout=self.launch_timeout)

    def _record(self, trial: trials.Trial) -> None:
        record(self.history, "trial", **trial.to_dict(self.objective, self.workload.to_dict()))

    def _breaks(self, trial: trials.Trial) -> list[str]:
        if self.objective != "goodput":
            return []
        return sorted({b for r in trial.runs for b in trials.slo_breaks(r, self.settings)})

    # ------------------------------------------------------------ the loop

    def _diagnose(self, trial: trials.Trial, tried: set[tuple[str, str]]) -> Recommendation | None:
        """The next change for the configuration `trial` measured: the plan's first untried one that
        the installed vLLM's parser accepts."""
        self._findings = {}
        self._plan = self._plan_of(trial, tried)
        return trials.next_change(self._plan, tried)

    def _plan_of(self, trial: trials.Trial, tried: set[tuple[str, str]]) -> list[Recommendation]:
        """The accepted recommendations of the diagnosis of `trial`'s launch (its findings kept to
        name the finding behind each trial; the ones vLLM rejects listed once, never tried)."""
        if trial.dir is None:
            return []
        prop = propose(self._spec(trial.flags), Path(trial.dir), self.flags)
        for r, why in prop.rejected:
            row = {"flag": r.flag, "suggested": r.suggested, "why": why}
            if row not in self.rejected:
                self.rejected.append(row)
            tried.add(trials.change_key(r))
        self._findings.update({f.id: f for f in prop.findings})
        return list(prop.accepted)

    def run(self) -> Outcome:
        self.out.mkdir(parents=True, exist_ok=True)
        self._started = time.monotonic()
        tried: set[tuple[str, str]] = set()
        start = trials.Trial(n=1, flags=dict(self.spec.flags), argv=self.spec.argv)
        best: trials.Trial | None = None  # the best configuration measured
        self.trials.append(start)
        self._findings, self._plan = {}, []
        stopped, reason = "", ""
        try:
            self.notify(f"trial 1 (baseline): {self.spec.command()}")
            try:
                self._launch_and_measure(start, self.budget.repeats)
            except LaunchError as e:
                start.outcome, start.why = "failed", f"the starting command did not start: {e}"
                self._record(start)
                raise
            finally:
                if not self.managed:
                    self.launcher.stop()
            if self.stop.is_set() and len(start.runs) < self.budget.repeats:
                start.outcome, start.why = "interrupted", "stopped before the start was measured"
                self._record(start)
                return self._outcome(None, "interrupted before the start was measured", "interrupted")
            why = trials.failed_why(start.runs, self.settings)
            if why:
                start.outcome, start.why = "failed", why
                self._record(start)
                return self._outcome(None, f"the starting configuration failed: {why}", "start_failed")
            start.outcome, start.why = "baseline", "the starting configuration"
            self._record(start)
            best = start
            stopped, reason = self._loop(best, tried)
        except KeyboardInterrupt:
            self.stop.set()
            self.interrupted = True  # a managed tune's caller ends its session after `settle`
            for t in self.trials:
                if t.outcome == "pending":
                    t.outcome, t.why = (
                        "interrupted",
                        f"Ctrl-C during the trial ({len(t.runs)} runs measured): not judged",
                    )
                    self._record(t)
            stopped, reason = (
                "interrupted (Ctrl-C): the best configuration measured so far is kept",
                "interrupted",
            )
        finally:
            good = [t for t in self.trials if t.outcome in ("baseline", "kept")]
            best = good[-1] if good else None
            if self.managed:
                self.settle(best)
            else:
                self.launcher.stop()
        return self._outcome(best, stopped, reason)

    def _loop(self, best: trials.Trial, tried: set[tuple[str, str]]) -> tuple[str, str]:
        """Trials after the baseline until a stop reason: (the words, the STOP_REASONS code)."""
        spent: set[str] = set()  # levers that stopped paying (reverted) since the last kept change
        flat: list[str] = []  # those levers in order: `Budget.plateau` of them in a row is a plateau
        extra: list[Recommendation] = []  # the other findings' levers, from the reverted trials' diagnoses
        rec = self._diagnose(best, tried)
        while True:
            if self.stop.is_set():
                return "interrupted: the best configuration measured so far is kept", "interrupted"
            if rec is None:
                if len(self.trials) == 1:
                    return "no finding calls for a change", "no_finding"
                return (
                    "no finding is left with a lever to try (the levers the findings named did not pay)",
                    "no_finding",
                )
            if len(self.trials) >= self.budget.trials:
                return f"the trial budget ({self.budget.trials}) is spent", "trial_budget"
            if self._time_left() <= 0:
                return f"the time budget ({self.budget.seconds:.0f} s) is spent", "time_budget"
            self.launcher.stop()  # a no-op unless the managed baseline still runs
            self._trial(best, rec, tried)
            last = self.trials[-1]
            if last.outcome == "kept":
                best = last
                spent.clear()
                flat.clear()
                extra.clear()
                rec = self._diagnose(best, tried)
                continue
            if last.outcome == "reverted":
                spent.add(rec.flag)
                flat.append(rec.flag)
                if len(set(flat)) >= self.budget.plateau:
                    return (
                        f"the objective plateaued: {len(set(flat))} levers in a row did not pay "
                        f"({', '.join(dict.fromkeys(flat))})",
                        "plateau",
                    )
                try:  # the findings of the configuration it measured: what binds once it moved
                    extra += self._plan_of(last, tried)
                except ObserveError as e:
                    self.notify(
                        f"  trial {last.n}'s launch could not be diagnosed ({e}): its findings are not used"
                    )
            rec = trials.next_change([*self._plan, *extra], tried, spent)
            if rec is not None and last.outcome == "reverted":
                self.notify(
                    f"  {last.change and last.change.get('flag')} stopped paying: next lever {rec.flag}"
                )

    def _time_left(self) -> float:
        return self.budget.seconds - (time.monotonic() - self._started)

    def _judge(self, best: trials.Trial, cand: trials.Trial) -> trials.Verdict:
        """The candidate against the baseline: against the baseline's runs interleaved with its own
        when there are any (the same stretch of time), else the baseline's own runs."""
        base = [v for v in (trials.objective(r, self.objective) for r in cand.base_runs) if v is not None]
        v = trials.judge(
            base or best.values(self.objective),
            cand.values(self.objective),
            self.settings,
            cand_slo_breaks=self._breaks(cand),
            base_slo_breaks=self._breaks(best),
        )
        if v.undecided and trials.failed_why(cand.runs, self.settings):
            return trials.Verdict(v.action, v.why, v.gain, v.noise, False, v.two_se, v.runs)
        return v

    def _may_interleave(self, cand: trials.Trial) -> bool:
        """Room for one more A B round: the candidate's runs stay within `Budget.max_repeats`, time
        is left, no stop was asked."""
        return (
            not self.stop.is_set()
            and len(cand.runs) + self.budget.repeats <= self.budget.max_repeats
            and self._time_left() > 0
        )

    def settle(self, best: trials.Trial | None) -> None:
        """Managed: leave the launcher running `best`'s flags (the starting command without a
        best), relaunched only when something else runs or nothing does; if that launch fails,
        the starting command again. LaunchError only when neither starts."""
        want = self._spec(best.flags if best else self.spec.flags)
        if self.launcher.alive() and self.launcher.spec.argv == want.argv:
            return
        self.launcher.stop()
        self.launcher.spec = want
        self.notify(f"leaving vLLM running the best configuration: {want.command()}")
        try:
            self._start()
        except LaunchError as e:
            if want.argv == self.spec.argv:
                raise
            self.notify(f"  it did not start ({e}); starting the starting command again")
            self.launcher.spec = self.spec
            self._start()

    def _trial(self, best: trials.Trial, rec: Recommendation, tried: set[tuple[str, str]]) -> None:
        """One candidate: `best`'s flags with `rec` applied, launched, measured, judged; while the
        noise leaves it undecided, the baseline and the candidate relaunched in turn (A B B A)."""
        tried.add(trials.change_key(rec))
        new = apply(self._spec(best.flags), [rec])
        moved = [k for k in new.flags if new.flags.get(k) != best.flags.get(k)]
        flag = rec.flag if rec.flag in moved else next(iter(moved), rec.flag)  # its coupled ones after it
        trial = trials.Trial(
            n=len(self.trials) + 1,
            flags=dict(new.flags),
            argv=new.argv,
            change=_change(flag, rec, best.flags, new.flags),
            finding=trials.motivating(rec, self._findings.values()),
            reason=rec.reason,
            expected_effect=rec.expected_effect,
        )
        self.trials.append(trial)
        change = trial.change or {}
        tied = "".join(f" with {c['flag']} {c['from']} → {c['to']}" for c in change.get("coupled", ()))
        self.notify(
            f"trial {trial.n}: {flag} {change.get('from')} → {change.get('to')}{tied}"
            f" ({', '.join(rec.finding_ids) or 'plan'})"
        )
        note = ""
        try:
            self._launch_and_measure(trial, self.budget.repeats)
            trial.order = "B" * len(trial.runs)
            v = self._judge(best, trial)
            while v.undecided and self._may_interleave(trial):
                self.notify(f"  undecided ({v.why}): the start and the change relaunched in turn")
                try:
                    self._segment(trial, best.flags, "A")
                except LaunchError as e:
                    note = f"; the start did not relaunch to interleave: {e}"
                    break
                self._segment(trial, trial.flags, "B")
                v = self._judge(best, trial)
        except (LaunchError, ObserveError) as e:
            what = f"did not start: {e}" if isinstance(e, LaunchError) else str(e)
            trial.outcome, trial.why = "failed", f"{what}; reverted"
            self._record(trial)
            self.notify(f"  failed: {e}")
            return
        finally:
            if not self.managed:  # managed: it runs on while judged; if kept last, no relaunch to settle
                self.launcher.stop()
        if self.stop.is_set() and len(trial.runs) < self.budget.repeats:
            trial.outcome, trial.why = "interrupted", "stopped during the trial: not judged, reverted"
            self._record(trial)
            return
        why = trials.failed_why(trial.runs, self.settings)
        if why:
            trial.outcome, trial.why = "failed", why + "; reverted"
            self._record(trial)
            self.notify(f"  failed: {why}")
            return
        trial.decision = v.to_dict(trial.order)
        trial.outcome = {"keep": "kept", "revert": "reverted"}.get(v.action, "reverted")
        if "A" in trial.order:
            note = f"; interleaved with the start ({' '.join(trial.order)}){note}"
        if v.undecided:
            note += f"; still undecided at {len(trial.runs)} runs (--max-repeats {self.budget.max_repeats})"
        trial.why = v.why + note
        self._record(trial)
        self.notify(f"  {trial.outcome}: {trial.why}")

    def _outcome(self, best: trials.Trial | None, stopped: str, reason: str) -> Outcome:
        self.notify(f"stopped: {stopped}")
        return Outcome(
            trials=self.trials,
            best=best,
            stopped=stopped,
            objective=self.objective,
            workload=self.workload.to_dict(),
            out=self.out,
            rejected=self.rejected,
            launches=self.launches,
            stop_reason=reason,
            interrupted=self.interrupted,
        )


def check(objective: str, budget: Budget, workload: Workload) -> None:
    """The options `observe tune` refuses before anything starts (one-line ObserveError)."""
    if objective not in OBJECTIVES:
        raise ConfigError(f"--objective must be one of {', '.join(OBJECTIVES)}, got {objective!r}")
    if budget.trials < 1:
        raise ConfigError("--trials must be at least 1 (the starting configuration is trial 1)")
    if budget.seconds <= 0:
        raise ConfigError("--time-budget must be more than 0 seconds")
    if budget.repeats < 2:
        raise ConfigError("--repeats must be at least 2: one measurement has no spread to judge a gain by")
    if budget.max_repeats < budget.repeats:
        raise ConfigError(f"--max-repeats must be at least --repeats ({budget.repeats})")
    if workload.num_prompts < 1:
        raise WorkloadError("--num-prompts must be at least 1")
