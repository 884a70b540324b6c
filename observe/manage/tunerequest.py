"""The files through which `observe tune --run-dir DIR` talks to the `observe run` that manages DIR.

- DIR/session.json: the session (its pid, the vLLM URL, the command running now, the launch folder,
  when it started), written atomically by `observe run` after each launch, removed at its exit;
- DIR/tune-request.json: one tune asked for (its id, objective, budget, workload, settings), written
  atomically by the client, which then signals the session (SIGUSR2); the session takes it by moving
  it to DIR/tune/request.json, so a request is served once;
- DIR/tune-cancel: the client's Ctrl-C (the request id it cancels);
- DIR/tune/: the tune's own record, as `observe tune --out DIR/tune` writes it (history.jsonl,
  report.{json,txt,html}), and result.json last: {id, ok, error} — the client's signal that its
  request is finished. An earlier tune's folder is kept as DIR/tune-<its id>/.

Nothing here prints or signals: the callers do.
"""

from __future__ import annotations

import json
import os
import uuid
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from observe.errors import ConfigError, TargetError
from observe.manage.launcher import Launcher

SESSION = "session.json"
REQUEST = "tune-request.json"
CANCEL = "tune-cancel"
TUNE = "tune"
TAKEN = "request.json"  # DIR/tune/request.json: the request the session serves now
RESULT = "result.json"  # DIR/tune/result.json: written last, when that request is finished


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="milliseconds")


def write_atomic(path: Path, doc: dict[str, Any]) -> None:
    """`doc` as JSON at `path`, never seen half-written: a temporary file beside it, then renamed."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(doc, indent=2, default=str) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def read_json(path: Path) -> dict[str, Any] | None:
    """The JSON object at `path`, or None when it is absent or not (yet) a JSON object."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return None
    return doc if isinstance(doc, dict) else None


def pid_alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie does not)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().rsplit(b")", 1)[1].split()[0] != b"Z"
    except (OSError, IndexError):
        return True


# ---------------------------------------------------------------- the session (observe run's side)


def session_doc(launcher: Launcher, *, started_at: str, pid: int | None = None) -> dict[str, Any]:
    spec = launcher.spec
    return {
        "pid": os.getpid() if pid is None else pid,
        "url": spec.url,
        "argv": spec.argv,
        "command": spec.command(),
        "flags": dict(spec.flags),
        "launch_dir": str(launcher.launch_dir) if launcher.launch_dir is not None else None,
        "run_dir": str(launcher.run_dir),
        "started_at": started_at,
        "updated_at": now_iso(),
    }


class SessionLauncher(Launcher):
    """A Launcher that records the session in run_dir/session.json after each launch that is ready
    (the first, a restart, a rollback, a tune's trial), so a client finds what runs now."""

    started_at = ""

    @property
    def session_file(self) -> Path:
        return self.run_dir / SESSION

    def start(self, *, timeout: float = 600.0) -> None:
        if not self.started_at:
            self.started_at = now_iso()
        super().start(timeout=timeout)
        write_atomic(self.session_file, session_doc(self, started_at=self.started_at))

    def forget(self) -> None:
        """At the session's end: no session.json left behind."""
        try:
            self.session_file.unlink()
        except FileNotFoundError:
            pass


# ---------------------------------------------------------------- the client's side


def _how(run_dir: Path) -> str:
    return f"start one with `observe run --run-dir {run_dir} -- vllm serve MODEL [FLAGS]`"


def live_session(run_dir: Path) -> dict[str, Any]:
    """DIR/session.json of a running `observe run`; TargetError (one line) when there is none."""
    path = run_dir / SESSION
    if not path.exists():
        raise TargetError(f"no `observe run` manages {run_dir} (no {path}): {_how(run_dir)}")
    doc = read_json(path)
    if doc is None or not isinstance(doc.get("pid"), int) or not isinstance(doc.get("argv"), list):
        raise TargetError(f"{path} is not an observe run session file: {_how(run_dir)}")
    if not pid_alive(doc["pid"]):
        raise TargetError(
            f"no `observe run` manages {run_dir}: its session (pid {doc['pid']}) has ended; {_how(run_dir)}"
        )
    return doc


def write_request(run_dir: Path, request: dict[str, Any]) -> str:
    """DIR/tune-request.json (atomically) with a fresh id; the id. ConfigError when one is pending."""
    path = run_dir / REQUEST
    if path.exists():
        raise ConfigError(
            f"a tune request is already waiting in {path}: wait for its tune to end, or remove the file"
        )
    rid = uuid.uuid4().hex[:12]
    write_atomic(path, {**request, "id": rid, "asked_at": now_iso()})
    return rid


def cancel(run_dir: Path, rid: str) -> None:
    write_atomic(run_dir / CANCEL, {"id": rid, "at": now_iso()})


def result(run_dir: Path, rid: str) -> dict[str, Any] | None:
    """DIR/tune/result.json when it answers request `rid`, else None."""
    doc = read_json(run_dir / TUNE / RESULT)
    return doc if doc is not None and doc.get("id") == rid else None


def serving(run_dir: Path, rid: str) -> bool:
    """Whether the session has taken request `rid` (DIR/tune/ is its record now)."""
    doc = read_json(run_dir / TUNE / TAKEN)
    return doc is not None and doc.get("id") == rid


# ---------------------------------------------------------------- the session's side of a request


def take_request(run_dir: Path) -> dict[str, Any] | None:
    """The pending request, moved into a fresh DIR/tune/ (an earlier tune's folder becomes
    DIR/tune-<its id>/); None when there is none."""
    path = run_dir / REQUEST
    doc = read_json(path)
    if doc is None:
        return None
    tune = run_dir / TUNE
    if tune.exists():
        old = read_json(tune / TAKEN) or {}
        tune.rename(run_dir / f"{TUNE}-{old.get('id') or uuid.uuid4().hex[:12]}")
    tune.mkdir(parents=True)
    os.replace(path, tune / TAKEN)
    stale = read_json(run_dir / CANCEL)
    if stale is not None and stale.get("id") != doc.get("id"):
        (run_dir / CANCEL).unlink(missing_ok=True)
    return doc


def cancelled(run_dir: Path, rid: str) -> bool:
    doc = read_json(run_dir / CANCEL)
    return doc is not None and doc.get("id") == rid


def finish(run_dir: Path, rid: str, *, error: str | None = None, code: int | None = None) -> None:
    """DIR/tune/result.json, the request's last word (an error: its line and exit code); the
    cancel file goes."""
    doc = {"id": rid, "ok": error is None, "error": error, "exit_code": code, "at": now_iso()}
    write_atomic(run_dir / TUNE / RESULT, doc)
    (run_dir / CANCEL).unlink(missing_ok=True)
