"""Edge: `observe generate alerts`'s knobs folded into the Settings the rules are made from, and
where a PrometheusRule manifest may be written."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

from observe.errors import ObserveError
from observe.settings import Settings


def alert_settings(
    base: Settings,
    *,
    max_num_seqs: int | None = None,
    kv_usage: float | None = None,
    ttft_slo: float | None = None,
    itl_slo: float | None = None,
    runbook_base: str | None = None,
    selector: str | None = None,
    vllm_selector: str | None = None,
    rule_label: Sequence[str] = (),
    namespace: str | None = None,
    min_request_rate: float | None = None,
) -> Settings:
    """`base` with each knob given (`rule_label`: KEY=VALUE texts); a KV usage ratio below base's
    "high" level lowers that too."""
    labels = {}
    for item in rule_label:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ObserveError(f"--rule-label needs KEY=VALUE, not {item!r}")
        labels[key.strip()] = value.strip()
    if runbook_base is not None and not runbook_base.startswith(("http://", "https://")):
        raise ObserveError(f"--runbook-base must be an http(s) URL, not {runbook_base!r}")
    knobs: dict[str, Any] = {
        "max_num_seqs": max_num_seqs,
        "kv_full_pct": kv_usage * 100 if kv_usage is not None else None,
        "ttft_slo_seconds": ttft_slo,
        "itl_slo_seconds": itl_slo,
        "runbook_base": runbook_base,
        "selector": selector,
        "vllm_selector": vllm_selector,
        "rule_labels": labels or None,
        "namespace": namespace,
        "min_request_rate": min_request_rate,
    }
    overrides = {k: v for k, v in knobs.items() if v is not None}
    if "kv_full_pct" in overrides and overrides["kv_full_pct"] < base.kv_high_pct:
        overrides["kv_high_pct"] = overrides["kv_full_pct"]
    return base.replace(**overrides)


def operator_out(out: Path | None, rules_file: str) -> Path:
    """Where --format prometheus-operator may write: never alerts/, whose every file compose's
    Prometheus loads as a rule file; `observe generate kubernetes` is the way to deploy/."""
    if out is None or (out / rules_file).exists() or out.resolve() == Path("alerts").resolve():
        raise ObserveError(
            "the PrometheusRule is a Kubernetes object: `observe generate kubernetes` writes it under "
            "deploy/kubernetes/base/generated/ (Settings from --config); to write only the manifest, "
            "give --out a folder that holds no Prometheus rule files (not alerts/)"
        )
    return out
