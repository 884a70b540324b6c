"""`observe run`'s session: the launch command read with the installed vLLM's own parser, a sidecar
for each launch, and the launcher started, supervised and stopped; a `SessionLauncher` records the
session in DIR/session.json (for `observe tune --run-dir DIR`), which goes when the session ends."""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from observe.flags.installed import VllmFlags, installed_flags
from observe.manage.compare import supervise
from observe.manage.launcher import Launcher
from observe.manage.spec import LaunchSpec, parse_command
from observe.manage.tunerequest import SessionLauncher


def launch_spec(
    argv: Sequence[str], notify: Callable[[str], None] = lambda _: None
) -> tuple[LaunchSpec, VllmFlags | None]:
    """`[--] vllm serve MODEL [FLAGS]` → the LaunchSpec, parsed (and its flags checked) with the
    installed vLLM's parser when its interpreter can be asked; that parser, or None. `notify` hears
    of the check before it starts (it imports vLLM: seconds to a minute) and how it ended."""
    argv = list(argv[1:] if argv[:1] == ["--"] else argv)
    spec = parse_command(argv)
    python = spec.python or sys.executable
    notify(f"checking the command's flags with the installed vLLM's parser ({python}; it imports vLLM)")
    flags = installed_flags(spec.python)
    if flags is not None:
        spec = parse_command(argv, flags=flags)
        flags.check_argv(spec.argv[len(spec.program) :])
        notify(f"the installed vLLM {flags.version} accepts the command")
    else:
        notify(f"no vLLM answered in {python}: the flags are read without its parser")
    return spec, flags


def sidecar_factory(listen: str) -> Callable[[LaunchSpec, Path], Any]:
    """What the launcher starts beside each launch: a sidecar on `listen` reading its log."""

    def make(spec: LaunchSpec, log_path: Path) -> Any:
        from observe.sidecar.config import SidecarSettings
        from observe.sidecar.service import Sidecar

        return Sidecar(
            SidecarSettings.from_cli(logs=[str(log_path)], vllm_url=spec.url, listen=listen, from_start=True)
        )

    return make


def run_session(
    launcher: Launcher, *, startup_timeout: float, notify: Callable[[str], None], **supervising: Any
) -> None:
    """Start vLLM, supervise it (`supervise`'s keywords) until stopped or Ctrl-C, then stop it."""
    try:
        launcher.start(timeout=startup_timeout)
        notify(f"vLLM ready at {launcher.spec.url}; log {launcher.log_path}")
        if launcher.sidecar_error:
            notify(launcher.sidecar_error)
        supervise(launcher, notify=notify, **supervising)
    except KeyboardInterrupt:
        pass
    finally:
        launcher.stop()
        if isinstance(launcher, SessionLauncher):
            launcher.forget()  # no DIR/session.json once the session is over
