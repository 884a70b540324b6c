"""Every `--format json` document observe prints, each with its schema version (observe/schemas/):
the diagnosis (`observe.diagnosis/v1`, a dict: `to_dict`), and, below it, `recommend/v1`,
`capacity/v1`, `compare/v1` and the settings list (`config show --format json`) as text.

The diagnosis document (docs/architecture.md):

`instances` is the place to read each instance's results from. With one instance the top-level
`engine`/`stats`/`events`/`command` describe it too; with several they are null (no instance is
"the" one), while `findings`/`recommendations`/`advice_notes` list every instance's (each item
names its `instance`).
A recommendation's `alternatives` are other single changes, any one of which has the same effect
(the `command` applies the recommendation itself, never its alternatives); its `coupled` are the
changes vLLM refuses it without, applied with it (each one's reason says why); `advice_notes` say,
for the findings no flag change answers, why and what to do instead.
`launches` lists every launch of vLLM the instance's log holds (a restart, a rejected launch and its
fix): the findings, recommendations and command above are the latest launch's (`current`); the
earlier ones are history, each with its own status, reason, flags, findings and command. An
instance's `history` counts every earlier launch, those `launches` no longer lists included: how
many, by status, and each failure (a rejected or failed start, a crash, a hang) with how many of
them had it and the first and latest of them.
"""

from __future__ import annotations

import json
import math
import shlex
from datetime import datetime
from typing import TYPE_CHECKING, Any

from observe.diagnosis import Diagnosis, InstanceDiagnosis
from observe.launches import History, Launch
from observe.model import AdviceNote, Finding, Recommendation, severity_rank
from observe.settings import Settings
from observe.settingsfile import describe

if TYPE_CHECKING:
    from observe.capacity.sizing import CapacityResult

SCHEMA = "observe.diagnosis/v1"
RECOMMEND_SCHEMA = "observe.recommend/v1"
CAPACITY_SCHEMA = "observe.capacity/v1"
COMPARE_SCHEMA = "observe.compare/v1"
TUNE_SCHEMA = "observe.tune/v1"
UPGRADE_SCHEMA = "observe.upgrade/v1"


def _iso(t: datetime | None) -> str | None:
    return t.isoformat() if t else None


def _clean(v: Any) -> Any:
    """JSON-safe: NaN/inf → None, keys → str, tuples/sets → lists, anything else → str."""
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    if isinstance(v, dict):
        return {str(k): _clean(x) for k, x in v.items()}
    if isinstance(v, (list, tuple, set)):
        return [_clean(x) for x in v]
    if isinstance(v, (str, int, float, bool)) or v is None:
        return v
    return str(v)


def _engine(inst: InstanceDiagnosis) -> dict:
    c = inst.config
    return {
        "version": c.version,
        "engine": c.engine,
        "model": c.model,
        "device": c.device,
        "flags": dict(c.flags),
        "kv_cache_tokens": c.kv_cache_tokens,
        "num_gpu_blocks": c.num_gpu_blocks,
        "block_size": c.block_size,
        "max_concurrency": c.max_concurrency,
        "max_concurrency_len": c.max_concurrency_len,
        "max_model_len": c.max_model_len,
        "available_kv_gib": c.available_kv_gib,
        "weights_gib": c.weights_gib,
        "gpu_memory_utilization": c.gpu_memory_utilization,
        "max_num_seqs": c.max_num_seqs,
        "max_num_batched_tokens": c.max_num_batched_tokens,
        "kv_cache_dtype": c.kv_cache_dtype,
        "flags_damaged": c.flags_damaged,
        "memory_env": dict(c.memory_env),
    }


def _finding(f: Finding, instance: str | None = None) -> dict:
    d = {
        "id": f.id,
        "severity": f.severity,
        "title": f.title,
        "evidence": f.evidence,
        "start": _iso(f.start),
        "end": _iso(f.end),
        "where": f.where,
        "data": f.data,
    }
    if instance is not None:
        d["instance"] = instance
    return d


def _recommendation(r: Recommendation, instance: str | None = None) -> dict:
    d = {
        "flag": r.flag,
        "current": r.current,
        "suggested": r.suggested,
        "reason": r.reason,
        "finding_ids": list(r.finding_ids),
        "expected_effect": r.expected_effect,
        "current_is_default": r.current_is_default,
        "alternatives": [_recommendation(a) for a in r.alternatives],
        "coupled": [_recommendation(c) for c in r.coupled],
    }
    if instance is not None:
        d["instance"] = instance
    return d


def _note(n: AdviceNote, instance: str | None = None) -> dict:
    d: dict[str, Any] = {"finding_ids": list(n.finding_ids), "text": n.text}
    if instance is not None:
        d["instance"] = instance
    return d


def _launch(launch: Launch, of: int) -> dict:
    return {
        "index": launch.index,
        "of": of,
        "current": launch.current,
        "status": launch.status,
        "reason": launch.reason,
        "message": launch.message,
        "start": _iso(launch.start),
        "end": _iso(launch.end),
        "where": launch.where,
        "version": launch.version,
        "model": launch.model,
        "flags": dict(launch.flags),
        "stats_samples": launch.stats_samples,
        "findings": [{"id": f.id, "severity": f.severity, "title": f.title} for f in launch.findings],
        "recommendations": [
            {"flag": r.flag, "current": r.current, "suggested": r.suggested} for r in launch.recommendations
        ],
        "command": launch.command,
        "headline": launch.headline(of),
    }


def launches(inst: InstanceDiagnosis) -> list[dict]:
    """Every launch the instance's log holds, oldest first; the last (`current`) is the one the
    instance's findings, recommendations and command describe."""
    of = len(inst.launches) + inst.launches_dropped
    return [_launch(x, of) for x in inst.launches]


def history(inst: InstanceDiagnosis) -> dict:
    """The earlier launches counted (every one, kept in `launches` or not): how many, by status, and
    each failure they had (a rejected or failed start, a crash, a hang) with how many launches had
    it and the first and latest of them (1-based), worst first."""
    h = getattr(inst, "history", None) or History()
    failed = sorted(
        h.failed.values(), key=lambda x: (-severity_rank(x.finding.severity), -x.launches, x.finding.id)
    )
    return {
        "launches": sum(h.by_status.values()),
        "by_status": dict(sorted(h.by_status.items())),
        "failures": [
            {
                "id": x.finding.id,
                "severity": x.finding.severity,
                "title": x.finding.title,
                "launches": x.launches,
                "first": x.first,
                "last": x.last,
            }
            for x in failed
        ],
    }


def _instance(inst: InstanceDiagnosis) -> dict:
    return {
        "name": inst.name,
        "sources": inst.sources,
        "engine": _engine(inst),
        "stats": inst.stats,
        "events": inst.events,
        "findings": [_finding(f) for f in inst.findings],
        "recommendations": [_recommendation(r) for r in inst.recommendations],
        "advice_notes": [_note(n) for n in inst.notes],
        "command": inst.command,
        "metrics_snapshots": inst.scrapes,
        "launches": launches(inst),
        "history": history(inst),
    }


def to_dict(diag: Diagnosis) -> dict:
    """The whole diagnosis as a JSON-ready dict."""
    insts = diag.instances
    many = len(insts) > 1
    only = insts[0] if len(insts) == 1 else None
    out = {
        "schema": SCHEMA,
        "generated_at": _iso(diag.generated_at),
        "sources": [s for i in insts for s in i.sources],
        "engine": _engine(only) if only else None,
        "stats": only.stats if only else None,
        "events": only.events if only else None,
        "findings": [_finding(f, i.name if many else None) for i in insts for f in i.findings],
        "recommendations": [
            _recommendation(r, i.name if many else None) for i in insts for r in i.recommendations
        ],
        "advice_notes": [_note(n, i.name if many else None) for i in insts for n in i.notes],
        "command": only.command if only else None,
        "launches": launches(only) if only else None,
        "instances": [_instance(i) for i in insts],
        "unreadable": diag.unreadable,
    }
    return _clean(out)


# ---------------------------------------------------------------- the other commands' documents
def recommend_json(prop: Any, vllm_url: str) -> str:
    """`observe recommend --format json`: a manage.Proposal for the vLLM at `vllm_url`."""
    doc = {
        "schema": RECOMMEND_SCHEMA,
        "vllm_url": vllm_url,
        "findings": [f.id for f in prop.findings],
        "recommendations": [
            {
                "flag": r.flag,
                "current": r.current,
                "suggested": r.suggested,
                "reason": r.reason,
                "coupled": [
                    {"flag": c.flag, "current": c.current, "suggested": c.suggested, "reason": c.reason}
                    for c in r.coupled
                ],
            }
            for r in prop.accepted
        ],
        "rejected": [{"flag": r.flag, "suggested": r.suggested, "why": w} for r, w in prop.rejected],
        "validated_against": prop.flags.version if prop.flags else None,
        "command": prop.command,
    }
    return json.dumps(doc, indent=2, default=str)


# what `capacity --format json` says of the other KV-cache dtype
_CAPACITY_ALT_KEYS = (
    "kv_cache_dtype",
    "bytes_per_token",
    "kv_cache_tokens",
    "num_blocks",
    "required_kv_gib",
    "required_kv_gib_total",
    "concurrency_fits",
    "max_concurrency",
)


def capacity_json(result: CapacityResult, alternative: CapacityResult | None = None) -> str:
    """`observe capacity --format json`: the sizing, and the same question for the other KV dtype."""
    d: dict[str, Any] = {"schema": CAPACITY_SCHEMA, **result.to_dict()}
    if alternative is not None:
        d["alternative"] = {k: alternative.to_dict()[k] for k in _CAPACITY_ALT_KEYS}
    return json.dumps(d, indent=2)


def compare_json(res: dict[str, Any]) -> str:
    """`observe compare --format json`: manage.compare_runs's answer."""
    return json.dumps({"schema": COMPARE_SCHEMA, **res}, indent=2, default=str)


def upgrade_json(u: Any) -> str:
    """`observe upgrade --format json`: observe.advise.upgrade's plan (an Upgrade)."""
    return json.dumps({"schema": UPGRADE_SCHEMA, **u.to_dict()}, indent=2, default=str)


def settings_json(s: Settings) -> str:
    """`observe config show --format json`: every setting with its value and note."""
    return json.dumps(describe(s), indent=2, default=list)


TUNE_UNITS = {"throughput": "output tokens/s", "goodput": "requests/s meeting the SLOs"}


def tune_doc(o: Any) -> dict[str, Any]:
    """`observe tune`'s report (a tune.Outcome) as one JSON document."""
    rows = [t.to_dict(o.objective, o.workload) for t in o.trials]
    base = rows[0]["objective"]["mean"] if rows else None
    best = o.best.to_dict(o.objective, o.workload) if o.best is not None else None
    gain = None
    if best is not None and base and best["objective"]["mean"] is not None:
        gain = best["objective"]["mean"] / base - 1
    return {
        "schema": TUNE_SCHEMA,
        "objective": {"kind": o.objective, "unit": TUNE_UNITS[o.objective]},
        "workload": o.workload,
        "stopped": o.stopped,
        "stop_reason": getattr(o, "stop_reason", "") or None,
        "trials": rows,
        "launches": o.launches if getattr(o, "launches", None) is not None else len(o.trials),
        "best": None
        if best is None
        else {
            "trial": best["trial"],
            "objective": best["objective"]["mean"],
            "gain_over_start": gain,
            "flags": best["flags"],
            "command": shlex.join(best["argv"]),
        },
        "rejected_by_vllm": o.rejected,
        "history": str(o.out / "history.jsonl"),
    }
