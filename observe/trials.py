"""The tuning loop's decisions (`observe tune`), pure: which lever to move next, whether a measured
change is kept or reverted given the run-to-run spread, and what one trial's record holds.

The loop itself (launching vLLM, driving `vllm bench serve`, diagnosing) is `observe.tune`; here
are only numbers in, decisions out, so each rule is tested without a server:

- `figures`: one `vllm bench serve --save-result` JSON → the numbers a trial keeps;
- `objective`: output tokens/s, or goodput (requests/s meeting the SLOs), per the operator's choice;
- `slo_breaks`: the SLOs (Settings) a measurement breaks; a kept change may never break one;
- `judge`: keep a change only when its gain exceeds the measured noise (and `Settings.tune_min_gain`),
  else revert; `remeasure` when the baseline has too few measurements to know its spread; a revert
  is `undecided` when more runs (interleaved with the baseline's, A B B A) could still decide it;
  `Verdict.to_dict` is the confidence a trial records (the gain and its ±2·SE interval);
- `next_change`: the plan's first recommendation not yet tried whose lever has not stopped paying,
  then the plan's alternatives (one change per trial).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from observe.model import Finding, Recommendation
from observe.settings import Settings

OBJECTIVES = ("throughput", "goodput")

# the figures a trial keeps from the client's JSON, with the client's own key names
FIGURE_KEYS = (
    "completed",
    "failed",
    "duration",
    "request_throughput",
    "request_goodput",
    "output_throughput",
    "total_token_throughput",
    "p99_ttft_ms",
    "p99_tpot_ms",
    "p99_itl_ms",
    "p99_e2el_ms",
    "median_ttft_ms",
    "median_itl_ms",
)


def figures(result: Mapping[str, Any]) -> dict[str, float | None]:
    """The numbers one `vllm bench serve` result (its --save-result JSON) gives a trial."""
    out: dict[str, float | None] = {}
    for k in FIGURE_KEYS:
        v = result.get(k)
        out[k] = float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None
    return out


def error_share(fig: Mapping[str, float | None]) -> float:
    """The share of requests that failed (1.0 when none completed)."""
    done, failed = fig.get("completed") or 0.0, fig.get("failed") or 0.0
    total = done + failed
    return failed / total if total else 1.0


def goodput_slos(settings: Settings) -> dict[str, float]:
    """The SLOs goodput counts a request against, in the client's `--goodput KEY:ms` terms."""
    slos = {"ttft": settings.ttft_slo_seconds * 1000.0, "tpot": settings.itl_slo_seconds * 1000.0}
    if settings.tune_e2el_slo_seconds is not None:
        slos["e2el"] = settings.tune_e2el_slo_seconds * 1000.0
    return slos


def slo_breaks(fig: Mapping[str, float | None], settings: Settings) -> list[str]:
    """The SLOs a measurement breaks at p99 (the client's p99 against Settings' thresholds)."""
    out = []
    keys = {"ttft": "p99_ttft_ms", "tpot": "p99_tpot_ms", "e2el": "p99_e2el_ms"}
    for name, limit in goodput_slos(settings).items():
        v = fig.get(keys[name])
        if v is not None and v > limit:
            out.append(f"p99 {name.upper()} {v:,.0f} ms > {limit:,.0f} ms")
    return out


def objective(fig: Mapping[str, float | None], kind: str) -> float | None:
    """The operator's objective: output tokens/s (`throughput`) or requests/s meeting the SLOs
    (`goodput`)."""
    if kind not in OBJECTIVES:
        raise ValueError(f"objective must be one of {OBJECTIVES}, got {kind!r}")
    return fig.get("output_throughput" if kind == "throughput" else "request_goodput")


def mean(xs: Sequence[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def spread(xs: Sequence[float]) -> float | None:
    """Run-to-run spread of one configuration: (max - min) / mean; None with fewer than two runs."""
    if len(xs) < 2 or mean(xs) <= 0:
        return None
    return (max(xs) - min(xs)) / mean(xs)


def rel_sem(xs: Sequence[float]) -> float | None:
    """The standard error of the mean, relative to the mean (the sample standard deviation / √n);
    None with fewer than two runs. Unlike the range it shrinks as runs are added."""
    m = mean(xs)
    if len(xs) < 2 or m <= 0:
        return None
    var = sum((x - m) ** 2 for x in xs) / (len(xs) - 1)
    return float(var**0.5 / len(xs) ** 0.5 / m)


def noise(base: Sequence[float], cand: Sequence[float]) -> float:
    """How large a relative gain the measurements can tell from run-to-run noise: twice the standard
    error of the difference of the two means (about 95 % for normal runs), from both configurations'
    own spreads. Two runs differing by d % give a standard error of d/2 %, so two configurations
    measured alike must differ by about 1.4 × d % — more runs narrow it as √n."""
    sb, sc = rel_sem(base) or 0.0, rel_sem(cand) or 0.0
    return 2.0 * (sb * sb + sc * sc) ** 0.5


def failed_why(figs: Sequence[Mapping[str, float | None]], settings: Settings) -> str | None:
    """Why a trial's measurements make it a failed trial (too many errors), or None."""
    for f in figs:
        share = error_share(f)
        if share > settings.tune_max_error_share:
            return (
                f"{share:.0%} of requests failed (more than tune_max_error_share "
                f"{settings.tune_max_error_share:.0%}): a failed trial however fast"
            )
    return None


@dataclass(frozen=True)
class Verdict:
    """keep / revert / remeasure (the baseline needs another measurement to know its spread).
    `noise`: the bar the gain had to beat (the larger of `two_se` and tune_min_gain); `two_se`: twice
    the standard error of the relative difference, the half-width of the gain's interval.
    `undecided`: a revert whose gain beat `tune_min_gain` but not the noise — more runs could still
    decide it."""

    action: str
    why: str
    gain: float | None = None
    noise: float | None = None
    undecided: bool = False
    two_se: float | None = None
    runs: tuple[int, int] = (0, 0)  # (baseline, candidate) measurements judged

    def to_dict(self, order: str = "") -> dict[str, Any]:
        """The confidence a trial records: the gain, its ±2·SE interval, the bar, the runs, the
        decision; `order` the runs in the order measured (A: the baseline, B: the candidate)."""
        g, e = self.gain, self.two_se
        finite = g is not None and e is not None and g != float("inf")
        return {
            "action": self.action,
            "gain": g if g != float("inf") else None,
            "two_se": e,
            "interval": [g - e, g + e] if finite and g is not None and e is not None else None,
            "bar": self.noise,
            "baseline_runs": self.runs[0],
            "candidate_runs": self.runs[1],
            "undecided": self.undecided,
            "order": order,
        }


def judge(
    base: Sequence[float],
    cand: Sequence[float],
    settings: Settings,
    *,
    cand_slo_breaks: Sequence[str] = (),
    base_slo_breaks: Sequence[str] = (),
) -> Verdict:
    """Keep the candidate only if its mean objective beats the baseline's by more than the noise:
    the larger of `noise` (from both configurations' measured runs) and `Settings.tune_min_gain`;
    and only if it breaks no SLO the baseline met."""
    if not cand:
        return Verdict("revert", "no measurement of the change")
    if len(base) < 2:
        return Verdict("remeasure", "the baseline was measured once: its spread is unknown")
    new_breaks = [
        b for b in cand_slo_breaks if b.split(" ", 2)[1] not in {x.split(" ", 2)[1] for x in base_slo_breaks}
    ]
    mb, mc = mean(base), mean(cand)
    if mb <= 0:
        gain = float("inf") if mc > 0 else 0.0
    else:
        gain = mc / mb - 1
    se2 = noise(base, cand)
    bar = max(se2, settings.tune_min_gain)
    runs = (len(base), len(cand))
    if new_breaks:
        return Verdict("revert", "breaks the SLO: " + "; ".join(new_breaks), gain, bar, two_se=se2, runs=runs)
    said = f"objective {gain:+.1%} ± {se2:.1%} (2·SE, {runs[0]} vs {runs[1]} runs)"
    if gain > bar:
        return Verdict(
            "keep", f"{said}, more than the measured noise {bar:.1%}", gain, bar, two_se=se2, runs=runs
        )
    return Verdict(
        "revert",
        f"{said}, not more than the measured noise {bar:.1%}: no gain to trust",
        gain,
        bar,
        undecided=gain > settings.tune_min_gain,
        two_se=se2,
        runs=runs,
    )


def change_key(rec: Recommendation) -> tuple[str, str]:
    return rec.flag, str(rec.suggested)


def next_change(
    recs: Iterable[Recommendation], tried: Iterable[tuple[str, str]], spent: Iterable[str] = ()
) -> Recommendation | None:
    """The plan's first recommendation (its ranking) whose (flag, value) has not been tried and
    whose lever has not stopped paying (`spent`: flags reverted since the last kept change); then,
    in the same order, the recommendations' alternatives (another lever for the same finding)."""
    seen, dead = set(tried), set(spent)
    recs = list(recs)
    for r in [*recs, *(a for x in recs for a in x.alternatives)]:
        if change_key(r) not in seen and r.flag not in dead:
            return r
    return None


def motivating(rec: Recommendation, findings: Iterable[Finding]) -> dict[str, Any] | None:
    """The finding that called for `rec`: its id, severity and evidence (the first it names)."""
    by_id = {f.id: f for f in findings}
    for fid in rec.finding_ids:
        f = by_id.get(fid)
        if f is not None:
            return {"id": f.id, "severity": f.severity, "title": f.title, "evidence": f.evidence}
    return (
        {"id": rec.finding_ids[0], "severity": None, "title": None, "evidence": None}
        if rec.finding_ids
        else None
    )


@dataclass
class Trial:
    """One trial of the tuning loop: the configuration, the change (None for the baseline), the
    measurements and the outcome. `to_dict` is its history.jsonl line."""

    n: int
    flags: dict[str, Any]
    argv: list[str]
    change: dict[str, Any] | None = None
    finding: dict[str, Any] | None = None
    reason: str | None = None
    expected_effect: str | None = None
    runs: list[dict[str, float | None]] = field(default_factory=list)
    outcome: str = "pending"  # baseline | kept | reverted | failed | interrupted
    why: str = ""
    dir: str | None = None
    seconds: float | None = None
    # the baseline re-measured within this trial, interleaved with the candidate (A B B A)
    base_runs: list[dict[str, float | None]] = field(default_factory=list)
    order: str = ""  # the runs in the order measured: A the baseline, B this configuration
    decision: dict[str, Any] | None = None  # Verdict.to_dict: the gain, its interval, the decision

    def values(self, kind: str) -> list[float]:
        return [v for v in (objective(r, kind) for r in self.runs) if v is not None]

    def to_dict(self, kind: str, workload: Mapping[str, Any]) -> dict[str, Any]:
        vals = self.values(kind)
        figs: dict[str, Any] = {}
        for k in FIGURE_KEYS:
            xs = [x for x in (r.get(k) for r in self.runs) if x is not None]
            figs[k] = {"runs": xs, "mean": mean(xs) if xs else None, "spread": spread(xs)}
        return {
            "trial": self.n,
            "flags": self.flags,
            "argv": self.argv,
            "change": self.change,
            "finding": self.finding,
            "reason": self.reason,
            "expected_effect": self.expected_effect,
            "workload": dict(workload),
            "objective": {
                "kind": kind,
                "runs": vals,
                "mean": mean(vals) if vals else None,
                "spread": spread(vals),
                "sem": rel_sem(vals),
            },
            "figures": figs,
            "baseline_runs": [v for v in (objective(r, kind) for r in self.base_runs) if v is not None],
            "decision": self.decision,
            "outcome": self.outcome,
            "why": self.why,
            "dir": self.dir,
            "seconds": self.seconds,
        }
