"""The vLLM instance observe manages: its exact flags, launching it, applying a change, rolling back.

Advice about flags is only useful when it names flags and values the installed vLLM accepts, and
when applying it is safe. So this package

- parses a launch command (`vllm serve MODEL [FLAGS]` or `python -m
  vllm.entrypoints.openai.api_server --model M [FLAGS]`) into a `LaunchSpec` (`spec`), using the
  installed vLLM's own argument parser, asked in vLLM's interpreter (`probe`, `flags`), to know
  which flags take values, else a plain tokenizer;
- checks each recommended flag and value with that same parser (`checked_recommendations`) and
  rewrites the command with the accepted ones (`apply`), keeping everything else as it was;
- runs vLLM as a child process (`launcher`): its output goes to a rotating log file and to the
  terminal, /metrics is saved to snapshots beside the log, a restart whose new command fails
  starts the previous one again, and every start, change, failure and rollback is a line in a
  JSON-lines history file. A vLLM that fails to start is reported with the cause read from its
  log (`failure`). Nothing is applied without the caller asking for it;
- turns a diagnosis into checked flag changes and the new command (`propose`), for the launch it
  supervises or for a running vLLM it did not launch (`observe recommend`);
- compares two launches and supervises a running one (`compare`); `observe run`'s whole session
  (the command read, a sidecar per launch, start, supervise, stop) is `session`.

Nothing here prints: the terminal stream is passed in by the CLI.
"""

from observe.flags.installed import VllmFlags, installed_flags
from observe.manage.apply import apply, checked_recommendations, flag_diff
from observe.manage.compare import compare_runs, diagnosis_summary, run_summary, supervise
from observe.manage.failure import failure_cause
from observe.manage.launcher import (
    Launcher,
    LaunchError,
    RolledBack,
    RotatingTee,
    check_port,
    read_history,
    read_log,
    record,
    save_metrics,
)
from observe.manage.propose import Proposal, propose, propose_for_url
from observe.manage.session import launch_spec, run_session, sidecar_factory
from observe.manage.spec import LaunchSpec, parse_command
from observe.model import Recommendation

__all__ = [
    "LaunchError",
    "LaunchSpec",
    "Launcher",
    "Proposal",
    "Recommendation",
    "RolledBack",
    "RotatingTee",
    "VllmFlags",
    "apply",
    "check_port",
    "checked_recommendations",
    "compare_runs",
    "diagnosis_summary",
    "failure_cause",
    "flag_diff",
    "installed_flags",
    "launch_spec",
    "parse_command",
    "propose",
    "propose_for_url",
    "read_history",
    "read_log",
    "record",
    "run_session",
    "run_summary",
    "save_metrics",
    "sidecar_factory",
    "supervise",
]
