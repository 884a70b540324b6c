"""A cut traceback through the interpreter's launch frame: the main module raised an exception nothing caught.
The ``vllm`` command's console script (``bin/vllm``, ``in <module>``) is the same top of ``vllm serve``'s stack, and
lm-evaluation-harness's (``bin/lm_eval`` / ``bin/lm-eval``) the top of an evaluation running a vLLM model in-process.

``python -m vllm.entrypoints.openai.api_server`` (and any ``python -m`` launch of a vLLM server) runs the module
under ``runpy._run_module_as_main``; Python prints that frame ("File ".../runpy.py", line N, in
_run_module_as_main", "<frozen runpy>" from 3.11) only for an exception that reached the top of the main module:
the process exits. A paste cut right under it (the server's own frames and the exception line gone) still says
the launch died; where (start-up or serving) the excerpt does not tell, so the phase is "unknown", as for the
frames at the top of the API server's stack (``frames._server_top``). Pure: a frame line in, a Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

#: runpy's frame of ``python -m``: "/usr/lib/python3.10/runpy.py" or "<frozen runpy>" (Python 3.11+)
_MAIN_RE = re.compile(
    r'File "(?:[^"]*/runpy\.py|<frozen runpy>)", line \d+, in _run_module_as_main\b', re.ASCII
)
_CAUSE = (
    "the main module (python -m …) raised an exception nothing caught: the process exits (the traceback is cut "
    "under the interpreter's launch frame, the exception line with it)"
)


#: the ``vllm`` command's console script (setuptools' or pip's wrapper in the environment's bin/: "sys.exit(main())",
#: older "sys.exit(load_entry_point('vllm', 'console_scripts', 'vllm')())"): its module frame is the top of the
#: ``vllm serve`` process's stack, printed only for an exception nothing caught
_SCRIPT_RE = re.compile(r'File "[^"]*/bin/vllm", line \d+, in <module>', re.ASCII)
_SCRIPT_CAUSE = (
    "the vllm command (its console script) raised an exception nothing caught: the process exits (the traceback is "
    "cut under the script's frame, the exception line with it)"
)

#: lm-evaluation-harness's console scripts (its pyproject's ``lm_eval`` and ``lm-eval`` = ``lm_eval.__main__:
#: cli_evaluate``; the wrapper's "sys.exit(cli_evaluate())"): the module frame is the top of the evaluation's stack
#: (``cli_evaluate`` → ``simple_evaluate`` → ``evaluate``, the ``vllm`` model's requests run inside it), printed only
#: for an exception nothing caught — the evaluation command, and the vLLM engine it holds, exit
_LM_EVAL_RE = re.compile(r'File "[^"]*/bin/lm[-_]eval", line \d+, in <module>', re.ASCII)
_LM_EVAL_CAUSE = (
    "lm-evaluation-harness (the evaluation running the vLLM model in its process) raised an exception nothing caught: "
    "the command exits (the traceback is cut under its console script's frame, the exception line with it)"
)
#: any other program's console script (a wrapper in an environment's bin/, "sys.exit(main())": PaddleOCR's
#: ``paddleocr``, LLaMA-Factory's ``llamafactory-cli``, TRL's ``trl``), its ``<module>`` frame under a traceback's
#: header: the bottom of the main thread's stack, so the outermost frame of any traceback holding it, printed by
#: Python's excepthook for an exception that left the main module (the wrapper catches nothing, and a caught
#: exception's traceback starts at the frame that caught it, never above; faulthandler's dump writes no comma before
#: "in", logging's stack_info heads its stack "Stack (most recent call last)") — the process exits.
#: Read only once vLLM's own lines came in the same stream (``RunState.vllm_seen``: the program had imported vLLM and
#: loads its engine in that process; a client or a host with no line of vLLM's says nothing of vLLM). No serving line
#: before it: the start-up ("startup", the exception cut); else unknown (a host's own code may raise after serving)
_HOST_SCRIPT_RE = re.compile(r'File "[^"]*/bin/(?P<prog>[\w.-]+)", line \d+, in <module>', re.ASCII)
_HOST_CAUSE = (
    "the program that loaded vLLM ({prog}, its console script the traceback's outermost frame) raised an exception "
    "nothing caught: the process exits (the traceback is cut under the script's frame, the exception line with it)"
)
#: verl's PPO driver (``verl/trainer/main_ppo.py``, TinyZero's and other forks' too): Hydra's ``@hydra.main`` runs
#: ``main``, which only waits on the run's Ray task (``ray.get(main_task.remote(config))``: the trainer, its vLLM
#: rollout workers inside it); Hydra prints the traceback of what ``main`` raised from that frame down (its own frames
#: stripped) and exits 1, so ``main`` is the outermost frame of the driver's traceback — the run ended. Read, as the
#: host scripts above, only under the traceback's header once vLLM's lines came in the same stream; where (the rollout,
#: the actor's update) the cut traceback does not say: "unknown" before a serving line, never the start-up
_VERL_DRIVER_RE = re.compile(r'File "[^"]*/verl/trainer/main_ppo\.py", line \d+, in main$', re.ASCII)
_VERL_CAUSE = (
    "verl's PPO driver raised out of main (ray.get on the run's main_task: the trainer and its vLLM rollout inside "
    "it): Hydra prints the traceback and the run exits (the task's own exception, below it, is cut off)"
)
#: a script's own module frame ('File "/home/code/run.py", line 3, in <module>', "<stdin>", "<string>") under a
#: traceback's header while vLLM's start-up is between loading the weights and sizing the KV cache
#: (``RunState.loading``: "Starting to load model" / "Loading model weights took" / "Model loading took" the last step
#: read, no KV-cache size line since, nothing served). The engine's constructor, called from the script, loads the
#: weights, profiles and sizes the cache in one call and the script prints nothing in between: a traceback then, its
#: outermost frame the script's module, is that call raising — a failed start, the exception line cut (a Ctrl-C's
#: KeyboardInterrupt, when its line comes, closes the traceback as a stop)
_MODULE_RE = re.compile(r'^File "[^"]+", line \d+, in <module>$', re.ASCII)
_LOADING_CAUSE = (
    "a traceback opened while vLLM's start-up was between loading the weights and sizing the KV cache, its outermost "
    "frame the script's own module (the call that builds the engine): the start-up raised (the exception line is cut "
    "off)"
)
#: what a line must hold for ``died`` to read it beyond vLLM's own literals (``frames.LITERALS``)
LITERALS: tuple[str, ...] = ('/bin/lm_eval"', '/bin/lm-eval"', "in <module>", '/verl/trainer/main_ppo.py"')


def died(text: str, run: RunState, headed: bool = False) -> Failure | None:
    """The launch's death a runpy ``_run_module_as_main`` frame, the ``vllm`` console script's frame or lm-eval's
    tells, or another program's console script's frame under a traceback's header (headed: that process's header was
    read) once vLLM's lines were read (None after a requested stop)."""
    if run.requested:
        return None
    phase = "unknown"
    if _MAIN_RE.search(text) is not None:
        frame, cause = "_run_module_as_main", _CAUSE
    elif _SCRIPT_RE.search(text) is not None:
        frame, cause = "main", _SCRIPT_CAUSE
    elif _LM_EVAL_RE.search(text) is not None:
        frame, cause = "cli_evaluate", _LM_EVAL_CAUSE
    elif headed and run.vllm_seen and (h := _HOST_SCRIPT_RE.search(text)) is not None:
        frame, cause = f"{h['prog']}.<module>", _HOST_CAUSE.format(prog=h["prog"])
        phase = "unknown" if run.stats_seen else "startup"
    elif headed and run.vllm_seen and _VERL_DRIVER_RE.search(text) is not None:
        frame, cause = "main_ppo.main", _VERL_CAUSE
    elif (
        headed and run.loading and run.vllm_seen and not run.stats_seen and _MODULE_RE.match(text) is not None
    ):
        frame, cause, phase = "<module>", _LOADING_CAUSE, "startup"
    else:
        return None
    d = {"text": text[:300], "phase": phase, "frame": frame, "cut": True, "cause": cause}
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", frame))
