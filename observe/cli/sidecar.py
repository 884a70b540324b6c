"""`observe sidecar`: run beside one vLLM (observe.sidecar.service) until a signal stops it."""

from __future__ import annotations

from pathlib import Path

import typer

from observe.cli.common import config_option, passes, user_errors


@user_errors
@passes("observe.commands.sidecar")
def sidecar(
    log: list[str] = typer.Option([], "--log"),
    pods: list[str] = typer.Option([], "--pods"),
    pods_root: str = typer.Option("/var/log/pods", "--pods-root"),
    container: str = typer.Option("vllm", "--container"),
    pod_selector: str | None = typer.Option(None, "--pod-selector"),
    pod_metrics_port: int | None = typer.Option(None, "--pod-metrics-port"),
    pod_metrics_path: str = typer.Option("/metrics", "--pod-metrics-path"),
    kube_api: str | None = typer.Option(None, "--kube-api"),
    kube_token_file: str | None = typer.Option(None, "--kube-token-file"),
    kube_ca_file: str | None = typer.Option(None, "--kube-ca-file"),
    vllm_url: str | None = typer.Option(None, "--vllm-url"),
    listen: str = typer.Option("127.0.0.1:9400", "--listen"),
    scrape_interval: str = typer.Option("15s", "--scrape-interval"),
    window: str = typer.Option("1h", "--window"),
    analyze_interval: str = typer.Option("30s", "--analyze-interval"),
    from_start: bool = typer.Option(False, "--from-start"),
    polling: bool = typer.Option(False, "--polling"),
    name: str | None = typer.Option(None, "--name"),
    warn_every: str = typer.Option("5m", "--warn-every"),
    config: Path | None = config_option(),
    api_diagnosis: str = typer.Option("auto", "--api-diagnosis"),
    api_token_file: Path | None = typer.Option(None, "--api-token-file"),
    state_dir: str | None = typer.Option(None, "--state-dir"),
) -> None:
    """Run beside one vLLM: follow its logs, scrape /metrics, export findings and advice."""
