"""`observe sidecar`: run beside one vLLM (observe.sidecar) until a signal stops it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import typer

from observe import errors, podlogs
from observe.cli.common import config_option, fail, user_errors
from observe.errors import ObserveError


# fmt: off
@user_errors
def sidecar(
    log: list[str] = typer.Option([], "--log", help="Glob of vLLM log files to follow (repeatable)."),
    pods: list[str] = typer.Option([], "--pods", help="NAMESPACE/POD shell patterns: follow those pods' CRI logs under --pods-root (a DaemonSet)."),
    pods_root: str = typer.Option("/var/log/pods", "--pods-root", help="The kubelet's pod log folder."),
    container: str = typer.Option("vllm", "--container", help="The container of --pods whose log is read."),
    pod_selector: str | None = typer.Option(None, "--pod-selector", help="Label selector (app=vllm): this node's pods it matches, from the Kubernetes API (NODE_NAME), are followed under --pods-root and scraped, one instance each."),
    pod_metrics_port: int | None = typer.Option(None, "--pod-metrics-port", help="Port of their /metrics (default: prometheus.io/port, else port 'http')."),
    pod_metrics_path: str = typer.Option("/metrics", "--pod-metrics-path", help="Path of their /metrics."),
    kube_api: str | None = typer.Option(None, "--kube-api", help="Kubernetes API URL (default: in-cluster)."),
    kube_token_file: str | None = typer.Option(None, "--kube-token-file", help="Bearer token file (default: the pod's)."),
    kube_ca_file: str | None = typer.Option(None, "--kube-ca-file", help="CA of the API (default: the pod's)."),
    vllm_url: str | None = typer.Option(None, "--vllm-url", help="Base URL of vLLM (its /metrics is scraped)."),
    listen: str = typer.Option("127.0.0.1:9400", "--listen", help="HOST:PORT for the sidecar's /metrics, /healthz, /api/diagnosis."),
    scrape_interval: str = typer.Option("15s", "--scrape-interval", help="How often to scrape vLLM's /metrics (e.g. 5s)."),
    window: str = typer.Option("1h", "--window", help="How far back the analysis looks (e.g. 30m, 1h)."),
    analyze_interval: str = typer.Option("30s", "--analyze-interval", help="How often to re-run detection and advice."),
    from_start: bool = typer.Option(False, "--from-start", help="Read the logs' history instead of starting at their end."),
    polling: bool = typer.Option(False, "--polling", help="Poll files instead of inotify/watchdog events."),
    name: str | None = typer.Option(None, "--name", help="Instance name in the diagnosis."),
    warn_every: str = typer.Option("5m", "--warn-every", help="Repeat a lasting warning (vLLM unreachable, no log file) this often."),
    config: Path | None = config_option(),
    api_diagnosis: str = typer.Option("auto", "--api-diagnosis", help="Who may read /api/diagnosis: auto (loopback only, unless a token is set), public, off."),
    api_token_file: Path | None = typer.Option(None, "--api-token-file", help="File whose first line is the bearer token /api/diagnosis requires (else $OBSERVE_API_TOKEN)."),
    state_dir: str | None = typer.Option(None, "--state-dir", help="Folder where read positions and crash counters survive a restart (the shared log volume, an emptyDir); without it a restart starts at the logs' end."),
) -> None:
    """Run beside one vLLM: follow its logs, scrape /metrics, export findings and advice."""
    from observe import kubeapi, settingsfile
    from observe.sidecar import Sidecar
    from observe.sidecarconfig import SidecarSettings
    from observe.tokenfile import read_api_token

    client = kubeapi.from_cli(pod_selector, env=os.environ, server=kube_api, token_file=kube_token_file, ca_file=kube_ca_file, container=container, metrics_port=pod_metrics_port, metrics_path=pod_metrics_path)
    pods = pods or (["*/*"] if client is not None else [])  # the selector picks among the node's pods
    logs = [*log, *podlogs.patterns(podlogs.selectors(pods, container), pods_root)]
    settings = SidecarSettings.from_cli(
        logs=logs, vllm_url=vllm_url, listen=listen, scrape_interval=scrape_interval, window=window,
        analyze_interval=analyze_interval, from_start=from_start, use_watchdog=not polling, name=name,
        thresholds=settingsfile.load(config), warn_every=warn_every, api_diagnosis=api_diagnosis,
        api_token=read_api_token(api_token_file, os.environ), state_dir=state_dir,
    )
    try:
        car = Sidecar(settings, warn=lambda msg: typer.echo(f"observe sidecar: {msg}", err=True), discover=client.pods if client is not None else None)
        car.stop_on_signals()  # before it serves: a signal that comes once /healthz answers must stop it cleanly
        car.start()
    except OSError as e:
        raise ObserveError(f"cannot listen on {listen}: {e.strerror or e}")
    typer.echo(f"observe sidecar: serving {car.listen_url}/metrics", err=True)
    if settings.api_warning:
        typer.echo(f"observe sidecar: {settings.api_warning}", err=True)
    car.wait()
    if car.stopped_by == signal.SIGINT:
        raise fail("interrupted", errors.EXIT_INTERRUPTED)
# fmt: on
