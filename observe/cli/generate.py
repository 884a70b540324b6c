"""`observe generate dashboards|alerts|kubernetes|vllm-logging`: the generated files, from one settings object."""

from __future__ import annotations

from pathlib import Path

import typer

from observe.cli.common import AlertFormat, config_option, passes, user_errors

generate_app = typer.Typer(
    help="Write dashboards/*.json or alerts/*.yml from the generators.", no_args_is_help=True
)


@generate_app.command("dashboards")
@user_errors
def generate_dashboards(
    out: Path = typer.Option(Path("dashboards"), "--out"),
    config: Path | None = config_option(),
) -> None:
    """Write the Grafana dashboards (Overview, Tuning, KV cache, Instances, GPU, spec decode & KV transfer) as JSON."""
    from observe import settingsfile
    from observe.monitoring import dashboards

    for path in dashboards.write_dashboards(out, settingsfile.load(config)):
        typer.echo(str(path))


@generate_app.command("alerts")
@user_errors
@passes("observe.commands.generate")
def generate_alerts(
    out: Path | None = typer.Option(None, "--out"),
    fmt: AlertFormat = typer.Option(AlertFormat.prometheus, "--format"),
    max_num_seqs: int | None = typer.Option(None, "--max-num-seqs"),
    kv_usage: float | None = typer.Option(None, "--kv-usage-threshold"),
    ttft_slo: float | None = typer.Option(None, "--ttft-slo"),
    itl_slo: float | None = typer.Option(None, "--itl-slo"),
    runbook_base: str | None = typer.Option(None, "--runbook-base", metavar="URL"),
    selector: str | None = typer.Option(None, "--selector"),
    vllm_selector: str | None = typer.Option(None, "--vllm-selector"),
    rule_label: list[str] = typer.Option([], "--rule-label"),
    namespace: str | None = typer.Option(None, "--namespace"),
    min_request_rate: float | None = typer.Option(None, "--min-request-rate"),
    config: Path | None = config_option(),
) -> None:
    """Write the Prometheus recording and alerting rules (alerts/*.yml) from one settings object."""


@generate_app.command("kubernetes")
@user_errors
def generate_kubernetes(
    out: Path = typer.Option(Path("deploy/kubernetes/base/generated"), "--out"),
    config: Path | None = config_option(),
) -> None:
    """Write the PrometheusRule and the Grafana dashboard ConfigMaps of deploy/kubernetes/."""
    from observe import settingsfile
    from observe.monitoring import kubernetes

    for path in kubernetes.write_manifests(out, settingsfile.load(config)):
        typer.echo(str(path))


@generate_app.command("vllm-logging")
@user_errors
def generate_vllm_logging(
    out: Path = typer.Option(Path("deploy/kubernetes/components/vllm-logging/logging.json"), "--out"),
    vllm_version: str = typer.Option("0.32.0", "--vllm-version"),
    level: str = typer.Option("INFO", "--level"),
    prefix: str = typer.Option("", "--prefix"),
    stream: str = typer.Option("ext://sys.stdout", "--stream"),
    formatter: str = typer.Option("text", "--formatter"),
    exclude_endpoints: list[str] = typer.Option([], "--exclude-endpoint"),
    uvicorn_level: str = typer.Option("info", "--uvicorn-log-level"),
) -> None:
    """Write vLLM's logging configuration with the rotated file observe follows, keeping your own logging choices."""
    from observe.monitoring import kubernetes

    conf = kubernetes.VllmLogging(
        vllm_version, level, prefix, stream, formatter, tuple(exclude_endpoints), uvicorn_level
    )
    typer.echo(str(kubernetes.write_vllm_logging(out, conf)))
