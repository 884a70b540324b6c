"""`observe generate dashboards|alerts|kubernetes|vllm-logging`: the generated files, from one settings object."""

from __future__ import annotations

from enum import Enum
from pathlib import Path

import typer

from observe.cli.common import config_option, user_errors

generate_app = typer.Typer(
    help="Write dashboards/*.json or alerts/*.yml from the generators.", no_args_is_help=True
)


class AlertFormat(str, Enum):
    prometheus = "prometheus"
    prometheus_operator = "prometheus-operator"


# one line per option
# fmt: off
@generate_app.command("dashboards")
@user_errors
def generate_dashboards(
    out: Path = typer.Option(Path("dashboards"), "--out", help="Folder for the dashboard JSON files."),
    config: Path | None = config_option(),
) -> None:
    """Write the Grafana dashboards (Overview, Tuning, KV cache, Instances, GPU, spec decode & KV transfer) as JSON."""
    from observe import dashboards, settingsfile

    for path in dashboards.write_dashboards(out, settingsfile.load(config)):
        typer.echo(str(path))


@generate_app.command("alerts")
@user_errors
def generate_alerts(
    out: Path | None = typer.Option(None, "--out", help="Folder for the rule files (default: alerts; required with prometheus-operator)."),
    fmt: AlertFormat = typer.Option(AlertFormat.prometheus, "--format", help="prometheus: rule files; prometheus-operator: a PrometheusRule manifest (not into alerts/)."),
    max_num_seqs: int | None = typer.Option(None, "--max-num-seqs", help="The instance's --max-num-seqs (queue-backlog threshold)."),
    kv_usage: float | None = typer.Option(None, "--kv-usage-threshold", help="KV-cache usage ratio (0-1) that counts as full (kv_full_pct / 100)."),
    ttft_slo: float | None = typer.Option(None, "--ttft-slo", help="TTFT SLO threshold in seconds (e.g. 1.0; with custom buckets the largest bound at most it counts)."),
    itl_slo: float | None = typer.Option(None, "--itl-slo", help="Inter-token latency SLO threshold in seconds (e.g. 0.1)."),
    runbook_base: str | None = typer.Option(None, "--runbook-base", metavar="URL", help="Where docs/runbooks.md is published (each alert links to its section)."),
    selector: str | None = typer.Option(None, "--selector", help='Label matchers every rule adds, e.g. namespace="llm" (default: none, no job-name assumption).'),
    vllm_selector: str | None = typer.Option(None, "--vllm-selector", help='Label matchers of the vLLM targets instead of --selector, e.g. job="vllm".'),
    rule_label: list[str] = typer.Option([], "--rule-label", help="KEY=VALUE label on the PrometheusRule (repeatable), e.g. release=prom."),
    namespace: str | None = typer.Option(None, "--namespace", help="Namespace of the PrometheusRule."),
    min_request_rate: float | None = typer.Option(None, "--min-request-rate", help="Traffic floor (requests/s) of the SLO and error alerts."),
    config: Path | None = config_option(),
) -> None:
    """Write the Prometheus recording and alerting rules (alerts/*.yml) from one settings object."""
    knobs = {k: v for k, v in locals().items() if k not in ("out", "fmt", "config")}  # alertopts' names
    from observe import alertopts, alerts, settingsfile

    settings = alertopts.alert_settings(settingsfile.load(config), **knobs)
    if fmt is AlertFormat.prometheus_operator:
        out = alertopts.operator_out(out, alerts.RULES_FILE)
    for path in alerts.write_alerts(out or Path("alerts"), fmt.value, settings):
        typer.echo(str(path))


@generate_app.command("kubernetes")
@user_errors
def generate_kubernetes(
    out: Path = typer.Option(Path("deploy/kubernetes/base/generated"), "--out", help="Folder for the generated manifests."),
    config: Path | None = config_option(),
) -> None:
    """Write the PrometheusRule and the Grafana dashboard ConfigMaps of deploy/kubernetes/."""
    from observe import kubernetes, settingsfile

    for path in kubernetes.write_manifests(out, settingsfile.load(config)):
        typer.echo(str(path))


@generate_app.command("vllm-logging")
@user_errors
def generate_vllm_logging(
    out: Path = typer.Option(Path("deploy/kubernetes/components/vllm-logging/logging.json"), "--out", help="The logging.json vLLM reads (VLLM_LOGGING_CONFIG_PATH)."),
    vllm_version: str = typer.Option("0.32.0", "--vllm-version", help="The vLLM release in the image, or the image (vllm/vllm-openai:v0.33.0)."),
    level: str = typer.Option("INFO", "--level", help="What VLLM_LOGGING_LEVEL / --log-level would be (vLLM's stream; the file stays INFO)."),
    prefix: str = typer.Option("", "--prefix", help="What VLLM_LOGGING_PREFIX would be (vLLM's stream only)."),
    stream: str = typer.Option("ext://sys.stdout", "--stream", help="What VLLM_LOGGING_STREAM would be."),
    formatter: str = typer.Option("text", "--formatter", help="text or json (--logging-config.formatter), for vLLM's stream and uvicorn's."),
    exclude_endpoints: list[str] = typer.Option([], "--exclude-endpoint", help="A path left out of the access log (--disable-access-log-for-endpoints; repeatable)."),
    uvicorn_level: str = typer.Option("info", "--uvicorn-log-level", help="What --uvicorn-log-level would be."),
) -> None:
    """Write vLLM's logging configuration with the rotated file observe follows, keeping your own logging choices."""
    from observe import kubernetes

    typer.echo(str(kubernetes.write_vllm_logging(out, kubernetes.VllmLogging(vllm_version, level, prefix, stream, formatter, tuple(exclude_endpoints), uvicorn_level))))
# fmt: on
