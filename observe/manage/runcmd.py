"""`observe run`'s composition: the launch command checked with the installed vLLM's parser, the
session's launcher (a sidecar per launch), the signals that stop it (SIGTERM), ask for a diagnosis
(SIGUSR1) or a tune (SIGUSR2, `observe tune --run-dir`), and the supervising session; the CLI
passes the options, how to show a proposal and ask before applying it, and the tune server."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable
from pathlib import Path
from typing import IO, Any

from observe.manage.propose import Proposal
from observe.manage.session import launch_spec, run_session, sidecar_factory
from observe.manage.tunerequest import SessionLauncher
from observe.report.progressbar import waiting


def run_command(
    args: list[str],
    run_dir: Path,
    *,
    sidecar: bool,
    listen: str,
    echo: IO[str] | None,
    log_max_bytes: int,
    log_backups: int,
    startup_timeout: float,
    notify: Callable[[str], None],
    show: Callable[[Proposal], None],
    confirm: Callable[[], bool],
    apply: bool,
    tune_server: Callable[..., Any],
    **supervising: Any,
) -> None:
    """Launch `args` (`vllm serve MODEL [FLAGS]`) under `run_dir`, supervise it until SIGTERM or
    Ctrl-C; each proposal is shown, and applied when `apply` and `confirm()` say so."""
    with waiting("checking the flags with the installed vLLM's parser"):
        spec, flags = launch_spec(args, notify=notify)
    factory = sidecar_factory(listen) if sidecar else None
    launcher = SessionLauncher(
        spec,
        run_dir,
        echo=echo,
        log_max_bytes=log_max_bytes,
        log_backups=log_backups,
        sidecar_factory=factory,
    )
    stop, trigger, tune_trigger = threading.Event(), threading.Event(), threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    signal.signal(signal.SIGUSR1, lambda *_: trigger.set())
    signal.signal(signal.SIGUSR2, lambda *_: tune_trigger.set())  # `observe tune --run-dir DIR` asks

    def decide(prop: Proposal) -> bool:
        show(prop)
        return bool(apply and prop.accepted and confirm())

    tune = tune_server(run_dir, flags=flags, notify=notify, stop=stop, launch_timeout=startup_timeout)
    run_session(
        launcher,
        startup_timeout=startup_timeout,
        notify=notify,
        stop=stop,
        trigger=trigger,
        decide=decide,
        flags=flags,
        tune=tune,
        tune_trigger=tune_trigger,
        **supervising,
    )
