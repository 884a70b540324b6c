"""Before and after a change: summaries of two launches, whether the change helped, and the
supervising loop that diagnoses a running launch and proposes (and on request applies) a change."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from observe import pipeline, report
from observe.diagnosis import Diagnosis
from observe.errors import ConfigError, ObserveError
from observe.flags.installed import VllmFlags
from observe.manage.launcher import Launcher, RolledBack, record
from observe.manage.propose import Proposal, propose
from observe.metrics import names

_QUANTILES = names.LATENCY_QUANTILES
_HISTS = names.LATENCY_HISTOGRAMS
# metricmath.window_summary's keys, window first, then since vLLM started
WINDOW_KEYS = (
    "generation_tps",
    "preemptions",
    "preemptions_since_start",
    "kv_usage_max_pct",
    "requests_finished",
    "requests_finished_since_start",
    *[f"{k}_p{int(q * 100)}_s" for k in _HISTS for q in _QUANTILES],
    *[f"{k}_p{int(q * 100)}_since_start_s" for k in _HISTS for q in _QUANTILES],
)


def _summary(source: str, doc: dict[str, Any]) -> dict[str, Any]:
    """One diagnosis document (`observe.diagnosis/v1`) → the numbers compare puts side by side.

    The /metrics numbers are metricmath.window_summary's, the one window summary `diagnose`, the
    sidecar's `/api/diagnosis` and the README quote: over the window (first → last snapshot) and,
    labelled `_since_start`, the counters' values since vLLM started.
    """
    stats, events, engine = doc.get("stats") or {}, doc.get("events") or {}, doc.get("engine") or {}
    m = stats.get("metrics") or {}
    out: dict[str, Any] = {
        "folder": source,
        "flags": dict(engine.get("flags") or {}),
        "snapshots": m.get("scrapes", 0),
        "findings": [f.get("id") for f in doc.get("findings", [])],
        "log_generation_tps_mean": stats.get("mean_generation_throughput"),
        "log_max_kv_usage_pct": stats.get("max_kv_cache_usage_pct"),
        "log_max_waiting": stats.get("max_waiting"),
        "log_max_running": stats.get("max_running"),
    }
    for key in WINDOW_KEYS:
        out[key] = m.get(key)
    if out["preemptions"] is None and not m:
        out["preemptions"] = events.get("cumulative_preemptions")
    return out


def diagnosis_summary(path: Path) -> dict[str, Any]:
    """The summary of a saved diagnosis: `observe diagnose --format json` or the sidecar's
    `/api/diagnosis` (one window of its history)."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: neither a run folder nor a saved diagnosis JSON ({e})") from None
    if not isinstance(d, dict) or d.get("schema") != report.SCHEMA:
        raise ConfigError(f"{path}: not an observe diagnosis (expected schema {report.SCHEMA})")
    return _summary(str(path), d)


def run_summary(folder: Path) -> dict[str, Any]:
    """The summary of one launch folder (a vLLM log + its /metrics snapshots): the same numbers
    `observe diagnose FOLDER` reports, so compare and diagnose agree on a folder."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(
            f"{folder} is not a folder (give the folder of one run: a vLLM log and its snapshots)"
        )
    diag = pipeline.diagnose_paths([folder])
    if not diag.instances:
        raise ConfigError(f"{folder}: no vLLM instance found")
    return _summary(str(folder), report.to_dict(Diagnosis(instances=diag.instances[:1])))


def compare_runs(before: Path, after: Path, *, max_throughput_drop: float = 0.10) -> dict[str, Any]:
    """Side by side summaries of two launch folders (or saved diagnoses) and whether the change helped.

    Helped: preemptions fell (or stayed at zero) and generation throughput fell by no more than
    `max_throughput_drop`. Unknown (None) when neither preemptions nor throughput can be read.
    """

    def summary(p: Path) -> dict[str, Any]:
        p = Path(p)
        if not p.exists():
            raise ConfigError(f"no such folder or file: {p}")
        return diagnosis_summary(p) if p.is_file() else run_summary(p)

    b, a = summary(before), summary(after)
    reasons: list[str] = []
    verdict: bool | None = None
    pb, pa = b.get("preemptions"), a.get("preemptions")
    tb = b.get("generation_tps") or b.get("log_generation_tps_mean")
    ta = a.get("generation_tps") or a.get("log_generation_tps_mean")
    checks: list[bool] = []
    if pb is not None and pa is not None:
        fell = pa < pb or pa == pb == 0
        checks.append(fell)
        drop = (1 - pa / pb) if pb else 0.0
        reasons.append(f"preemptions {pb} → {pa}" + (f" ({drop:.0%} fewer)" if pb else ""))
    if tb and ta:
        change = ta / tb - 1
        checks.append(change >= -max_throughput_drop)
        reasons.append(f"generation throughput {tb:,.0f} → {ta:,.0f} tokens/s ({change:+.0%})")
    if checks:
        verdict = all(checks)
    keys = [
        *WINDOW_KEYS,
        "log_generation_tps_mean",
        "log_max_kv_usage_pct",
        "log_max_running",
        "log_max_waiting",
    ]
    return {
        "before": b,
        "after": a,
        "rows": [{"metric": k, "before": b.get(k), "after": a.get(k)} for k in keys],
        "flag_changes": [
            {"flag": k, "before": b["flags"].get(k), "after": a["flags"].get(k)}
            for k in sorted(set(b["flags"]) | set(a["flags"]))
            if b["flags"].get(k) != a["flags"].get(k) and k not in ("--port",)
        ],
        "helped": verdict,
        "reasons": reasons,
    }


# ---------------------------------------------------------------- watch, propose, apply


def supervise(
    launcher: Launcher,
    *,
    stop: threading.Event,
    notify: Callable[[str], None],
    decide: Callable[[Proposal], bool],
    flags: VllmFlags | None = None,
    snapshot_every: float = 30.0,
    recommend_after: float = 0.0,
    max_changes: int = 1,
    trigger: threading.Event | None = None,
    clock: Callable[[], float] = time.monotonic,
    tick: float = 1.0,
    tune: Callable[[Launcher], bool] | None = None,
    tune_trigger: threading.Event | None = None,
) -> None:
    """Watch a started launcher until `stop` is set: snapshots, one proposal per launch (after
    `recommend_after` seconds, or whenever `trigger` is set), applying it only when `decide` says
    yes. A crash ends the loop with LaunchError (the cause from the log). Whenever `tune_trigger` is
    set, `tune(launcher)` runs (observe tune --run-dir's requests); True: the launch changed.
    """
    changes = 0
    t0 = clock()
    next_snap = t0 + snapshot_every if snapshot_every > 0 else None
    proposed = False

    def snapshot(note: str = "") -> None:
        try:
            launcher.snapshot(note)
        except (OSError, ValueError, ObserveError) as e:  # vLLM slow or gone for a moment: go on
            notify(f"cannot save /metrics: {e}")

    while not stop.wait(tick):
        launcher.check()
        if tune is not None and tune_trigger is not None and tune_trigger.is_set():
            tune_trigger.clear()
            if tune(launcher):
                t0 = clock()
                next_snap = t0 + snapshot_every if snapshot_every > 0 else None
                proposed = False
            continue
        now = clock()
        if next_snap is not None and now >= next_snap:
            next_snap = now + snapshot_every
            snapshot()
        asked = trigger is not None and trigger.is_set()
        if asked or (recommend_after > 0 and not proposed and now - t0 >= recommend_after):
            if trigger is not None:
                trigger.clear()
            proposed = True
            snapshot("before_recommendation")
            folder = launcher.launch_dir
            spec = launcher.spec
            if folder is None or spec is None:  # never started: nothing to diagnose
                continue
            prop = propose(spec, folder, flags)
            record(
                launcher.history,
                "recommend",
                argv=spec.argv,
                dir=str(folder),
                findings=[getattr(f, "id", str(f)) for f in prop.findings],
                suggested=prop.after.argv if prop.accepted and prop.after is not None else None,
                rejected=[{"flag": r.flag, "suggested": r.suggested, "why": why} for r, why in prop.rejected],
            )
            if prop.accepted and prop.after is not None and changes < max_changes and decide(prop):
                changes += 1
                try:
                    launcher.restart(prop.after, recommendations=prop.accepted)
                except RolledBack as e:
                    notify(str(e))
                    continue
                t0 = clock()
                next_snap = t0 + snapshot_every if snapshot_every > 0 else None
                proposed = False
