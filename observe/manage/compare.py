"""Before and after a change: summaries of two launches, whether the change helped, and the
supervising loop that diagnoses a running launch and proposes (and on request applies) a change."""

from __future__ import annotations

import json
import re
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from observe import metricmath as mm
from observe import names, pipeline
from observe.errors import ConfigError, ObserveError
from observe.manage.apply import apply, checked_recommendations
from observe.manage.flags import VllmFlags
from observe.manage.launcher import Launcher, RolledBack, record
from observe.manage.spec import LaunchSpec
from observe.model import Recommendation

_QUANTILES = names.LATENCY_QUANTILES
_HISTS = names.LATENCY_HISTOGRAMS


def diagnosis_summary(path: Path) -> dict[str, Any]:
    """The same summary from a saved diagnosis: `observe diagnose --format json` or the sidecar's
    `/api/diagnosis` (one window of its history). Its numbers cover that window only."""
    try:
        d = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as e:
        raise ConfigError(f"{path}: neither a run folder nor a saved diagnosis JSON ({e})") from None
    if not isinstance(d, dict) or d.get("schema") != "observe.diagnosis/v1":
        raise ConfigError(f"{path}: not an observe diagnosis (expected schema observe.diagnosis/v1)")
    stats, events, engine = d.get("stats") or {}, d.get("events") or {}, d.get("engine") or {}
    m = stats.get("metrics") or {}
    out: dict[str, Any] = {
        "folder": str(path),
        "flags": dict(engine.get("flags") or {}),
        "snapshots": m.get("scrapes", 0),
        "findings": [f.get("id") for f in d.get("findings", [])],
    }
    out["log_generation_tps_mean"] = stats.get("mean_generation_throughput")
    out["log_max_kv_usage_pct"] = stats.get("max_kv_cache_usage_pct")
    out["log_max_waiting"] = stats.get("max_waiting")
    out["log_max_running"] = stats.get("max_running")
    out["generation_tps"] = m.get("generation_tps")
    pre = m.get("preemptions")
    out["preemptions"] = pre if pre is not None else events.get("cumulative_preemptions")
    out["kv_usage_max_pct"] = m.get("kv_usage_max_pct")
    out["requests_finished"] = m.get("requests_finished")
    for key in _HISTS:
        for q in _QUANTILES:
            k = f"{key}_p{int(q * 100)}_s"
            out[k] = m.get(k)
    return out


def run_summary(folder: Path) -> dict[str, Any]:
    """What one launch folder (a vLLM log + /metrics snapshots) says about throughput, latency, KV.

    Throughput comes from `vllm:generation_tokens_total` between the first and last snapshot and,
    for logs without snapshots, from the mean of the stats lines while requests ran. Latency
    quantiles come from the last snapshot's histograms (everything since vLLM started).
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise ConfigError(
            f"{folder} is not a folder (give the folder of one run: a vLLM log and its snapshots)"
        )
    diag = pipeline.diagnose_paths([folder])
    if not diag.instances:
        raise ConfigError(f"{folder}: no vLLM instance found")
    inst = diag.instances[0]
    snaps = [pipeline.read_snapshot(p) for p in sorted(folder.glob("metrics-*.txt"), key=_natural)]
    snaps = sorted((s for s in snaps if s.samples), key=lambda s: s.at.timestamp() if s.at else 0.0)  # stable
    out: dict[str, Any] = {
        "folder": str(folder),
        "flags": dict(inst.config.flags),
        "snapshots": len(snaps),
        "findings": [f.id for f in inst.findings],
    }
    stats = inst.stats or {}
    out["log_generation_tps_mean"] = stats.get("mean_generation_throughput")
    out["log_max_kv_usage_pct"] = stats.get("max_kv_cache_usage_pct")
    out["log_max_waiting"] = stats.get("max_waiting")
    out["log_max_running"] = stats.get("max_running")
    gen_tps = None
    if len(snaps) >= 2 and snaps[0].at and snaps[-1].at:
        # sorted by time with unstamped snapshots first: when the first has a time, all have
        pts = [(s.at, mm.value(s, "vllm:generation_tokens_total") or 0.0) for s in snaps if s.at is not None]
        gen_tps = mm.rate(pts)
    out["generation_tps"] = round(gen_tps, 1) if gen_tps is not None else None
    last = snaps[-1] if snaps else None
    pre = None
    if snaps:
        pre_vals = [v for v in (mm.value(s, "vllm:num_preemptions_total") for s in snaps) if v is not None]
        pre = mm.counter_increase([0.0, *pre_vals]) if pre_vals else None
    out["preemptions"] = int(pre) if pre is not None else (inst.events or {}).get("cumulative_preemptions")
    out["kv_usage_max_pct"] = None
    if snaps:
        kv = [v for v in (mm.value(s, "vllm:kv_cache_usage_perc", agg="max") for s in snaps) if v is not None]
        out["kv_usage_max_pct"] = round(100 * max(kv), 1) if kv else None
    for key, fam in _HISTS.items():
        b = mm.buckets(last, fam) if last is not None else []
        for q in _QUANTILES:
            v = mm.histogram_quantile(q, b) if b else None
            out[f"{key}_p{int(q * 100)}_s"] = round(v, 4) if v is not None else None
    if last is not None:
        done = mm.value(last, "vllm:request_success_total")
        out["requests_finished"] = int(done) if done is not None else None
    return out


def _natural(p: Path) -> tuple:
    """metrics-kv-2.txt before metrics-kv-10.txt (snapshots stamped in the same second keep their order)."""
    return tuple(int(t) if t.isdigit() else t for t in re.split(r"(\d+)", p.name))


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
        "generation_tps",
        "log_generation_tps_mean",
        "preemptions",
        "kv_usage_max_pct",
        "log_max_kv_usage_pct",
        "log_max_running",
        "log_max_waiting",
        "requests_finished",
        *[f"{k}_p{int(q * 100)}_s" for k in _HISTS for q in _QUANTILES],
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


@dataclass
class Proposal:
    """What observe would change for the running launch, checked against the installed vLLM."""

    before: LaunchSpec
    after: LaunchSpec
    accepted: list[Recommendation]
    rejected: list[tuple[Recommendation, str]]
    findings: list[Any]
    folder: Path


def propose(spec: LaunchSpec, folder: Path, flags: VllmFlags | None) -> Proposal:
    """Diagnose one launch folder (log + snapshots) and turn its recommendations into a new command."""
    diag = pipeline.diagnose_paths([folder])
    inst = max(diag.instances, key=lambda i: sum(s.get("parsed_lines") or 0 for s in i.sources), default=None)
    recs = list(inst.recommendations) if inst else []
    ok, bad = checked_recommendations(spec, recs, flags)
    return Proposal(
        before=spec,
        after=apply(spec, ok),
        accepted=ok,
        rejected=bad,
        findings=list(inst.findings) if inst else [],
        folder=folder,
    )


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
) -> None:
    """Watch a started launcher until `stop` is set: snapshots, one proposal per launch (after
    `recommend_after` seconds, or whenever `trigger` is set), applying it only when `decide` says
    yes. A crash ends the loop with LaunchError (the cause from the log).
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
            if folder is None:  # never started: nothing to diagnose
                continue
            prop = propose(launcher.spec, folder, flags)
            record(
                launcher.history,
                "recommend",
                argv=launcher.spec.argv,
                dir=str(folder),
                findings=[getattr(f, "id", str(f)) for f in prop.findings],
                suggested=prop.after.argv if prop.accepted else None,
                rejected=[{"flag": r.flag, "suggested": r.suggested, "why": why} for r, why in prop.rejected],
            )
            if prop.accepted and changes < max_changes and decide(prop):
                changes += 1
                try:
                    launcher.restart(prop.after, recommendations=prop.accepted)
                except RolledBack as e:
                    notify(str(e))
                    continue
                t0 = clock()
                next_snap = t0 + snapshot_every if snapshot_every > 0 else None
                proposed = False
