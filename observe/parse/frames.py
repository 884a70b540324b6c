"""A traceback cut at both ends: worker ERROR records that are only frames, no header, no exception.

A paste often starts inside a worker's traceback (the ``Traceback (most recent call last)`` header
above it left out) and stops before its exception line. Its frames still name where the engine was
when it raised: a function of vLLM's start-up on the stack is the phase. Each such frame of an ERROR
record read without its header is an ``error_line`` (``frame``: the function, ``cut``: True) — the
catch-all reports the failure with the phase from the innermost one, and says the cause is cut off.
The same holds for the raw lines a V1 worker or engine core prints its traceback on (a process or
rank prefix, no level). A traceback whose header was read gives no such event (its exception line
tells). Frames of request handling (tokenizing, validating a request's input) name no start-up
function: nothing is reported — unless a worker's own exception handler logged them (``WORKER_LOGGERS``):
then every frame is a worker's failed method.

Besides the start-up functions, two places of vLLM's source tell by their file: a layer's or model's
``__init__`` under ``vllm/model_executor/{layers,models}/`` runs only while the model is built
(``initialize_model`` in 0.32's ``model_loader/utils.py``, ``_initialize_model`` in V0's loader → the
model class → its layers, whose ``__init__`` create the weights), and a model's ``forward`` raises either
in the start-up's dummy runs or while serving (the run's state decides which). And AsyncLLM's
``output_handler`` runs only once the engine core passed its start-up handshake (the client waits for
the cores' ready message first: ``MPClient._wait_for_engine_startup`` in 2025's ``core_client.py``,
``wait_for_engine_startup`` in 0.32's ``v1/engine/utils.py``): its frames are a death after start-up.
So is the offline LLM's generate loop (``_run_engine``: ``entrypoints/llm.py`` 0.2 → 0.11,
``entrypoints/common/offline.py`` 0.32), which runs only once the LLM's engine is built: a failure
under it is while generating; and V0's AsyncLLMEngine background loop (``run_engine_loop`` →
``engine_step``, ``engine/async_llm_engine.py`` 0.2 → 0.10), started by ``start_background_loop`` on an
engine already built: a failure under it is while serving. Two source lines of V1's client raise only once the engine core died
after its start-up (``DEAD_RAISES``): a traceback cut right after one is that death.

A traceback printed bare (no prefix: Python's own print of an uncaught exception, or under a
wrapper's logger) is read the same way, and it is vLLM's when its frames are in vLLM's own package
(``vllm_frame``); a bare exception line alone is anybody's.

Pure: a message in, a Failure or None out (``RawTracebacks`` keeps what one stream's raw lines told).
"""

from __future__ import annotations

import re
from typing import Any

from observe.failures.kinds import FailureKind
from observe.model import EngineError, LogEvent
from observe.parse import (
    accel,
    compiled,
    euroeval,
    hosted,
    ipython,
    loopexit,
    mainexit,
    native,
    nccl,
    nemorl,
    rayhang,
    raytold,
    startonly,
    triton,
    vllmcli,
)
from observe.parse.corestep import frame as core_step
from observe.parse.failtypes import Failure, RunState, serving_or
from observe.parse.failures import bf16_refusal
from observe.parse.phaseframes import (
    CLIENT_START,
    KV_CHECK,
    MQ_BUILD_CALLS,
    PHASE_FRAMES,
    SERVING_FRAMES,
    SHARED_FRAMES,
)

#: V0's / V1's GPU dtype check (worker.py and v1/worker/gpu_worker.py, 0.3 → 0.10; read in the 0.4.3 and 0.8.5
#: wheels): it raises only "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your G GPU
#: has compute capability X.Y." (parse.failures ``bf16-capability``), so a traceback cut at it is that refusal
DTYPE_CHECK = "_check_if_gpu_supports_dtype"
#: an executor's ``execute_model`` (V0 ``vllm/executor/``, V1 ``vllm/v1/executor/``): called only by the engine's
#: step (V0 ``LLMEngine.step`` / ``AsyncLLMEngine.step_async``; V1 ``EngineCore.step`` /
#: ``step_with_batch_queue``, 0.6.2, 0.10.2, 0.32) — the start-up's profiling and warm-up reach the workers
#: through ``determine_num_available_blocks`` / ``collective_rpc`` instead, and a model runner's or worker's
#: own ``execute_model`` (which V0's ``profile_run`` calls) is in another folder. ``collective_rpc`` and
#: ``get_response`` under it serve both, so they tell nothing by themselves.
_EXECUTOR_RUN_RE = re.compile(
    r'File "[^"]*/vllm/(?:v1/)?executor/\w+\.py", line \d+, in (execute_model(?:_async)?)\b', re.ASCII
)
#: a V0 model runner's own ``execute_model`` (``vllm/worker/*model_runner.py``, 0.4 → 0.10): every step's forward
#: pass and sampling, and also ``profile_run``'s dummy batch at start-up (0.4.3 model_runner.py:809), so by
#: itself it is a shared frame too: phase "unknown" unless another frame of the traceback names one
_RUNNER_RUN_RE = re.compile(
    r'File "[^"]*/vllm/worker/\w*model_runner\.py", line \d+, in (execute_model)\b', re.ASCII
)
#: vLLM's own entry point (the ``vllm`` console script: ``vllm/scripts.py`` 0.5.2 → 0.7, ``entrypoints/cli/main.py``
#: from 0.8): every exception that ends the server goes through it, so a traceback cut under it is the server
#: exiting on an exception it did not catch, at start-up or later (phase unknown)
_CLI_RE = re.compile(
    r'File "[^"]*/vllm/(?:scripts|entrypoints/cli/main)\.py", line \d+, in (main|serve)\b', re.ASCII
)
#: V0's AsyncLLMEngine.start_background_loop (engine/async_llm_engine.py 0.2 → 0.10): add_request calls it when the
#: loop is not running, and there it raises only ``AsyncEngineDeadError("Background loop has errored already.")``
#: (``if self.errored``; 0.4's and 0.6's async_llm_engine.py) — a traceback cut in it is a request meeting a dead engine
_RESTART_RE = re.compile(
    r'File "[^"]*/vllm/engine/async_llm_engine\.py", line \d+, in start_background_loop\b'
)
_LOOP_DEAD = (
    "AsyncLLMEngine's background loop had already died: start_background_loop() raises AsyncEngineDeadError "
    "when a request comes after it: its background loop has errored already (the cause is earlier)"
)
_FRAME_RE = re.compile(
    r"\b("
    + "|".join(map(re.escape, (*PHASE_FRAMES, *SERVING_FRAMES, *SHARED_FRAMES)))
    + r"|output_handler)\b",
    re.ASCII,
)
#: a frame in vLLM's model code: the module, and the function (a constructor, or the forward pass)
_MODEL_FRAME_RE = re.compile(
    r'File "[^"]*/vllm/model_executor/(?P<dir>layers|models)/(?:[\w/]+/)?(?P<mod>\w+)\.py", line \d+, '
    r"in (?P<func>__init__|forward)\b",
    re.ASCII,
)
#: V1's input batch, built only by the model runner while the worker is set up (0.32 gpu_model_runner.py: its
#: ``__init__`` and ``may_reinitialize_input_batch`` from ``initialize_kv_cache``; vllm-ascend's npu_input_batch.py
#: the same): a constructor of it on the stack is the start-up (its BlockTable's construction under it)
_BATCH_INIT_RE = re.compile(
    r'File "[^"]*/worker/(?:gpu_|npu_)?(input_batch)\.py", line \d+, in __init__\b', re.ASCII
)
#: what follows a frame's path: ``, line N, in func``, or a piece of it, the frame line ending there (a terminal or editor
#: hard-wrapped it after the path's closing quote: ``File "…/convert_frame.py", li`` / ``ne 715, in compile_inner``;
#: ``…/_utils_internal.py", line 95,`` / `` in wrapper_function``): the path still names the frame, the function is lost
_CUT_TAIL = r"(?:, line \d+,? in (?P<func>[\w<>]+)|,?(?: (?:l(?:i(?:n(?:e(?: \d*,?)?)?)?)?)?)?\s*$)"
#: a frame of torch.compile's own machinery (Dynamo, AOTAutograd, Inductor: ``torch/_dynamo``, ``torch/_functorch``,
#: ``torch/_inductor``): vLLM compiles its model while the engine starts (V1's ``@support_torch_compile`` traces in
#: the profile run's first forward and compiles there and in ``compile_or_warm_up_model``, 0.7 → 0.32; its guards are
#: dropped, so nothing recompiles while serving), so in one of vLLM's ERROR records such a frame is the start-up
_COMPILE_FRAME_RE = re.compile(
    r'File "[^"]*/torch/_(?:dynamo|functorch|inductor)/[\w/]+?(?P<mod>\w+)\.py"' + _CUT_TAIL, re.ASCII
)
#: the model registry's record of a model class it could not import (model_executor/models/registry.py,
#: ``_try_load_model_cls`` / ``_try_inspect_model_cls``: ``logger.exception("Error in loading|inspecting model
#: architecture '%s'")``, 0.6 → 2026): a frame of a model module's import (``vllm/model_executor/models/<mod>.py``,
#: ``in <module>``; ``importlib.import_module`` in ``load_model_cls``) under it is the model's class failing to
#: import. The registry then has no class for the architecture and raises ("Model architectures [...] failed to be
#: inspected", ``_raise_for_unsupported``) while the model's config is built: a failed start. Either separator
#: (a Windows build prints backslashes)
REGISTRY_LOGGER = "registry.py"
_MODEL_IMPORT_RE = re.compile(
    r'File "[^"]*[/\\]vllm[/\\]model_executor[/\\]models[/\\](?P<mod>\w+)\.py", line \d+, in <module>',
    re.ASCII,
)
#: a training or serving framework's own class wrapping a vLLM engine, constructed on a traceback's source line
#: (ms-swift's ``VllmEngine`` / ``GRPOVllmEngine``, LLaMA-Factory's ``VllmEngine``, SkyRL's
#: ``AsyncVLLMInferenceEngine``): cut right under it, the traceback is cut inside the engine's construction
ENGINE_WRAPPERS = ("VllmEngine(", "VLLMEngine(", "vLLMEngine(", "VLLMInferenceEngine(")
#: starlette's disconnect listener, as its frame ('in listen_for_disconnect') or the source line of
#: StreamingResponse.__call__ that awaits it ('await wrap(partial(self.listen_for_disconnect, receive))') names it: a
#: traceback through it is the listener's, cancelled or told the client left (``unread``: a stop)
DISCONNECT_LISTENER = "listen_for_disconnect"
#: a traceback's exception line that is a stop, not a failure (Ctrl-C, sys.exit)
STOPS = ("KeyboardInterrupt", "SystemExit")
#: what a frame the parser reads, the header that makes its traceback whole, or the stop that ends it holds
#: (``triggers.TRIGGERS``: a message without any of them is skipped)
LITERALS: tuple[str, ...] = (
    *STOPS,
    *PHASE_FRAMES,
    *SERVING_FRAMES,
    *SHARED_FRAMES,
    "output_handler",
    DTYPE_CHECK,
    "/vllm/",
    '"vllm/',
    *ENGINE_WRAPPERS,
    "input_batch.py",
    "Traceback (most recent",
    *nccl.LITERALS,
    *raytold.LITERALS,
    *rayhang.LITERALS,
    *nemorl.LITERALS,
    *triton.LITERALS,
    *hosted.LITERALS,
    *accel.LITERALS,
    *native.LITERALS,
    *mainexit.LITERALS,
    *loopexit.LITERALS,
    *vllmcli.LITERALS,
    *euroeval.LITERALS,
    DISCONNECT_LISTENER,
    "asyncio/runners.py",
    "uvloop/__init__.py",
    *ipython.LITERALS,
)
#: V1 client source lines that raise only once the engine core died after its start-up (the client exists
#: once the core's handshake is done), by the function they are in (``v1/engine/``, 0.8.5 and 0.32):
#: ``AsyncLLM.add_request`` when the output handler found the engine dead (``if self.errored: raise
#: EngineDeadError()``), the core client's ``ensure_alive`` / ``validate_alive`` (``engine_dead`` set), and its
#: ``get_output`` / ``get_output_async`` re-raising what the output queue carried (``_format_exception``:
#: EngineDeadError once the core is dead, else the output path's own exception)
DEAD_RAISES: dict[str, tuple[str, ...]] = {
    "raise EngineDeadError()": ("add_request", "ensure_alive", "validate_alive"),
    "raise self._format_exception(outputs) from None": ("get_output", "get_output_async"),
}
#: vLLM's own top-level packages and modules (of 0.8.5's wheel and 0.32; V0's engine, worker, executor,
#: core; ``_ipex_ops``, the Intel Extension for PyTorch ops vLLM calls on CPU / XPU in place of ``_custom_ops``,
#: 0.5 →): a frame under one is vLLM's code, a frame under any other ``…/vllm/`` folder (a user's folder named vllm)
#: is not
_VLLM_TOP = (
    "v1 entrypoints engine model_executor worker executor distributed core attention lora multimodal "
    "transformers_utils inputs platforms compilation spec_decode device_allocator usage utils config envs "
    "sequence sampling_params outputs logger _custom_ops _ipex_ops forward_context plugins profiler models "
    "renderers tokenizers reasoning tool_parsers logging_utils tracing triton_utils kernels scripts"
).split()
#: vLLM's hardware platform plugins (the packages its ``vllm.platform_plugins`` entry point loads: vLLM Ascend, Gaudi,
#: Spyre, RBLN, Kunlun, Neuron, Metal, TPU's tpu_inference / tpu_commons): their workers, model runners and models
#: run inside vLLM's engine core in place of vLLM's own, so a frame under one is the engine's code too
_PLUGINS = (
    "vllm_ascend vllm_gaudi vllm_spyre vllm_rbln vllm_kunlun vllm_neuron vllm_metal tpu_inference tpu_commons"
)
#: (a path may be relative to the folder holding the package, ``File "vllm/utils.py"``, as a source checkout's run
#: prints it)
_VLLM_PATH = (
    r'(?:[^"]*/)?(?:vllm/(?:'
    + "|".join(_VLLM_TOP)
    + r")(?:/[\w/]+)?|(?:"
    + "|".join(_PLUGINS.split())
    + r")/[\w/]+)\.py"
)
_VLLM_FRAME_RE = re.compile(rf'File "(?P<path>{_VLLM_PATH})", line \d+,? in (?P<func>[\w<>]+)', re.ASCII)
#: the loggers of a worker's own exception handler: V0's ``_run_worker_process`` (``logger.exception(
#: "Exception in worker %s while processing method %s.")``, multiproc_worker_utils.py 0.5 → 0.10) and V1's
#: ``WorkerProc`` (``"WorkerProc hit an exception."`` / ``"WorkerProc failed."``, multiproc_executor.py
#: 0.8 →): every frame they log is a worker's failed method, whatever function it is in
WORKER_LOGGERS = ("multiproc_worker_utils.py", "multiproc_executor.py")
_ANY_FRAME_RE = re.compile(r'File "[^"]*?(?P<mod>\w+)?(?:\.py)?"' + _CUT_TAIL, re.ASCII)
_DEAD_AFTER_START = (
    "the engine core died after start-up: AsyncLLM's output handler raised (the cause is cut off)"
)
_DEAD_RAISED = {
    "raise EngineDeadError()": "the engine core had died after start-up: {f}() raised EngineDeadError "
    "(the cause is in the engine core's own traceback, earlier)",
    "raise self._format_exception(outputs) from None": "the engine core died while generating: the core "
    "client's {f}() raised what its output queue carried (EngineDeadError once the core is dead; the "
    "exception line is cut off)",
}
#: the lines of a Python traceback that belong to it besides its frames (a bare line of none of these
#: shapes, unindented, is its exception line or the end of it)
_TB_PIECES = ("Traceback (most recent", "The above exception", "During handling")
#: MPClient.__init__'s call into the engines' launch (``with launch_core_engines(``, core_client.py 0.10 → 0.32):
#: under a vLLM frame, a traceback cut at that source line is cut inside the start-up; so is one cut at the OpenAI
#: server's ``async with build_async_engine_client(`` (run_server 0.5 → 0.9, run_server_worker 0.9 → 0.10: it serves in
#: the body, so a raise at that line is the client's build; CLIENT_START's guard: not after a stop or serving)
_LAUNCH_CALLS = ("with launch_core_engines(", "async with build_async_engine_client(")
#: a caller's source line building V1's AsyncLLM (PHASE_FRAMES): cut right under it, the traceback is cut inside
#: vLLM's start-up, whoever's frame holds the call (verl's rollout server); the engine core process building its
#: EngineCoreProc (or DPEngineCoreProc) in run_engine_core: a traceback through it is inside the core's start-up; so
#: is V0's run_mp_engine building its MQLLMEngine (``MQ_BUILD_CALLS``), printed bare by the dying process, no record
_BUILD_CALLS = ("AsyncLLM.from_vllm_config(", "EngineCoreProc(*args", *MQ_BUILD_CALLS)
_WRAPPER_BUILD_RE = re.compile(r"\b(\w*(?:" + "|".join(w[:-1] for w in ENGINE_WRAPPERS) + r"))\(", re.ASCII)


def vllm_frame(msg: str) -> re.Match[str] | None:
    """A traceback frame in vLLM's own package (its path and function), if msg is one (as Python or as IPython
    prints it: ``ipython``)."""
    return _VLLM_FRAME_RE.search(msg) if 'File "' in msg else ipython.frame_match(msg.strip())


#: exception texts only vLLM raises: ModelRegistry's refusal of a model class (model_executor/models/registry.py,
#: read in 0.6.3's wheel and 0.32: "Model architectures [...] are not supported for now. Supported architectures: …");
#: the GGUF loader's refusal of a file whose tensors it cannot name (model_executor/model_loader,
#: _get_gguf_weights_map: "Failed to map GGUF parameters (N): [...]", a paste may lower its first letter)
VLLM_RAISES = ("are not supported for now. Supported architectures", "map GGUF parameters (")


def anybodys(events: list[LogEvent]) -> bool:
    """Whether what a bare line told is only an exception line, a native crash (``native``) or Ray's workers hanging at
    their start (``rayhang``), which any Python program prints (not one of vLLM's own refusals, ``VLLM_RAISES``)."""
    return all(
        isinstance(e, EngineError)
        and (e.kind == FailureKind.EXCEPTION or e.details.get("form") in (native.FORM, rayhang.FORM))
        and not any(lit in e.message for lit in VLLM_RAISES)
        for e in events
    )


def raised_dead(text: str, frame: tuple[str, str] | None, run: RunState) -> Failure | None:
    """The engine's death after start-up, when text is one of ``DEAD_RAISES`` under a frame of vLLM's
    ``v1/engine/`` in a function that raises it (frame: the last frame's path and function)."""
    funcs = DEAD_RAISES.get(text)
    if funcs is None or frame is None or run.requested:
        return None
    path, func = frame
    if "/vllm/v1/engine/" not in path or func not in funcs:
        return None
    cause = _DEAD_RAISED[text].format(f=func)
    d = {"form": "engine_dead", "phase": "serving", "cause": cause, "frame": func, "from_source": True}
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed",))


def kv_check(msg: str) -> bool:
    """Whether msg is a frame of V0's KV-cache size check, or its call's source line (``KV_CHECK``)."""
    return KV_CHECK in msg and msg[:1].isspace() and _FRAME_RE.search(msg.strip()) is not None


def read_under_header(msg: str) -> bool:
    """Whether msg is a frame read even under its traceback's header: V0's KV-cache size check (``kv_check``),
    and the engine's loops, which tell a crash while serving from a failed start: V1's busy loop
    (``run_busy_loop``) under the "EngineCore hit an exception" that 0.8's ``run_engine_core`` logs for both, and
    V0's engine loop (``run_engine_loop`` → ``engine_step``: MQLLMEngine's and AsyncLLMEngine's, run only on an
    engine already built) under the exception line its record opened with (failing.served_record); and
    run_mp_engine's call building the MQLLMEngine (``MQ_BUILD_CALLS``), which its record of a failed build holds."""
    if kv_check(msg) or (msg[:1].isspace() and any(c in msg for c in MQ_BUILD_CALLS)):
        return True
    return msg[:1].isspace() and re.search(_LOOP_FRAME, msg) is not None


#: the engine loops' frames (SERVING_FRAMES): V1's busy loop, V0's engine loop
_LOOP_FRAME = r"\bin (?:run_busy_loop|_process_engine_step|run_engine_loop|engine_step)\b"


def cut_frame(msg: str, run: RunState, logger: str | None = None) -> Failure | None:
    """A frame (or the source line under it) of a headless traceback naming a start-up function, a
    model's constructor or forward pass, or AsyncLLM's output handler; or any frame a worker's exception
    handler logged (logger: the record's logger file, one of ``WORKER_LOGGERS``)."""
    text = msg.strip()
    if not text or not msg[:1].isspace():
        return None  # a frame line is indented; anything else is the record's own message
    if DTYPE_CHECK in text:
        return _dtype_check(text)
    if (s := startonly.frame(text, run) or core_step(text, run, logger)) is not None:
        return s
    found = list(_FRAME_RE.finditer(text))  # a shared frame's name only when the line names no other
    m = next((x for x in found if x.group(1) not in SHARED_FRAMES), found[0] if found else None)
    dead_loop = m is None and _RESTART_RE.search(text) is not None
    if (m is not None and m.group(1) == "output_handler") or dead_loop:
        if run.requested:
            return None  # the API server noticing the engine it was told to stop
        if dead_loop:
            return _died_serving("engine_dead", _LOOP_DEAD, "start_background_loop")
        return _died_serving("engine_dead", _DEAD_AFTER_START, "output_handler")
    if m is not None:
        func = m.group(1)
        phase = PHASE_FRAMES.get(func) or SERVING_FRAMES.get(func) or SHARED_FRAMES[func]
        if func in CLIENT_START and (run.requested or run.stats_seen):
            if run.requested:
                return None
            phase = "unknown"
    elif (mm := _MODEL_FRAME_RE.search(text)) is not None:
        func = f"{mm.group('mod')}.{mm.group('func')}"
        built = mm.group("func") == "__init__"  # a forward pass: the start-up's dummy runs, or serving
        phase = "loading_weights" if built else serving_or(run, "startup")
    elif (bm := _BATCH_INIT_RE.search(text)) is not None:
        func, phase = f"{bm.group(1)}.__init__", "startup"
    elif (em := _EXECUTOR_RUN_RE.search(text)) is not None:
        func, phase = em.group(1), "serving"
    elif (rm := _RUNNER_RUN_RE.search(text)) is not None:
        func, phase = rm.group(1), "unknown"
    elif (cm := _CLI_RE.search(text)) is not None and not run.requested:
        func, phase = cm.group(1), "unknown"
    elif logger is not None and (tm := _COMPILE_FRAME_RE.search(text)) is not None:
        # a vLLM record's frame in torch.compile: the start-up, unless the engine had served (a compiled graph's
        # kernel that fails while serving runs under torch/_inductor too)
        func, phase = (
            f"torch.compile:{tm.group('func') or tm.group('mod')}",
            serving_or(run, "startup"),
        )
    elif logger == REGISTRY_LOGGER and (im := _MODEL_IMPORT_RE.search(text)) is not None:
        func, phase = (
            f"{im.group('mod')}.<module>",
            "startup",
        )  # the model class's import: its config is built
    elif logger is not None and (sym := native.backtrace_frame(text)) is not None:
        func, phase = f"native:{sym}", serving_or(run, "unknown")
    elif logger in WORKER_LOGGERS and (wm := _ANY_FRAME_RE.match(text)) is not None:
        func, phase = wm.group("func") or wm.group("mod") or "?", serving_or(run, "startup")
    else:
        return None
    d: dict[str, Any] = {"text": text[:300], "phase": phase, "frame": func, "cut": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", func))


#: V0's client re-raising what the engine sent for a request (``MQLLMEngineClient._process_request``,
#: engine/multiprocessing/client.py 0.6 → 0.10). Its output loop puts one exception object in every request's
#: queue when the engine raised for a whole batch or died ("we broadcast the same exception for all requests",
#: ``run_output_handler_loop``), and a request's own error in that request's queue only: the same exception
#: re-raised in several streams grows one traceback, so its frames repeat inside one record.
_V0_RERAISE = "raise request_output"
_V0_BROADCAST = (
    "V0's engine raised for a whole batch or died while serving: one exception reached several requests "
    "(MQLLMEngineClient re-raised it in each stream; the exception line is cut off)"
)
#: the frames at the top of the API server process's stack (``vllm serve``: the CLI's ``main`` → ``cmd`` →
#: ``uvloop.run`` / ``asyncio.run`` → ``run_server``, 0.8 → 0.32): printed raw under its "(APIServer pid=N)"
#: prefix, they are Python's print of an exception nothing caught — the server exits
_SERVER_TOP_RE = re.compile(
    r'File "[^"]*/(?:asyncio/runners\.py|uvloop/__init__\.py|vllm/entrypoints/cli/(?:main|serve)\.py|'
    r'vllm/entrypoints/openai/api_server\.py)", line \d+, in (?P<func>\w+)',
    re.ASCII,
)


def _server_top(text: str, ctx: Any) -> Failure | None:
    """A frame at the top of the API server's stack printed raw under its prefix: the server's uncaught
    exception, where it was and why cut off (phase "unknown": start-up and serving both run there)."""
    m = _SERVER_TOP_RE.search(text)
    if m is None or getattr(ctx, "process", None) != "APIServer":
        return None
    d = {
        "text": text[:300],
        "phase": "unknown",
        "frame": m.group("func"),
        "cut": True,
        "cause": "the API server's main raised an exception nothing caught: the server exits (the exception "
        "line is cut off)",
    }
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", m.group("func")))


def _died_serving(form: str, cause: str, frame: str) -> Failure:
    """The engine's death after its start-up, as a frame of the traceback tells it."""
    d = {"form": form, "phase": "serving", "cause": cause, "frame": frame}
    return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed",))


def _wrapper_build(text: str) -> Failure | None:
    """A traceback's source line constructing a framework's vLLM engine wrapper (``ENGINE_WRAPPERS``): the engine's
    construction, cut before its own frames — a start-up."""
    w = _WRAPPER_BUILD_RE.search(text)
    if w is None:
        return None
    d = {"text": text[:300], "phase": "startup", "frame": w.group(1), "cut": True, "before_serving": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", w.group(1)))


def _dtype_check(text: str) -> Failure:
    """A frame of (or the call to) vLLM's dtype check: its one refusal, the GPU's own capability cut off."""
    return bf16_refusal(
        f"the traceback is cut inside vLLM's {DTYPE_CHECK}(), which raises only its bfloat16 refusal: Bfloat16 is "
        "only supported on GPUs with compute capability of at least 8.0 (the GPU's own capability is cut off)",
        None,
        cut=True,
        frame=DTYPE_CHECK,
    )


Who = tuple[int | None, int | None]  # a raw line's process: its pid and rank (none of either: a bare line)


class RawTracebacks:
    """The tracebacks a worker or engine core prints raw (its process or rank prefix, no level), or that
    are printed bare (who: no pid, no rank), per process: a frame is read like an ERROR record's when
    that process's header was not seen; under a header it is held until the traceback's exception line
    (told: a rule read the line) makes it moot, and told at the end of the stream when none came (a paste
    cut before it). ``vllm_seen``: a frame in vLLM's own package was read; ``started``: a line that only a
    started engine raises (``DEAD_RAISES``) was read, so the EngineDeadError under it is a death after start-up."""

    def __init__(self) -> None:
        self._headed: set[Who] = set()
        self._open: dict[Who, tuple[Failure, str, Any]] = {}
        self._frame: dict[Who, tuple[str, str]] = {}  # last frame: path, function
        self._reraised: dict[tuple[Any, ...], int] = {}  # V0's request re-raises, per ERROR record site
        self._ray: dict[Who, tuple[Failure, str, Any]] = {}  # Ray's word of a failure, until a vLLM frame
        self._host: set[Who] = set()  # a frame of a framework's vLLM host was read in the current traceback
        self._stop: set[Who] = set()  # the current traceback left the event loop's run_forever (``loopexit``)
        self.vllm_seen = self.started = False
        # a Jupyter / IPython traceback's header, until a vLLM frame tells
        self._nb = ipython.Notebook()
        self._nb_line: tuple[str, Any] | None = None  # the cell's raising line calling LLM(…): line, ctx

    def record_frame(self, msg: str, run: RunState, ctx: Any) -> Failure | None:
        """``cut_frame`` for a line of an ERROR record; and V0's request re-raise (``_V0_RERAISE``) met twice in
        one record (same process and logger call site): one exception object raised through several
        requests' streams, which V0's client does only for a batch's or a dead engine's exception."""
        f = cut_frame(msg, run, ctx.logger_file)
        if f is not None or msg.strip() != _V0_RERAISE or run.requested:
            return f
        site = (ctx.pid, ctx.logger_file, ctx.logger_line)
        self._reraised[site] = n = self._reraised.get(site, 0) + 1
        if n != 2:
            return None
        return _died_serving("engine_errored", _V0_BROADCAST, "_process_request")

    def line(self, msg: str, who: Who, told: bool, run: RunState, ctx: Any) -> Failure | None:
        """The failure a raw line tells now, if any (who: its pid and rank; ctx: kept for a held frame)."""
        nb = self._ipython(msg, who, told, ctx)
        if nb is not False:
            return None
        msg = ipython.frame(msg.strip()) or msg
        if told or "Traceback (most recent" in msg:
            # Ray's ActorDiedError ending a traceback through a vLLM host's frame: the host's actor died
            died = raytold.actor_died(msg.strip(), run) if who in self._host else None
            self._host.discard(who)
            self._stop.discard(who)
            self._nb.header(msg.strip())
            self._open.pop(who, None)
            if told:
                self._ray.pop(who, None)
            self._frame.pop(who, None)
            if not told:
                self._headed.add(who)
            return died
        text = msg.strip()
        if not text.startswith('File "'):  # a source or exception line (a process prefix took the indent)
            if (held := self._ray.get(who)) is not None and raytold.rollout_call(held[0], text):
                del self._ray[who]  # verl's trainer calling its vLLM rollout under Ray's word of a death
                return self._tell(*held[:1], who, *held[1:])
            f = raised_dead(text, self._frame.get(who), run)
            self.started = self.started or f is not None
            if f is None and (f := self._nb.frame(text, run)) is not None:
                self.vllm_seen = True  # a frame of vLLM's own package, as IPython prints it
            if self._nb_line is None and ipython.entry_line(text):
                self._nb_line = (msg, ctx)  # a notebook cell's line that raised, calling LLM(…)
            f = f or nccl.watchdog(text, run)
            if f is None and (any(c in text for c in _BUILD_CALLS) or startonly.startup_rpc(text)):
                f = cut_frame("  " + text, run)  # the engine's construction, cut before vLLM's own frames
            if f is None and not run.requested:
                f = _wrapper_build(text)  # a framework's engine wrapper built, cut as above
            if f is None and self._frame.get(who) is not None and text.startswith(_LAUNCH_CALLS):
                f = cut_frame("  " + text, run)  # MPClient's call into the launch, cut before its own frame
            if f is None and (r := raytold.death(text, run)) is not None:
                if r[1]:  # anybody's actor: it tells once a frame of vLLM's code follows
                    self._ray[who] = (r[0], msg, ctx)
                    return None
                f = r[0]
            prefixed = who != (None, None)
            f = (
                f
                or triton.death(text, run)
                or hosted.death(text, run, prefixed)
                or accel.death(text, run, prefixed)
                or vllmcli.death(text, run)
                or euroeval.death(text, run)
            )
            if f is None and prefixed:
                f = native.ucx_frame(text, run)  # UCX's backtrace: printed only as that process dies
            if f is None and (f := native.crash(text, run)) is not None:
                # its stack follows, most recent call first: a phase its frames tell wins over it
                self._headed.add(who)
            if text.startswith(STOPS):
                self._open.pop(who, None)  # the traceback of a stop (Ctrl-C, sys.exit): no failure
            bare_end = (
                msg[:1] not in " \t"
                and not text.startswith(_TB_PIECES)
                and not ipython.piece(text)
                and not native.piece(text)
            )
            if f is None and who == (None, None) and bare_end:
                self._open.pop(who, None)  # a bare traceback's end: its exception line no rule read
            return self._tell(f, who, msg, ctx)
        if raytold.host_frame(text):
            self._host.add(who)
        if loopexit.escaped(text):
            self._stop.add(who)  # a stop left the loop: what its traceback held tells no failure
            self._open.pop(who, None)
        if (v := vllm_frame(text)) is not None:
            self.vllm_seen = True
            if (held := self._ray.pop(who, None)) is not None:
                self._headed.add(who)
                self._tell(held[0], who, held[1], held[2])
            self._frame[who] = (v.group("path"), v.group("func"))
        else:
            self._frame.pop(who, None)
        f = (
            cut_frame("  " + text, run)
            or _server_top(text, ctx)
            or mainexit.died(text, run, who in self._headed)
        )
        f = f or compiled.forward(text, run, getattr(ctx, "process", None)) or nemorl.weight_sync(text, run)
        if f is None and (h := hosted.frame(text, run)) is not None:
            return h  # a host's start-up frame tells now: the exception line under it is anybody's
        return self._tell(f, who, msg, ctx)

    def _ipython(self, msg: str, who: Who, told: bool, ctx: Any) -> bool:
        """IPython's traceback (``parse.ipython``): its header's out-of-memory held until the exception line
        (or the end of the stream), with the phase its frames name; False when msg is none of it."""
        text = msg.strip()
        if not told and (f := ipython.header(text)) is not None:
            self._headed.add(who)
            self._open[who] = (f, msg, ctx)
            return True
        held = self._open.get(who)
        if told or held is None or not held[0].details.get("notebook"):
            return False
        if (f := ipython.oom_frame(held[0], text)) is not None:
            self._open[who] = (f, held[1], held[2])
            return True
        return ipython.piece(msg)

    def _tell(self, f: Failure | None, who: Who, msg: str, ctx: Any) -> Failure | None:
        """f now; or, under a header, nothing now: kept until its exception line or the end of the stream."""
        if f is None or who in self._stop:
            return None
        if who not in self._headed:
            return f
        self._open[who] = (Failure(f.kind, {**f.details, "headed": True}, f.fatal, f.key), msg, ctx)
        return None

    def release(self, requested: bool) -> list[tuple[Failure, str, Any]]:
        """End of stream: each held frame no exception line closed (none after a requested shutdown)."""
        held = [] if requested else list(self._open.values())
        self._open.clear()
        if self._nb_line is not None and (f := self._nb.entry(requested)) is not None:
            held.append((f, *self._nb_line))  # the notebook cell's LLM(…) call raised, no vLLM frame under it
        return held
