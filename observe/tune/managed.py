"""`observe tune --run-dir DIR`: tune the vLLM that `observe run` manages in DIR, on its own launcher.

The client (`ask`) reads DIR/session.json, checks its options as `observe tune` does, writes
DIR/tune-request.json and signals the session (SIGUSR2); then it follows DIR/tune/history.jsonl
until DIR/tune/result.json answers its request, and returns the report. Its Ctrl-C asks the session
to stop the tune (DIR/tune-cancel and the signal again): the session keeps the best so far.

The session (`server`, called by `manage.supervise` on SIGUSR2) runs the `Tuner` on the launcher it
supervises: trial 1 is the launch running now, measured without a relaunch; each other trial is a
launch of that launcher (DIR/NNN/, in DIR/history.jsonl); at the end the instance runs the best
configuration, and whatever fails inside the tune, it runs a command known to start (the one it ran
before the tune) — else the session ends as on a crash. The files: `manage.tunerequest`.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

from observe import settings as settings_mod
from observe import settingsfile
from observe.errors import EXIT_INTERRUPTED, ObserveError, TargetError
from observe.flags.installed import VllmFlags
from observe.manage import Launcher, LaunchError, parse_command
from observe.manage import tunerequest as tr
from observe.settings import Settings
from observe.trials import OBJECTIVES
from observe.tune import bench, report
from observe.tune.bench import Workload
from observe.tune.loop import Budget, Tuner, check, model_name, tokenizer
from observe.tune.report import write_report

Notify = Callable[[str], None]


class TuneFailed(ObserveError):
    """The session's tune ended in an error; the exit code is the one it reported."""

    def __init__(self, msg: str, code: int | None) -> None:
        super().__init__(msg)
        if code:
            self.exit_code = code


# ---------------------------------------------------------------- the client


def ask(
    run_dir: Path,
    *,
    objective: str,
    budget: Budget,
    workload: Workload,
    settings: Settings,
    notify: Notify,
    poll: float = 0.5,
) -> dict[str, Any]:
    """Ask the `observe run` managing `run_dir` for a tune; wait for it; its report document."""
    sess = tr.live_session(run_dir)
    check(objective, budget, workload)
    spec = parse_command(sess["argv"])
    notify("checking the workload with the installed vLLM's benchmark client")
    bench.preflight(spec.python or sys.executable, model_name(spec), tokenizer(spec), workload)
    rid = tr.write_request(
        run_dir,
        {
            "objective": objective,
            "budget": asdict(budget),
            "workload": workload.to_dict(),
            "settings_yaml": settingsfile.to_yaml(settings),
            "client_pid": os.getpid(),
        },
    )
    pid = int(sess["pid"])
    try:
        os.kill(pid, signal.SIGUSR2)
    except ProcessLookupError:
        (run_dir / tr.REQUEST).unlink(missing_ok=True)
        raise TargetError(
            f"the `observe run` session (pid {pid}) managing {run_dir} has just ended"
        ) from None
    notify(
        f"asked the `observe run` session (pid {pid}) to tune {sess['command']}; record: {run_dir / tr.TUNE}"
    )
    return follow(run_dir, rid, pid, notify=notify, poll=poll)


def _progress_line(t: dict[str, Any]) -> str:
    what = report.change_text(t)
    mean = (t.get("objective") or {}).get("mean")
    value = f"{mean:,.2f}" if isinstance(mean, (int, float)) else "—"
    return f"trial {t.get('trial')}: {what}: {value} — {t.get('outcome')}: {t.get('why')}"


def follow(
    run_dir: Path,
    rid: str,
    pid: int,
    *,
    notify: Notify,
    poll: float = 0.5,
    sleep: Callable[[float], None] = time.sleep,
) -> dict[str, Any]:
    """Progress lines from DIR/tune/history.jsonl until DIR/tune/result.json answers `rid`; the report.
    Ctrl-C once: cancel (the session keeps the best so far, and the report still comes); twice: stop
    waiting. TargetError when the session dies first."""
    seen = 0
    cancelled = False
    history = run_dir / tr.TUNE / "history.jsonl"
    while True:
        try:
            res = tr.result(run_dir, rid)
            if tr.serving(run_dir, rid):
                lines = history.read_text(encoding="utf-8").splitlines() if history.exists() else []
                for line in lines[seen:]:
                    try:
                        notify(_progress_line(json.loads(line)))
                    except (ValueError, TypeError, KeyError, AttributeError):
                        break  # a line being written: read it again next time
                    seen += 1
            if res is not None:
                if not res.get("ok"):
                    raise TuneFailed(str(res.get("error") or "the tune failed"), res.get("exit_code"))
                doc = tr.read_json(run_dir / tr.TUNE / "report.json")
                if doc is None:
                    raise TuneFailed(
                        f"the session finished the tune but wrote no {run_dir / tr.TUNE / 'report.json'}",
                        None,
                    )
                return doc
            if not tr.pid_alive(pid):
                raise TargetError(
                    f"the `observe run` session (pid {pid}) ended before the tune finished; "
                    f"see {run_dir / 'history.jsonl'} and {run_dir / tr.TUNE}"
                )
            sleep(poll)
        except KeyboardInterrupt:
            if cancelled:
                raise
            cancelled = True
            try:
                (run_dir / tr.REQUEST).unlink()  # not taken yet: withdrawn, nothing ran
                raise TuneFailed(
                    "interrupted before the session started the tune: nothing was changed", EXIT_INTERRUPTED
                ) from None
            except FileNotFoundError:
                pass
            tr.cancel(run_dir, rid)
            try:
                os.kill(pid, signal.SIGUSR2)
            except ProcessLookupError:
                pass
            notify(
                "asked the session to stop the tune; it keeps the best configuration so far (Ctrl-C again: stop waiting)"
            )


# ---------------------------------------------------------------- the session


def _request_parts(req: dict[str, Any]) -> tuple[str, Budget, Workload, Settings]:
    objective = str(req.get("objective"))
    if objective not in OBJECTIVES:
        raise ObserveError(
            f"the tune request's objective {objective!r} is not one of {', '.join(OBJECTIVES)}"
        )
    try:
        budget = Budget(**req["budget"])
        w = dict(req["workload"])
        workload = Workload(**{**w, "extra": tuple(w.get("extra") or ())})
    except (KeyError, TypeError) as e:
        raise ObserveError(f"the tune request is not one this observe reads ({e})") from None
    settings = settings_mod.from_yaml(
        str(req.get("settings_yaml") or ""), source="the tune request's settings"
    )
    check(objective, budget, workload)
    return objective, budget, workload, settings


def server(
    run_dir: Path,
    *,
    flags: VllmFlags | None,
    notify: Notify,
    stop: threading.Event,
    launch_timeout: float = 600.0,
) -> Callable[[Launcher], bool]:
    """`supervise`'s tune hook: serve the pending requests on its launcher; True when one was served
    (the launch may be another one now)."""

    def serve(launcher: Launcher) -> bool:
        served = False
        while not stop.is_set():
            req = tr.take_request(run_dir)
            if req is None:
                break
            served = True
            _serve_one(
                run_dir, launcher, req, flags=flags, notify=notify, stop=stop, launch_timeout=launch_timeout
            )
        return served

    return serve


def _serve_one(
    run_dir: Path,
    launcher: Launcher,
    req: dict[str, Any],
    *,
    flags: VllmFlags | None,
    notify: Notify,
    stop: threading.Event,
    launch_timeout: float,
) -> None:
    rid = str(req.get("id"))
    before = launcher.spec  # runs now, so it is known to start
    tune_stop, done = threading.Event(), threading.Event()

    def watch() -> None:  # the client's cancel or the session's own stop end the tune
        while not done.wait(0.5):
            if stop.is_set() or tr.cancelled(run_dir, rid):
                tune_stop.set()

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    error: tuple[str, int] | None = None
    try:
        objective, budget, workload, settings = _request_parts(req)
        notify(
            f"tune request {rid}: objective {objective}, at most {budget.trials} trials; record {run_dir / tr.TUNE}"
        )
        tuner = Tuner(
            before,
            run_dir / tr.TUNE,
            workload=workload,
            settings=settings,
            objective=objective,
            budget=budget,
            flags=flags,
            python=before.python or sys.executable,
            notify=lambda m: notify(f"tune: {m}"),
            stop=tune_stop,
            launch_timeout=launch_timeout,
            launcher=launcher,
            running=True,
        )
        outcome = tuner.run()
        write_report(run_dir / tr.TUNE, outcome)
        if tuner.interrupted:  # Ctrl-C at `observe run`'s terminal: the tune settled, now the session ends
            raise KeyboardInterrupt
    except ObserveError as e:
        error = (str(e), e.exit_code)
    except Exception as e:  # the session must outlive any failure of its tune
        error = (f"the tune failed: {type(e).__name__}: {e}", 1)
    finally:
        done.set()
        watcher.join(timeout=5)
        try:
            _keep_up(launcher, before, notify=notify, timeout=launch_timeout)
        except LaunchError as e:
            tr.finish(run_dir, rid, error=f"{error[0] + '; ' if error else ''}{e}", code=e.exit_code)
            raise
        if error is not None:
            notify(f"tune request {rid} failed: {error[0]}")
        tr.finish(run_dir, rid, error=error[0] if error else None, code=error[1] if error else None)


def _keep_up(launcher: Launcher, before: Any, *, notify: Notify, timeout: float) -> None:
    """Whatever happened in the tune: vLLM runs (the command it ran before, if nothing runs now)."""
    if launcher.alive():
        return
    launcher.stop()
    launcher.spec = before
    notify(f"vLLM is not running after the tune: starting the command it ran before: {before.command()}")
    launcher.start(timeout=timeout)
