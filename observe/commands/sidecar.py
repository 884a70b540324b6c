"""`observe sidecar`: the pods or log files to follow, the settings, the Sidecar served until a
signal stops it."""

from __future__ import annotations

import os
import signal
from pathlib import Path

from observe import errors, settingsfile
from observe.commands import say
from observe.errors import ObserveError
from observe.sidecar import kubeapi, podlogs
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from observe.sidecar.tokenfile import read_api_token


def sidecar(
    *,
    log: list[str],
    pods: list[str],
    pods_root: str,
    container: str,
    pod_selector: str | None,
    pod_metrics_port: int | None,
    pod_metrics_path: str,
    kube_api: str | None,
    kube_token_file: str | None,
    kube_ca_file: str | None,
    vllm_url: str | None,
    listen: str,
    scrape_interval: str,
    window: str,
    analyze_interval: str,
    from_start: bool,
    polling: bool,
    name: str | None,
    warn_every: str,
    config: Path | None,
    api_diagnosis: str,
    api_token_file: Path | None,
    state_dir: str | None,
) -> int:
    """Serve until SIGTERM (0) or SIGINT (EXIT_INTERRUPTED), saying on stderr what it serves and
    what goes wrong meanwhile."""
    client = kubeapi.from_cli(
        pod_selector,
        env=os.environ,
        server=kube_api,
        token_file=kube_token_file,
        ca_file=kube_ca_file,
        container=container,
        metrics_port=pod_metrics_port,
        metrics_path=pod_metrics_path,
    )
    pods = pods or (["*/*"] if client is not None else [])  # the selector picks among the node's pods
    settings = SidecarSettings.from_cli(
        logs=[*log, *podlogs.patterns(podlogs.selectors(pods, container), pods_root)],
        vllm_url=vllm_url,
        listen=listen,
        scrape_interval=scrape_interval,
        window=window,
        analyze_interval=analyze_interval,
        from_start=from_start,
        use_watchdog=not polling,
        name=name,
        thresholds=settingsfile.load(config),
        warn_every=warn_every,
        api_diagnosis=api_diagnosis,
        api_token=read_api_token(api_token_file, os.environ),
        state_dir=state_dir,
    )
    try:
        car = Sidecar(settings, warn=_say, discover=client.pods if client is not None else None)
        car.stop_on_signals()  # before it serves: a signal that comes once /healthz answers must stop it cleanly
        car.start()
    except OSError as e:
        raise ObserveError(f"cannot listen on {listen}: {e.strerror or e}")
    _say(f"serving {car.listen_url}/metrics")
    if settings.api_warning:
        _say(settings.api_warning)
    car.wait()
    if car.stopped_by == signal.SIGINT:
        say("observe: error: interrupted")
        return errors.EXIT_INTERRUPTED
    return 0


def _say(msg: str) -> None:
    say(f"observe sidecar: {msg}")
