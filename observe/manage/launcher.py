"""Run vLLM as a child process: a rotating log, /metrics snapshots, a history file, restarts.

Each launch gets its own folder under the run folder (`NNN/vllm.log`, rotating, and
`NNN/metrics-K.txt`), so `observe diagnose` and `observe compare` read it as any vLLM log;
`history.jsonl` beside them has one JSON line per start, change, failure and rollback. A vLLM that
fails to start or crashes is reported with the cause read from its log. vLLM's output goes to the
terminal stream the caller passes in; nothing here prints.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, Any

import requests

from observe.errors import EXIT_LAUNCH, ConfigError, ObserveError, TargetError
from observe.manage.apply import flag_diff
from observe.manage.failure import failure_cause
from observe.manage.spec import LaunchSpec
from observe.model import Recommendation
from observe.parse import rotation
from observe.tee import RotatingTee


class LaunchError(ObserveError):
    """vLLM did not start (or stopped): the message carries the cause read from its log."""

    exit_code = EXIT_LAUNCH


class RolledBack(LaunchError):
    """The changed command failed to start; the previous command runs again."""


def read_log(path: Path) -> str:
    """A rotated log's whole text, oldest part first (compressed parts are left out)."""
    try:
        names = os.listdir(path.parent)
    except OSError:
        names = []
    text = []
    for p in [*(path.parent / n for n in rotation.siblings(names, path.name)), path]:
        try:
            text.append(p.read_text(encoding="utf-8", errors="replace"))
        except OSError:
            pass
    return "".join(text)


# ---------------------------------------------------------------- history


def _now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def record(history: Path, event: str, **fields: Any) -> dict[str, Any]:
    """Append one JSON line {at, event, ...} to the history file; return it."""
    entry = {"at": _now_iso(), "event": event, **fields}
    history.parent.mkdir(parents=True, exist_ok=True)
    with open(history, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(entry, default=str) + "\n")
    return entry


def read_history(history: Path) -> list[dict[str, Any]]:
    """The history file's entries, oldest first; lines that are not JSON are skipped."""
    if not history.exists():
        return []
    out = []
    for line in history.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue
    return out


# ---------------------------------------------------------------- /metrics and /health


def save_metrics(url: str, path: Path, *, note: str = "", timeout: float = 5.0) -> Path:
    """GET <url>/metrics and save it with a `# scraped_at <ISO>` first line.

    TargetError (one line) when vLLM cannot be reached or does not answer 200.
    """
    target = url.rstrip("/") + "/metrics"
    try:
        resp = requests.get(target, timeout=timeout)
    except requests.Timeout:
        raise TargetError(f"cannot read {target}: no answer within {timeout:g} s") from None
    except (requests.RequestException, ValueError) as e:
        raise TargetError(f"cannot read {target}: {_reason(e)}") from None
    if resp.status_code != 200:
        raise TargetError(f"cannot read {target}: HTTP {resp.status_code}")
    body = resp.content.decode("utf-8", "replace")
    path.write_text(f"# scraped_at {_now_iso()}{(' ' + note) if note else ''}\n{body}", encoding="utf-8")
    return path


def _reason(e: BaseException) -> str:
    """The operating system's words for a failed connection (`[Errno 111] Connection refused`)."""
    seen: BaseException | None = e
    while seen is not None:
        if isinstance(seen, OSError) and seen.errno is not None and seen.strerror:
            return f"[Errno {seen.errno}] {seen.strerror}"
        seen = seen.__cause__ or seen.__context__
    return str(e).splitlines()[0] if str(e) else type(e).__name__


def port_taken(spec: LaunchSpec) -> str | None:
    """Why `spec`'s port cannot be bound, or None when it is free: another server listening there
    would answer /health for vLLM, which then dies with "Address already in use". Bound as vLLM
    binds it (its --host, every interface by default), with SO_REUSEADDR as uvicorn does, so a
    previous launch's closing connections do not count."""
    host = spec.get("--host")
    host = "" if host in (None, True, "") else str(host)
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    try:
        with socket.socket(family, socket.SOCK_STREAM) as s:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((host, spec.port))
    except OSError as e:  # only a port in use: another address or a privileged port is vLLM's to report
        return f"[Errno {e.errno}] {e.strerror}" if e.errno == errno.EADDRINUSE else None
    return None


def check_port(spec: LaunchSpec) -> None:
    """LaunchError (exit 4, one line) when `spec`'s port is already taken, before anything starts."""
    why = port_taken(spec)
    if why is not None:
        raise LaunchError(_port_message(spec, why))


def _port_message(spec: LaunchSpec, why: str) -> str:
    return f"port {spec.port} is already in use ({why}): another server answers there; stop it or give the command another --port"


def served_models(url: str, timeout: float = 5.0) -> list[str] | None:
    """The model ids `url`/v1/models lists (vLLM's OpenAI server), or None when it gives no list."""
    try:
        r = requests.get(url.rstrip("/") + "/v1/models", timeout=timeout)
        data = r.json().get("data") if r.status_code == 200 else None
    except (requests.RequestException, ValueError, AttributeError):
        return None
    if not isinstance(data, list):
        return None
    return [str(m["id"]) for m in data if isinstance(m, dict) and "id" in m]


def _names(spec: LaunchSpec) -> set[str]:
    """The names a launch answers to: its --served-model-name(s), else its model."""
    served = spec.get("--served-model-name")
    if isinstance(served, list):
        return {str(x) for x in served}
    if isinstance(served, str):
        return {served}
    return {spec.model} if spec.model else set()


def _healthy(url: str) -> bool:
    try:
        return requests.get(url.rstrip("/") + "/health", timeout=2).status_code == 200
    except (requests.RequestException, ValueError):
        return False


# ---------------------------------------------------------------- the process group


def _group_alive(pgid: int) -> bool:
    """Whether a process other than a zombie is left in the process group `pgid`."""
    try:
        entries = os.listdir("/proc")
    except OSError:  # no /proc: ask the kernel (zombies count as alive there)
        try:
            os.killpg(pgid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        return True
    for e in entries:
        if not e.isdigit():
            continue
        try:
            with open(f"/proc/{e}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if len(fields) > 2 and int(fields[2]) == pgid and fields[0] != b"Z":
            return True
    return False


def _sweep_group(pgid: int, grace: float) -> None:
    """End what is left of the process group `pgid`: SIGTERM, then SIGKILL after `grace` seconds.

    vLLM's engine core and workers run in the launch's group; when the API server exits first
    (or crashes), they can outlive it and keep the accelerator's memory.
    """
    if not _group_alive(pgid):
        return
    try:
        os.killpg(pgid, signal.SIGTERM)
    except ProcessLookupError:
        return
    if _wait_group(pgid, grace):
        return
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        return
    _wait_group(pgid, 5.0)


def _wait_group(pgid: int, seconds: float) -> bool:
    """Wait until the process group `pgid` is gone; False if it is still there after `seconds`."""
    deadline = time.monotonic() + seconds
    while _group_alive(pgid):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.1)
    return True


# ---------------------------------------------------------------- the launcher


class Launcher:
    """Run one vLLM at a time as a child process, each launch in its own folder under `run_dir`.

    `run_dir/NNN/vllm.log` (rotating) and `run_dir/NNN/metrics-K.txt` (snapshots) hold what each
    launch printed and exposed, so `observe diagnose run_dir/NNN` and `observe compare
    run_dir/001 run_dir/002` work on them; `run_dir/history.jsonl` records each step. vLLM runs in
    a session of its own; whatever of it is left when its main process has exited is ended after
    `child_grace` seconds.
    """

    def __init__(
        self,
        spec: LaunchSpec,
        run_dir: Path,
        *,
        env: dict[str, str] | None = None,
        echo: IO[str] | None = None,
        log_max_bytes: int = 10 * 2**20,
        log_backups: int = 5,
        sidecar_factory: Callable[[LaunchSpec, Path], Any] | None = None,
        child_grace: float = 10.0,
    ) -> None:
        self.spec = spec
        self.run_dir = run_dir
        self.env = env
        self.echo = echo
        self.log_max_bytes = log_max_bytes
        self.log_backups = log_backups
        self.sidecar_factory = sidecar_factory
        self.child_grace = child_grace
        self.sidecar: Any = None
        self.sidecar_error: str | None = None
        self.proc: subprocess.Popen | None = None
        self.launch_dir: Path | None = None
        self._tee: RotatingTee | None = None
        self._pump: threading.Thread | None = None
        self._snap = 0
        run_dir.mkdir(parents=True, exist_ok=True)

    @property
    def history(self) -> Path:
        return self.run_dir / "history.jsonl"

    @property
    def log_path(self) -> Path:
        if self.launch_dir is None:
            raise ConfigError("vLLM has not been started: there is no log yet")
        return self.launch_dir / "vllm.log"

    def _next_dir(self) -> Path:
        n = 1 + max(
            (int(p.name) for p in self.run_dir.iterdir() if p.is_dir() and p.name.isdigit()), default=0
        )
        d = self.run_dir / f"{n:03d}"
        d.mkdir()
        return d

    def _exited(self, proc: subprocess.Popen) -> None:
        """After vLLM's main process has exited: end its leftover children, finish the log."""
        _sweep_group(proc.pid, self.child_grace)
        if self._pump is not None:
            self._pump.join(timeout=10)

    def start(self, *, timeout: float = 600.0) -> None:
        """Start vLLM and wait for /health; LaunchError with the cause from the log if it fails, or
        before anything starts when its port is taken; and when the server that answers lists other
        models than the launch's (another server on the port), after stopping it."""
        why = port_taken(self.spec)
        if why is not None:
            record(self.history, "failed", argv=self.spec.argv, cause=f"port {self.spec.port} in use: {why}")
            raise LaunchError(_port_message(self.spec, why))
        self.launch_dir = self._next_dir()  # only vLLM's log and snapshots go here: `diagnose` reads it all
        self._tee = RotatingTee(
            self.log_path, max_bytes=self.log_max_bytes, backups=self.log_backups, echo=self.echo
        )
        env = dict(os.environ if self.env is None else self.env)
        env.setdefault("PYTHONUNBUFFERED", "1")
        try:
            proc = subprocess.Popen(
                self.spec.argv,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                env=env,
                start_new_session=True,
            )
        except OSError as e:
            self._tee.close()
            record(self.history, "failed", argv=self.spec.argv, dir=str(self.launch_dir), cause=str(e))
            raise LaunchError(f"cannot start {self.spec.program[0]}: {e.strerror or e}") from None
        self.proc = proc
        self._pump = threading.Thread(target=self._tee.pump, args=(proc.stdout,), daemon=True)
        self._pump.start()
        record(self.history, "start", argv=self.spec.argv, dir=str(self.launch_dir), pid=proc.pid)
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                self._exited(proc)
                cause = failure_cause(read_log(self.log_path), source=str(self.log_path))
                record(
                    self.history,
                    "failed",
                    argv=self.spec.argv,
                    dir=str(self.launch_dir),
                    rc=proc.returncode,
                    cause=cause,
                )
                raise LaunchError(
                    f"vLLM failed to start (exit code {proc.returncode}): {cause}; log: {self.log_path}"
                )
            if _healthy(self.spec.url) and proc.poll() is None:  # exited: answered by another
                self._check_model()
                record(self.history, "ready", argv=self.spec.argv, dir=str(self.launch_dir))
                self._start_sidecar()
                return
            time.sleep(1.0)
        self.stop()
        cause = failure_cause(read_log(self.log_path))
        record(
            self.history, "failed", argv=self.spec.argv, dir=str(self.launch_dir), cause=f"timeout; {cause}"
        )
        raise LaunchError(f"vLLM did not answer {self.spec.url}/health within {timeout:.0f} s; last: {cause}")

    def _check_model(self) -> None:
        """LaunchError, the launch stopped, when the server lists models and none is this launch's."""
        want = _names(self.spec)
        got = served_models(self.spec.url) if want else None
        if got is None or want & set(got):
            return
        self.stop()
        cause = f"{self.spec.url} answers for {', '.join(got) or 'no model'}, not {', '.join(sorted(want))}"
        record(self.history, "failed", argv=self.spec.argv, dir=str(self.launch_dir), cause=cause)
        raise LaunchError(f"{cause}: another server on port {self.spec.port}? stop it or give another --port")

    def _start_sidecar(self) -> None:
        if self.sidecar_factory is None:
            return
        try:
            self.sidecar = self.sidecar_factory(self.spec, self.log_path)
            if self.sidecar is not None:
                self.sidecar.start()
            self.sidecar_error = None
        except (OSError, ObserveError) as e:  # e.g. its port is taken: vLLM keeps running without it
            self.sidecar = None
            self.sidecar_error = f"sidecar not started: {e}"
            record(self.history, "sidecar_failed", dir=str(self.launch_dir), cause=str(e))

    def _stop_sidecar(self) -> None:
        if self.sidecar is not None:
            try:
                self.sidecar.stop()
            finally:
                self.sidecar = None

    def alive(self) -> bool:
        return self.proc is not None and self.proc.poll() is None

    def check(self) -> None:
        """LaunchError with the cause from the log when vLLM has exited on its own (a crash)."""
        if self.proc is not None and self.proc.poll() is not None:
            rc = self.proc.returncode
            self._exited(self.proc)
            cause = failure_cause(read_log(self.log_path))
            record(self.history, "crash", argv=self.spec.argv, dir=str(self.launch_dir), rc=rc, cause=cause)
            self.proc = None
            self._stop_sidecar()
            raise LaunchError(f"vLLM stopped unexpectedly (exit code {rc}): {cause}; log: {self.log_path}")

    def snapshot(self, note: str = "") -> Path:
        """Save /metrics into this launch's folder as metrics-<k>.txt."""
        if self.launch_dir is None:
            raise ConfigError("vLLM has not been started: no /metrics to save")
        self._snap += 1
        return save_metrics(self.spec.url, self.launch_dir / f"metrics-{self._snap}.txt", note=note)

    def stop(self, timeout: float = 30.0) -> int | None:
        """SIGTERM vLLM (it stops its own children), SIGKILL its group if it lingers; then end
        any of its children still running."""
        self._stop_sidecar()
        if self.proc is None:
            return None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=10)
        self._exited(self.proc)
        rc = self.proc.returncode
        record(self.history, "stop", argv=self.spec.argv, dir=str(self.launch_dir), rc=rc)
        self.proc = None
        self._snap = 0
        return rc

    def restart(
        self, new: LaunchSpec, *, recommendations: Sequence[Recommendation] = (), timeout: float = 600.0
    ) -> None:
        """Stop, start `new`; if it fails, start the previous command again and raise RolledBack
        (LaunchError when the previous command fails too).

        The caller asks the user first: this method applies what it is given.
        """
        old = self.spec
        before_dir = self.launch_dir
        self.stop()
        record(
            self.history,
            "apply",
            before=old.argv,
            after=new.argv,
            before_dir=str(before_dir),
            changes=[{"flag": f, "from": a, "to": b} for f, a, b in flag_diff(old, new)],
            recommendations=[
                {"flag": r.flag, "current": r.current, "suggested": r.suggested, "reason": r.reason}
                for r in recommendations
            ],
        )
        self.spec = new
        try:
            self.start(timeout=timeout)
        except LaunchError as e:
            self.spec = old
            record(self.history, "rollback", argv=old.argv, cause=str(e))
            try:
                self.start(timeout=timeout)
            except LaunchError as e2:
                raise LaunchError(f"{e}; rolling back to the previous command failed too: {e2}") from None
            raise RolledBack(f"{e}; rolled back to the previous command: {old.command()}") from None
