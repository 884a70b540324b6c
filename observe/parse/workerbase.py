"""A line of vLLM's worker wrapper's ERROR record whose words are cut: a worker's method raised.

vLLM's worker wrapper (``WorkerWrapperBase.execute_method``: ``vllm/worker/worker_base.py`` 0.4 → 0.11,
``vllm/v1/worker/worker_base.py`` since) runs each method the executor asks of a worker (Ray's ``RayWorkerWrapper``,
V0's ``VllmWorkerProcess``, the driver itself) and, when it raises, logs ``logger.exception("Error executing method
'<name>'. This might cause deadlock in distributed execution.")`` and re-raises. That call is the file's only record
at ERROR (read in the 0.5.5, 0.6.3, 0.7.3, 0.8.2, 0.8.4, 0.9.2, 0.10.1 and 0.11.0 wheels and the 2026 source; its
other records are INFO / WARNING). vLLM's formatter (``logging_utils/formatter.py`` NewLineFormatter) puts the
record's prefix on every line of the message and its traceback, so the blank lines of the traceback (between the
chained exceptions) are prefix and nothing else. Such a line at a new ERROR site of worker_base.py, the record's
words and exception cut away, is still a worker's method that raised: the executor's call failed with it. Its phase
is the run's (a stats line before it: serving; the start-up's load lines: loading). The words themselves ("Error
executing method …") are read by ``failures``' worker-method row; a line with words no row reads is the catch-all's
as before. Pure: the record's envelope and the run in, a Failure or None out.
"""

from __future__ import annotations

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState, phase

#: the processes that run the wrapper's execute_method and print its record under their prefix (Ray's actor, V0's
#: multiprocessing worker); None: the driver's own or a prefix the paste lost
_WORKERS = ("RayWorkerWrapper", "VllmWorkerProcess")
_TEXT = (
    "an ERROR record of vLLM's worker wrapper (worker_base.py execute_method: 'Error executing method …', logged "
    "when a worker's method raised, then re-raised), its words cut: a worker's method failed"
)


def _wrapper_site(ctx: Ctx) -> bool:
    """Whether the record is worker_base.py's (any path to it), logged by a worker process or with no prefix."""
    name = (ctx.logger_file or "").rsplit("/", 1)[-1]
    return name == "worker_base.py" and (ctx.process is None or ctx.process.startswith(_WORKERS))


def method_failed(msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """A worker's failed method, when msg is an empty line of worker_base.py's ERROR record (its prefix only);
    after a requested stop: none (the executor's calls fail as it tears the workers down)."""
    if msg.strip() or ctx.level != "ERROR" or run.requested or not _wrapper_site(ctx):
        return None
    d = {"text": _TEXT, "phase": phase(run), "worker_method": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("errline", "worker_base", ctx.pid))
