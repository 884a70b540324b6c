"""`observe tune`: the managed vLLM finds its best flags by diagnosis, one lever at a time.

Launch the command (`manage.Launcher`), drive vLLM's own benchmark client (`bench`), diagnose the
run (the same pipeline as `observe diagnose`), take the plan's first recommendation that the
installed vLLM's parser accepts, relaunch with it, measure again, keep it only when the objective
gained more than the measured noise (`observe.trials`, pure; the start and the change remeasured in
turn while the noise leaves it undecided), else revert and try the next finding's lever.
Every trial is a line of `OUT/history.jsonl`; `report` writes the final text, JSON and HTML.
"""

from __future__ import annotations

import json
import shlex
import signal
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from observe.errors import EXIT_INTERRUPTED, ConfigError, ObserveError
from observe.manage import check_port, installed_flags, parse_command
from observe.settings import Settings
from observe.tune import bench, report
from observe.tune.bench import Workload, WorkloadError
from observe.tune.loop import Budget, Outcome, Tuner, check
from observe.tune.loop import model_name as _model_name
from observe.tune.loop import tokenizer as _tokenizer
from observe.tune.report import write_report

__all__ = [
    "Budget",
    "Interrupted",
    "Outcome",
    "Tuner",
    "Workload",
    "WorkloadError",
    "bench",
    "report",
    "tune",
]


class Interrupted(ObserveError):
    """Ctrl-C: the record is written (the trial in flight marked `interrupted`); exit 130."""

    exit_code = EXIT_INTERRUPTED


def tune(
    command: Sequence[str],
    out: Path,
    *,
    workload: Workload,
    settings: Settings,
    objective: str = "throughput",
    budget: Budget,
    notify: Callable[[str], None],
    echo: IO[str] | None = None,
    env: dict[str, str] | None = None,
    launch_timeout: float = 600.0,
) -> tuple[Outcome, dict[str, Any]]:
    """Tune `command` (`vllm serve MODEL [FLAGS]`); write OUT/report.{json,txt,html}; return the
    outcome and the report document. Bad input (a zero budget, a vLLM without `bench serve`, a
    command that is not a vLLM launch, a port another server holds) is a one-line ObserveError
    before anything starts; Ctrl-C is `Interrupted` (exit 130) once the record is written."""
    check(objective, budget, workload)
    spec = parse_command(command)
    check_port(spec)  # another server there would answer for vLLM: exit 4 before any traffic
    python = spec.python or sys.executable
    notify(f"checking the command's flags with the installed vLLM's parser ({python})")
    flags = installed_flags(python)
    if flags is not None:
        spec = parse_command(command, flags=flags)
        flags.check_argv(spec.argv[len(spec.program) :])  # the starting command, as vLLM reads it
    stop = threading.Event()
    notify("checking the workload with the installed vLLM's benchmark client")
    bench.preflight(python, _model_name(spec), _tokenizer(spec), workload)
    tuner = Tuner(
        spec,
        out,
        workload=workload,
        settings=settings,
        objective=objective,
        budget=budget,
        flags=flags,
        python=python,
        env=env,
        notify=notify,
        echo=echo,
        stop=stop,
        launch_timeout=launch_timeout,
    )
    previous = signal.getsignal(signal.SIGTERM)
    if threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGTERM, lambda *_: stop.set())
    try:
        outcome = tuner.run()
    finally:
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, previous)
    doc = write_report(out, outcome)
    if outcome.interrupted:
        raise Interrupted(interrupted_line(outcome))
    return outcome, doc


def interrupted_line(o: Outcome) -> str:
    """The one line Ctrl-C ends `observe tune` with: where the record is, the best measured."""
    cut = [t.n for t in o.trials if t.outcome == "interrupted"]
    best = (
        f"best measured: trial {o.best.n}: {shlex.join(o.best.argv)}"
        if o.best is not None
        else "no configuration was measured: nothing to recommend"
    )
    return (
        f"interrupted (Ctrl-C){f' during trial {cut[0]}' if cut else ''}: the record is in "
        f"{o.out / 'history.jsonl'} and {o.out / 'report.txt'}; {best}"
    )


def run_options(
    argv: Sequence[str],
    out: Path,
    *,
    settings: Settings,
    objective: str,
    trials: int,
    time_budget: float,
    repeats: int,
    fmt: str,
    max_repeats: int = 6,
    notify: Callable[[str], None],
    echo: IO[str] | None,
    run_dir: Path | None = None,
    **workload: Any,
) -> str:
    """`observe tune`'s options → the tune, and its report as the text or JSON to print. With
    `run_dir` (and no command) the tune is asked of the `observe run` managing it (`managed.ask`)."""
    if fmt not in ("text", "json"):
        raise ConfigError(f"--format must be text or json, not {fmt!r}")
    argv = list(argv)
    argv = argv[1:] if argv and argv[0] == "--" else argv
    given = set(workload.pop("given", ()))  # the options the command line (or OBSERVE_TUNE_*) set
    window = workload.pop("traffic_window", 60.0)
    if run_dir is not None:  # refused before any traffic is read
        if argv:
            raise ConfigError("--run-dir tunes the vLLM `observe run` manages there: give no command")
        if given & {"out", "quiet"}:  # the session writes the record and owns vLLM's output
            raise ConfigError(
                f"--{'out' if 'out' in given else 'echo/--quiet'} does not apply with --run-dir: the tune's "
                f"record goes to {run_dir / 'tune'}, and vLLM's output to the `observe run` session"
            )
    source = workload.pop("workload_from", None)
    if source:  # the traffic's figures, except where an option was given explicitly
        from observe.tune import traffic

        workload = traffic.fill(workload, source, given=given, window=window, notify=notify)
    workload["max_concurrency"] = workload.get("max_concurrency") or None  # 0: no limit
    workload["extra"] = tuple(workload.pop("bench_arg", ()))
    budget = Budget(trials=trials, seconds=time_budget, repeats=repeats, max_repeats=max_repeats)
    if run_dir is not None:
        from observe.tune import managed

        doc = managed.ask(run_dir, objective=objective, budget=budget, workload=Workload(**workload),
                          settings=settings, notify=notify)  # fmt: skip
        return json.dumps(doc, indent=2, default=str) if fmt == "json" else report.to_text(doc)
    _, doc = tune(
        argv,
        out,
        workload=Workload(**workload),
        settings=settings,
        objective=objective,
        budget=budget,
        notify=notify,
        echo=echo,
    )
    return json.dumps(doc, indent=2, default=str) if fmt == "json" else report.to_text(doc)
