"""`observe generate alerts`: the Prometheus rule files (or a PrometheusRule) from the settings and
the knobs given on the command line (observe.monitoring.alertopts)."""

from __future__ import annotations

from pathlib import Path

from observe import settingsfile
from observe.commands import AlertFormat, emit
from observe.monitoring import alertopts, alerts


def generate_alerts(
    *,
    out: Path | None,
    fmt: AlertFormat,
    max_num_seqs: int | None,
    kv_usage: float | None,
    ttft_slo: float | None,
    itl_slo: float | None,
    runbook_base: str | None,
    selector: str | None,
    vllm_selector: str | None,
    rule_label: list[str],
    namespace: str | None,
    min_request_rate: float | None,
    config: Path | None,
) -> int:
    """Write the rule files; print each path written."""
    settings = alertopts.alert_settings(
        settingsfile.load(config),
        max_num_seqs=max_num_seqs,
        kv_usage=kv_usage,
        ttft_slo=ttft_slo,
        itl_slo=itl_slo,
        runbook_base=runbook_base,
        selector=selector,
        vllm_selector=vllm_selector,
        rule_label=rule_label,
        namespace=namespace,
        min_request_rate=min_request_rate,
    )
    if fmt is AlertFormat.prometheus_operator:
        out = alertopts.operator_out(out, alerts.RULES_FILE)
    for path in alerts.write_alerts(out or Path("alerts"), fmt.value, settings):
        emit(str(path))
    return 0
