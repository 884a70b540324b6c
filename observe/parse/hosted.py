"""Failures of a vLLM engine that only the program hosting it tells, on its own lines (not vLLM records).

- Ray's core worker, when a C++ exception nothing caught ends the process: its terminate handler logs
  "logging.cc:<n>: Unhandled exception: <mangled type>. what(): <message>" (``src/ray/util/logging.cc``) and the
  process aborts ("Stack trace:" follows). Under vLLM's Ray executor that process is the driver or a worker
  (NCCL's "invalid usage" raised so in vLLM 0.1's Ray workers): the engine or one of its workers is gone. That stack
  is the handler's own (``TerminateHandler`` logs ``ray::StackTrace()`` then calls ``std::abort``), so a frame
  naming ``ray::TerminateHandler()`` under a process prefix tells the same when the paste cut the line above.
- Ray's driver, when a worker process died under a task: "A worker died or was killed while executing a task
  by an unexpected system error." with "Worker exit type: SYSTEM_ERROR" (``worker.py``, Ray 2.x; its own list
  of causes: SIGKILL by the OOM killer, ``ray stop --force``, a crash). A vLLM worker died.
- Ray's core worker, when it could not register with the raylet at its start: "core_worker.cc:<n>: Failed to
  register worker <id> to Raylet. IOError: …" (the process exits): the engine's Ray workers never started.
- KServe's model server, when loading the model (its vLLM engine, with the huggingfaceserver) raised:
  "kserve ERROR [__main__.py:<module>():<n>] Failed to start model server: <exception>" (huggingfaceserver's
  ``__main__``, KServe 0.11 → 0.15): the server exits before it served.
- Xinference's worker, when a model's launch raised: "xinference.core.worker … ERROR … Failed to load model <uid>"
  (``launch_builtin_model``'s ``logger.exception``, 0.x → 1.x; the traceback through ``wait_for_load`` follows):
  the model's backend — the vLLM engine — failed to start.
- Xinference's REST API, when a model's launch raised: its traceback runs through ``restful_api.py``'s
  ``launch_model`` (logged with the supervisor's exception before the handler answers 500): the launch failed.
- Xinference's worker, a model's launch traceback cut above its ERROR line: a frame of ``launch_builtin_model``
  (``xinference/core/worker.py``, which awaits the model actor's ``load``): the model's load raised through it.
- GPUStack's worker, when it could not provision a model instance (its vLLM backend among them): "gpustack.worker.
  serve_manager - ERROR - Error provisioning model instance <name>: <exception>" (``serve_manager.py``
  ``_serve_model_instance``, the backend's ``start`` raising, e.g. "Failed to get vLLM backend image"): the
  instance's engine never started.
- gunicorn's arbiter, when a worker raised while it booted (``arbiter.py`` ``spawn_worker``: ``init_process``, which
  loads the app — the vLLM engine an app module builds at import — raised): "[<time>] [<pid>] [ERROR] Exception in
  worker process" (gunicorn's own log format), the traceback after it; the worker exits with its boot error.
- A BentoML runner's start-up (OpenLLM's vLLM runner): its traceback runs through the runner's
  ``init_local`` (``bentoml/_internal/runner/runner.py``), which builds the runnable — the engine — when the
  server's lifespan starts; a raise there fails the start.
- verl's rollout worker (``verl/workers/rollout/vllm_rollout/``): a thread, or an asyncio task, runs ``_loop_forever``,
  which takes each of the vLLM executor's calls off a ZeroMQ socket and runs it on vLLM's worker
  (``execute_method`` → ``inference_engine.execute_method``, start-up's and each step's alike). The thread's loop
  catches nothing (Python's "Exception in thread … (_loop_forever):" then its traceback), the task's logs the
  exception and breaks: a traceback through it is that loop ended, and the executor waiting on its reply hangs.
- ipex-llm's refusal (``ipex_llm/utils/common/log4Error.py``: ``invalidInputError`` logs
  "\\n\\n****************************Usage Error************************\\n<message>", then "Call Stack", then raises
  RuntimeError), e.g. its vLLM model conversion's "Currently, ipex-vllm does not support linear layers with
  skip_bias_add argument" while the model loads: before the engine served, a failed start by the serving wrapper
  (after it served, not read: the banner alone cannot tell a request's refusal from the engine's).
- verl's actor-rollout worker (``verl/workers/fsdp_workers.py``, ``megatron_workers.py``): ``generate_sequences`` is
  the rollout of a training step — it enters ``rollout_sharding_manager`` (which wakes the inference engine and
  loads the actor's weights into it) and has the engine generate — and the trainer calls it only once ``init_model``
  built that engine. A traceback through it is the rollout raising after the engine started (while serving), of
  whatever the frames under it name, cut or not.

- TorchServe's model worker, when the model's files could not be fetched: the worker's stdout comes back through
  the frontend's log, each line behind "[<ISO time>] [<LEVEL> ] W-<port>-<model>-stdout MODEL_LOG - "
  (``WorkerLifeCycle``'s readers; stderr's the same), and the traceback it prints through huggingface_hub's download reaches
  ``hf_raise_for_status(response)`` — the call that raises the Hub's HTTP error (401/403 for a gated or private repo
  without a token, 404 for a wrong id or revision). The worker fetches the model while its handler initializes
  (``model_service_worker.py`` ``load_model``; a load that raises is logged as "Backend worker process died." and the
  worker exits; the vLLM example's handler builds the engine there): the model — its vLLM engine — never started.

- A fatal signal in a process of the engine (a line under its process prefix): Abseil's failure-signal handler,
  which Ray's core worker installs, prints "*** SIGBUS received at time=<t> on cpu <n> ***" (Ray's logging.cc
  copies it), and CPython's faulthandler "Fatal Python error: Bus error" (Segmentation fault, Aborted, Floating
  point exception, Illegal instruction): the process is gone — the engine's death, with the signal. Abseil's line
  for SIGTERM (or SIGINT, SIGHUP) is a stop someone asked for, not a fault: not read.
- RunPod serverless' worker (worker-vllm runs the engine inside it): the platform's own log of the worker's container,
  level-tagged by its console ("<worker id>[error]worker exited with exit code N"), says the worker's process ended;
  a serverless worker's handler loop never returns by itself, so a non-zero code is its death (above 128: the
  signal 128 + n, 136 = SIGFPE). Where (start-up or a job) the line does not say: serving once a stats line was
  read, else unknown.
- A host's start-up timeout: Modal's "Runner failed with exception: Runner has been initializing for too long: N
  seconds" — the container was stopped while vLLM was still starting (loading, compiling): the start failed, of
  the platform's limit, not of vLLM.
- Google Cloud Run's deploy, when the revision's container never became ready: gcloud's "ERROR: (gcloud.[beta.]run.deploy)
  [Revision '<name>' is not ready and cannot serve traffic. ]The user-provided container failed to start and listen on
  the port defined provided by the PORT=<n> environment variable[ within the allocated timeout]. …" (the service's own
  words, which the revision's Ready condition carries too: Cloud Run's start-up probe, by default a TCP check on $PORT,
  did not succeed within its time and Cloud Run shut the container down; its troubleshooting page's
  "container-failed-to-start"). The vLLM server in it never listened: a failed start, its cause — weights still
  downloading or loading past the probe's time, a crash, a --port other than $PORT — in the revision's own log.
- Vertex AI's endpoint deploy, when the serving container died before the deployment completed: the deploy
  operation's error, raised by api_core's operation future ("FailedPrecondition: 400 Model server terminated: model
  server container terminated: …", "FailedPrecondition: 400 Model server exited unexpectedly. Model server logs can
  be found at …": the service's words, not in the SDK's source; read in Vertex AI Model Garden's and the samples'
  vLLM deployments). A FailedPrecondition alone is any API call refused; only "400 Model server" terminated or
  exited says the container (vLLM's server) ended: a failed start, its cause in the model server's log.
- vLLM's own refusal quoted by a host's logger (or printed as an exception line): "Failed to infer device type,
  please set the environment variable `VLLM_LOGGING_LEVEL=DEBUG` …" (``DeviceConfig.__post_init__``, read in
  0.32's ``config/device.py``: raised while the engine's config is built when no platform was detected): no engine
  starts.
- vLLM's own CUDA check in its C++ (``CUDACHECK`` in ``csrc/custom_all_reduce.cuh``: ``printf("Failed: Cuda error
  %s:%d '%s'\n", …)`` then ``exit(EXIT_FAILURE)``), printed bare or relayed by a host's logger (Dynamo's "INFO
  dynamo_engine_vllm::worker: VLLM: Failed: …/custom_all_reduce.cuh:368 'invalid argument'"): a CUDA call of custom
  all-reduce failed (at CUDA-graph capture, registering its buffers) and the process exited — before it served, a
  failed start.
- NCCL's own warning that it could not make its shared-memory segment in /dev/shm (``src/misc/shmutils.cc``
  ``ncclShmOpen``: "Error: failed to extend /dev/shm/nccl-XXXXXX to N bytes, error: No space left on device (28)",
  then "Error while creating shared memory segment /dev/shm/nccl-XXXXXX (size N), error: No space left on device
  (28)": fallocate's errno in words; older releases' ftruncate form names none and is not read), bare or behind
  NCCL's "host:pid:tid [rank] misc/shmutils.cc:N NCCL WARN" prefix. NCCL sets up its shared-memory and proxy buffers while the communicator connects (vLLM's first
  collectives, at start-up) and returns ncclSystemError, which the worker raises: a container's /dev/shm (docker's
  64 MB default) is too small for tensor-parallel ranks — ``--shm-size`` or ``--ipc=host`` is the fix. Only with
  "No space left on device" and a /dev/shm path: before it served, a failed start.

- InstructLab's vLLM backend (``instructlab/model/backends/vllm.py``), when the vLLM server process it launched
  exited while it polled for the server to come up: it raises ServerException("vLLM failed to start.", with
  "  Retry with --enable-serving-output to learn more about the failure." when vLLM's output was hidden), printed
  alone or behind its "Failed to start server: ": the server never started — a failed start, its cause in vLLM's
  own output, hidden.
- llm-d-benchmark's standup (``setup/functions.py`` wait_for_pods): while it waits for the deployed pods to be
  Running / Ready, a container that terminated with a non-zero exit code is announced "❌ Crashed container in pod:
  <pod>" (later "ERROR: Crashed container in pod: <pod>, container: <name>") and the standup fails. Read only for a
  pod whose name says vLLM ("vllm-standalone-…"): the vLLM server's container died before it was Ready — a failed
  start.

- LangChain's VLLM wrapper (``langchain_community/llms/vllm.py``): ``VLLM(...)`` is a pydantic model whose root
  validator ``validate_environment`` imports vllm and builds ``vllm.LLM`` — the in-process engine — while pydantic
  v1's ``validate_model`` runs it (``values = validator(cls_, values)``). A traceback whose source line assigns or
  returns ``VLLM(`` (the call cut there, or its keyword arguments) is that construction raising, even when the paste
  ends before any frame of vLLM's package: a failed start (ImportError of vllm included: no engine).
- ART's local backend (``art/local/backend.py`` ``LocalBackend._prepare_backend_for_training``): it gets the model's
  service and starts its OpenAI server — the vLLM engine (Unsloth's or ART's own service over vLLM) in this process,
  the local backend's only inference engine. A traceback through that frame of the local backend (not the serverless
  or Tinker backends, which start no engine) is that start raising: a failed start.

- uvicorn's own record that the server could not bind its socket (``uvicorn/server.py`` ``startup``: ``except OSError
  as exc: logger.error(exc)``, then the lifespan's shutdown and ``sys.exit(1)``), the OSError asyncio's
  ``create_server`` (or uvloop's) raises for the address: "ERROR:    [Errno 98] error while attempting to bind on
  address ('0.0.0.0', 8000): [errno 98] address already in use" (uvloop keeps the errno in the reason, CPython's loop
  writes the reason alone). uvicorn runs vLLM's API server (``entrypoints/launcher.py`` serve_http): the server never
  served, a failed start whatever the engine did before it — another process holds the port (free it, or pass
  another --port), the address is not this machine's (--host), or a port below 1024 needs privileges. vLLM's own
  launcher then logs "port N is used by process …" (DEBUG in 0.6, WARNING later) from its CancelledError branch —
  also reached by every stop with a signal while any other process holds a socket on that port (0.6 did not leave
  its own process out), so that line alone is not read.
- vllm-tgis-adapter (``vllm_tgis_adapter/__main__.py`` ``run_and_catch_termination_cause``, 2024-09 → 2026): when
  the server's main task (the engine's build, then the gRPC and HTTP servers) raised an Exception, it writes the
  traceback to ``/dev/termination-log`` (``utils.py`` ``write_termination_log``, its only caller) and re-raises: the
  process ends. When that write fails it logs "Unable to write termination logs to <file>" (``logger.exception``, the
  write's own traceback under it). The line is the server going down with an error: before any stats line, a failed
  start; after one, the server's exit while serving. Ctrl-C and SIGTERM (KeyboardInterrupt, CancelledError: not
  Exception) never reach it.

Each is a start-up failure (uvicorn's bind, vllm-tgis-adapter's exit before serving, KServe, InstructLab, LangChain's VLLM, ART, llm-d-benchmark, BentoML, Modal, Cloud Run, Vertex AI, ipex-llm, no device, NCCL's /dev/shm) or the death of the engine's process (Ray,
a fatal signal), never a request's error. Pure: a raw line in, a Failure or None out.
"""

from __future__ import annotations

import re
import signal

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState, serving_or

_RAY_ABORT = re.compile(r"\blogging\.cc:\d+: Unhandled exception: (?P<type>\S+)\. what\(\): (?P<what>.*)")
#: a frame of the stack Ray's terminate handler prints before it aborts (``src/ray/util/logging.cc``)
_RAY_TERMINATE = re.compile(r"\bray::TerminateHandler\(\)")
_RAY_DIED = "A worker died or was killed while executing a task by an unexpected system error"
#: Ray's core worker at its start (``src/ray/core_worker/core_worker.cc``): it could not register with the node's
#: raylet, and the process exits (RAY_CHECK after the error)
_RAY_REGISTER = re.compile(r"\bcore_worker\.cc:\d+: Failed to register worker \S+ to Raylet\b")
_KSERVE = re.compile(r"\bkserve ERROR \[.*\] Failed to start model server: (?P<why>.*)")
#: Xinference's worker (``xinference/core/worker.py`` launch_builtin_model, logger.exception) when a model's
#: launch raised — the vLLM engine's start among its backends: "Failed to load model <uid>"
_XINFERENCE = re.compile(
    r"(?:\bERROR\b.*\bxinference\.core\.worker\b|\bxinference\.core\.worker\b.*\bERROR\b).*\bFailed to load model \S"
)
#: Xinference's worker: the frame of its model launch (``launch_builtin_model`` awaits the model actor's ``load``)
_XINF_WORKER = re.compile(r'xinference/core/worker\.py", line \d+, in launch_builtin_model\b')
#: GPUStack's worker (``gpustack/worker/serve_manager.py``): the instance's backend (vLLM) raised while it started
_GPUSTACK = re.compile(
    r"\bgpustack\.worker\.serve_manager\b.*\bERROR\b.*\bError provisioning model instance \S+: (?P<why>.*)"
)
#: gunicorn's arbiter (``gunicorn/arbiter.py`` spawn_worker's ``log.exception``), in gunicorn's own format
_GUNICORN_BOOT = re.compile(r"\[\d+\] \[ERROR\] Exception in worker process\b")
_BENTO_INIT = re.compile(r'bentoml/_internal/runner/runner\.py", line \d+, in init_local\b')
#: Xinference's REST handler of a model launch (``xinference/api/restful_api.py`` launch_model: it logs the
#: supervisor's exception with its traceback, then answers 500): the launch — the vLLM engine's start among its
#: backends — failed; its other handlers (a chat request's error) are not it
#: verl's rollout loop of vLLM's worker methods (a thread in vllm_rollout_spmd.py, a task in the async rollout)
_VERL_LOOP = re.compile(r'verl/workers/rollout/vllm_rollout/\w+\.py", line \d+, in _loop_forever\b')
_VERL_LOOP_CAUSE = (
    "verl's rollout loop (_loop_forever, which runs the vLLM executor's calls on vLLM's worker) raised and ended: "
    "the executor waits on a reply that never comes (its exception line is below, or cut off)"
)
#: verl's actor-rollout worker's rollout of a training step (``ActorRolloutRefWorker.generate_sequences``)
_VERL_ROLLOUT = re.compile(r'verl/workers/(?:fsdp|megatron)_workers\.py", line \d+, in generate_sequences\b')
_VERL_ROLLOUT_CAUSE = (
    "verl's rollout of a training step raised (generate_sequences: waking the inference engine — vLLM under verl's "
    "vllm rollout — and loading the actor's weights into it, then generating): the engine, built at init_model, "
    "failed while serving the trainer (its exception line is below, or cut off)"
)
_XINF_LAUNCH = re.compile(r'xinference/api/restful_api\.py", line \d+, in launch_model\b')
#: Abseil's failure-signal handler (``failure_signal_handler.cc``: "*** %s received at time=%ld on cpu %d ***")
_ABSL_SIGNAL = re.compile(r"\*\*\* (?P<sig>SIG[A-Z]{2,6}) received at time=\d+")
#: the signals that ask a process to stop, not faults: Abseil's handler prints its line for SIGTERM as for SIGSEGV,
#: SIGBUS, SIGABRT, SIGILL, SIGFPE, SIGTRAP (its ``failure_signals`` table); someone (a user, a job scheduler, vLLM's
#: own process manager after an engine death) stopped the process — no crash. Not a requested stop either: a death
#: the other lines tell still counts.
STOP_SIGNALS = frozenset({"SIGTERM", "SIGINT", "SIGHUP"})
#: CPython's faulthandler on a fatal signal, by the signal it names
_FAULT = {
    "Segmentation fault": "SIGSEGV",
    "Bus error": "SIGBUS",
    "Aborted": "SIGABRT",
    "Floating point exception": "SIGFPE",
    "Illegal instruction": "SIGILL",
}
_FAULT_RE = re.compile(r"^Fatal Python error: (?P<what>" + "|".join(_FAULT) + r")\b")
#: TorchServe's frontend relaying its model worker's stdout (``W-9000-model_1.0-stdout MODEL_LOG - ``), the line
#: huggingface_hub's download raises the Hub's HTTP error from (``file_download.py`` ``_request_wrapper``)
_TS_HUB = re.compile(r"\bW-\d+-\S+-std(?:out|err) MODEL_LOG - \s+hf_raise_for_status\(")
#: RunPod's console: the worker's container exited, under the "[error]" level tag its log viewer prints
_RUNPOD_EXIT = re.compile(r"\[error\]\s*worker exited with exit code (?P<code>[1-9]\d{0,2})\s*$")
_MODAL_INIT = re.compile(r"Runner has been initializing for too long: (?P<secs>\d+) seconds")
_NO_DEVICE = "Failed to infer device type"
#: Cloud Run's word for a revision whose container never listened on $PORT within the start-up probe's time
_CLOUD_RUN = (
    "The user-provided container failed to start and listen on the port defined provided by the PORT="
)
#: uvicorn's record of the OSError its socket's bind raised (asyncio / uvloop create_server), under its own level prefix
_UVICORN_BIND = re.compile(
    r"^ERROR:\s+\[Errno (?P<errno>\d+)\] error while attempting to bind on address (?P<addr>.+?): "
    r"(?:\[errno \d+\] )?(?P<why>[a-z][a-z ]*[a-z])\s*$"
)
_BIND_LITERAL = "error while attempting to bind on address"
#: Vertex AI's deploy operation failing because the model server (the serving container) ended
_VERTEX = re.compile(r"\bFailedPrecondition: 400 Model server (?:terminated|exited unexpectedly)\b")
#: NCCL's shmutils.cc warnings of a full /dev/shm (growing or creating its segment)
_NCCL_SHM = re.compile(
    r"\bError(?:: failed to extend /dev/shm/\S+ to \d+ bytes| while creating shared memory segment /dev/shm/\S+ "
    r"\(size \d+\)), error: No space left on device\b"
)
#: vLLM's CUDACHECK (``csrc/custom_all_reduce.cuh``): a CUDA call failed and the process exits
_CUDACHECK = re.compile(r"(?:^|\s)Failed: (?:Cuda error )?(?P<where>\S+\.cuh?:\d+) '(?P<err>[^']+)'\s*$")
#: InstructLab's ServerException when the vLLM process it launched exited before the server answered
_ILAB = re.compile(r"(?:^|: )vLLM failed to start\.(?:\s+Retry with --enable-serving-\S*.*)?\s*$")
#: llm-d-benchmark's standup, a container of a vLLM pod that terminated non-zero while it waited for Ready
_LLMDB_CRASH = re.compile(r"(?:❌|\bERROR:)\s*Crashed container in pod: (?P<pod>\S*vllm\S*?),?(?:\s|$)")
#: LangChain's VLLM wrapper constructed on a traceback's source line ('llm = VLLM(', 'return VLLM(model=...')
_LANGCHAIN_VLLM = re.compile(
    r"^(?:[\w.\[\]'\"]+\s*=\s*|return\s+)(?:[\w.]+\.)?VLLM\((?:\s*$|\s*\w+\s*=)", re.ASCII
)
#: ART's local backend starting the model's vLLM-backed OpenAI server
_ART_PREPARE = re.compile(r'art/local/backend\.py", line \d+, in _prepare_backend_for_training\b')
#: ipex-llm's own banner (log4Error.outputUserMessage: 28 and 24 stars), the reason on the next line, then RuntimeError
_IPEX_USAGE = re.compile(r"^\*{28}Usage Error\*{24}\s*$")
#: what a line must hold for ``death`` or ``frame`` to read it (``triggers.TRIGGERS``)
LITERALS: tuple[str, ...] = (
    "Unhandled exception: ",
    "ray::TerminateHandler()",
    _RAY_DIED,
    "Failed to register worker ",
    "Failed to start model server",
    "Failed to load model ",
    "in init_local",
    "in launch_model",
    "in launch_builtin_model",
    "in generate_sequences",
    "Error provisioning model instance ",
    " received at time=",
    "Fatal Python error: ",
    "Runner has been initializing for too long",
    _NO_DEVICE,
    _CLOUD_RUN,
    _BIND_LITERAL,
    "FailedPrecondition: 400 Model server ",
    "Failed: ",
    "/dev/shm/",
    "Exception in worker process",
    "*Usage Error*",
    "hf_raise_for_status(",
    "worker exited with exit code ",
    "vLLM failed to start.",
    "Crashed container in pod: ",
    "Unable to write termination logs to ",
    "VLLM(",
    "in _prepare_backend_for_training",
)

_ABORT_CAUSE = (
    "Ray's core worker aborted on a C++ exception nothing caught ({what}): the process hosting the engine or "
    "one of its workers is gone"
)
_TERMINATE_CAUSE = (
    "Ray's core worker aborted in its terminate handler (std::terminate: a C++ exception nothing caught; its "
    "what() is above the stack, cut here): the process hosting the engine or one of its workers is gone"
)
_DIED_CAUSE = (
    "Ray: a worker process died while it ran a task (exit type SYSTEM_ERROR — killed by SIGKILL, by "
    "`ray stop --force`, or crashed; Ray's log for the dead worker names which): one of the engine's workers is gone"
)
_REGISTER_CAUSE = (
    "Ray: a worker process could not register with its node's raylet and exited (the raylet gone or unreachable: a "
    "Ray cluster stopped, a stale session directory, a full /tmp): the engine's Ray workers never started"
)
_KSERVE_CAUSE = "KServe's model server failed to load the model (its vLLM engine) and exits: {why}"
_XINFERENCE_CAUSE = (
    "Xinference's worker failed to launch the model (its backend, the vLLM engine, raised while it started: the "
    "exception is at the end of the traceback below, or cut off)"
)
_XINFERENCE_LAUNCH_CAUSE = (
    "Xinference's REST API failed to launch the model (launch_model raised: its backend, the vLLM engine, or the "
    "launch around it never came up; the exception is at the end of the traceback, or cut off)"
)
_GPUSTACK_CAUSE = (
    "GPUStack's worker failed to provision the model instance (its vLLM backend never started): {why}"
)
_CUDACHECK_CAUSE = (
    "a CUDA call in vLLM's C++ failed ('{err}' at {where}: custom all-reduce's CUDA check, e.g. while CUDA graphs "
    "were captured) and the process exited; --disable-custom-all-reduce avoids custom all-reduce"
)
_NCCL_SHM_CAUSE = (
    "NCCL could not make its shared-memory segment in /dev/shm (No space left on device) while the tensor-parallel "
    "ranks connected, and the worker raised NCCL's system error"
)
_NCCL_SHM_FIX = (
    "the container's /dev/shm is too small for NCCL's segments (docker's default is 64 MB): run it with --shm-size "
    "(e.g. 16g) or --ipc=host (Kubernetes: a memory-backed emptyDir at /dev/shm); no vLLM flag is the lever"
)
_GUNICORN_CAUSE = (
    "gunicorn's worker raised while it booted (loading the app, which builds the vLLM engine): the worker exits "
    "before it served (its exception is at the end of the traceback below, or cut off)"
)
_IPEX_CAUSE = (
    "ipex-llm refused to go on (its invalidInputError: the 'Usage Error' banner, the reason on the line below, then "
    "a RuntimeError) before the engine served — e.g. a model or layer its vLLM conversion does not support: the "
    "serving wrapper's start failed"
)
_TS_HUB_CAUSE = (
    "TorchServe's model worker could not fetch the model from the Hugging Face Hub (huggingface_hub raised the Hub's "
    "HTTP error: a gated or private repo without a token — HF_TOKEN — a wrong repo id or revision): the handler's "
    "load, which builds the vLLM engine, failed and the worker exits (the exception line is below, or cut off)"
)
_ILAB_CAUSE = (
    "InstructLab's vLLM backend: the vLLM server process it launched exited before it answered (its own "
    "'vLLM failed to start.'); vLLM's output was hidden — --enable-serving-output shows why"
)
_LLMDB_CAUSE = (
    "llm-d-benchmark's standup: a container of the vLLM pod {pod} terminated with a non-zero exit code before the "
    "pod was Ready (its own 'Crashed container in pod'); the pod's log (kubectl logs --previous) tells why"
)
_LANGCHAIN_CAUSE = (
    "LangChain's VLLM wrapper raised while it was built: its validator (validate_environment) imports vllm and builds "
    "vllm.LLM, the engine, in this process (the exception line is below, or cut off)"
)
_ART_CAUSE = (
    "ART's local backend raised while it prepared the model for training (_prepare_backend_for_training: the model's "
    "service and its OpenAI server, the vLLM engine, started in this process; the exception line is below, or cut off)"
)
_SIGNAL_CAUSE = "a process of the engine was killed by {sig} (a fatal signal; SIGBUS in a container is often a full /dev/shm)"
_RUNPOD_CAUSE = (
    "RunPod's serverless worker (the container running the vLLM engine) exited with code {code}{sig}: the worker "
    "process died, its jobs with it (RunPod starts a new worker)"
)
_MODAL_CAUSE = (
    "Modal stopped the container: its start-up (vLLM loading weights, compiling) ran past the runner's {secs} s "
    "limit — raise the function's start-up timeout; no vLLM flag is the lever"
)
_CLOUD_RUN_CAUSE = (
    "Cloud Run's deploy failed: the revision's container (the vLLM server) did not listen on $PORT before its start-up "
    "probe gave up, so Cloud Run shut it down and the revision never served — the revision's own log (gcloud's Logs "
    "URL) decides why: weights still downloading or loading past the probe's time (common for vLLM: extend the "
    "probe), a crash at start-up, or vLLM's --port not $PORT"
)
_BIND_CAUSE = "uvicorn could not bind vLLM's API server to {addr} ({why}) and exited: the server never served"
#: what fixes each bind failure (the errno's words), none of them a KV or batch flag
_BIND_FIX = {
    "address already in use": "another process holds the port: stop it (or wait for the old server to exit), or "
    "pass another --port",
    "cannot assign requested address": "--host is not an address of this machine: pass one of its addresses, or "
    "0.0.0.0",
    "permission denied": "a port below 1024 needs privileges: pass another --port (above 1023)",
}
_VERTEX_CAUSE = (
    "Vertex AI's endpoint deploy failed: the model server container (the vLLM server) terminated before the "
    "deployment completed — the model server's log (Cloud Logging) decides why: a refused flag, the model not "
    "fitting the machine's accelerators, a failed download"
)
_NO_DEVICE_CAUSE = (
    "vLLM found no device platform (DeviceConfig: no GPU or accelerator visible to this process, or its platform "
    "plugin missing); `VLLM_LOGGING_LEVEL=DEBUG` shows the detection — no engine starts"
)
_TGIS_LOG = re.compile(r"^Unable to write termination logs to /\S+$")
_TGIS_CAUSE = (
    "vllm-tgis-adapter's server ended with an exception: it writes the traceback to its termination log only then "
    "(run_and_catch_termination_cause, then re-raised), and that write failed; the exception itself follows the "
    "write's own traceback"
)
_BENTO_CAUSE = (
    "a BentoML runner's start-up raised in init_local, which builds the runnable (the vLLM engine under "
    "OpenLLM): the runner never started (its exception line is below, or cut off)"
)


def death(text: str, run: RunState, prefixed: bool = True) -> Failure | None:
    """The failure a host of the engine tells on a raw line (after a requested stop: none); prefixed: the line
    carries a process or rank prefix (a fatal signal is read only there: bare, it is anybody's process)."""
    if run.requested:
        return None
    if prefixed and (sig := fatal_signal(text)) is not None:
        d = {"form": "fatal_signal", "signal": sig, "cause": _SIGNAL_CAUSE.format(sig=sig)}
        d["phase"] = serving_or(run, "unknown")
        return Failure(FailureKind.ENGINE_CRASHED, d, True, ("crashed", "signal", sig))
    if (m := _RUNPOD_EXIT.search(text)) is not None:
        code = int(m.group("code"))
        sig = _signal_name(code - 128) if code > 128 else None
        cause = _RUNPOD_CAUSE.format(code=code, sig=f" ({sig})" if sig else "")
        return _failure(text, serving_or(run, "unknown"), cause, ("runpod", "worker_exit"))
    if _ILAB.search(text) is not None:
        return start_failed(text, _ILAB_CAUSE, ("instructlab", "vllm_failed_start"))
    if (m := _LLMDB_CRASH.search(text)) is not None:
        pod = m.group("pod").rstrip(",")
        return start_failed(text, _LLMDB_CAUSE.format(pod=pod), ("llm_d_benchmark", "crashed_container"))
    if not run.requested and _LANGCHAIN_VLLM.match(text) is not None:
        f = start_failed(text, _LANGCHAIN_CAUSE, ("langchain", "vllm_wrapper"))
        return Failure(f.kind, {**f.details, "cut": True, "frame": "VLLM"}, f.fatal, f.key)
    if (m := _MODAL_INIT.search(text)) is not None:
        return start_failed(text, _MODAL_CAUSE.format(secs=m.group("secs")), ("modal", "init_timeout"))
    if _NO_DEVICE in text:
        return start_failed(text, _NO_DEVICE_CAUSE, ("vllm", "no_device"))
    if _CLOUD_RUN in text:
        return start_failed(text, _CLOUD_RUN_CAUSE, ("cloud_run", "not_listening"))
    if (m := _UVICORN_BIND.match(text)) is not None:
        f = start_failed(text, _BIND_CAUSE.format(addr=m["addr"][:80], why=m["why"]), ("uvicorn", "bind"))
        fix = _BIND_FIX.get(m["why"], "free the address or pass another --host / --port")
        return Failure(f.kind, {**f.details, "fix": fix, "errno": int(m["errno"])}, f.fatal, f.key)
    if _TGIS_LOG.match(text) is not None:
        if run.stats_seen:
            return _failure(text, "serving", _TGIS_CAUSE, ("tgis_adapter", "termination"))
        return start_failed(text, _TGIS_CAUSE, ("tgis_adapter", "termination"))
    if _VERTEX.search(text) is not None:
        return start_failed(text, _VERTEX_CAUSE, ("vertex_ai", "model_server_terminated"))
    if _TS_HUB.search(text) is not None:
        if run.stats_seen:  # another worker's load, after this log's engine served
            return _failure(text, "unknown", _TS_HUB_CAUSE, ("torchserve", "hub_fetch"))
        f = start_failed(text, _TS_HUB_CAUSE, ("torchserve", "hub_fetch"))
        return Failure(f.kind, {**f.details, "cut": True, "frame": "hf_raise_for_status"}, f.fatal, f.key)
    if _NCCL_SHM.search(text) is not None:
        key = ("nccl", "shm_full")
        f = (
            _failure(text, "serving", _NCCL_SHM_CAUSE, key)
            if run.stats_seen
            else start_failed(text, _NCCL_SHM_CAUSE, key)
        )
        return Failure(f.kind, {**f.details, "fix": _NCCL_SHM_FIX}, f.fatal, f.key)
    if (m := _CUDACHECK.search(text)) is not None:
        cause = _CUDACHECK_CAUSE.format(err=m.group("err")[:80], where=m.group("where").rsplit("/", 1)[-1])
        if run.stats_seen:
            return _failure(text, "serving", cause, ("vllm", "cudacheck"))
        return start_failed(text, cause, ("vllm", "cudacheck"))
    if (m := _RAY_ABORT.search(text)) is not None:
        cause = _ABORT_CAUSE.format(what=m.group("what")[:200])
        return _failure(text, "unknown", cause, ("ray", "unhandled_exception"))
    if prefixed and _RAY_TERMINATE.search(text) is not None:
        return _failure(text, "unknown", _TERMINATE_CAUSE, ("ray", "unhandled_exception"))
    if _RAY_DIED in text:
        return _failure(text, "unknown", _DIED_CAUSE, ("ray", "worker_died"))
    if _RAY_REGISTER.search(text) is not None:
        return start_failed(text, _REGISTER_CAUSE, ("ray", "register_failed"))
    if (m := _KSERVE.search(text)) is not None:
        return start_failed(text, _KSERVE_CAUSE.format(why=m.group("why")[:200]), ("kserve", "failed_start"))
    if (m := _GPUSTACK.search(text)) is not None:
        return start_failed(text, _GPUSTACK_CAUSE.format(why=m.group("why")[:200]), ("gpustack", "provision"))
    if _GUNICORN_BOOT.search(text) is not None:
        f = start_failed(text, _GUNICORN_CAUSE, ("gunicorn", "worker_boot"))
        return Failure(f.kind, {**f.details, "cut": True, "frame": "spawn_worker"}, f.fatal, f.key)
    if not run.stats_seen and _IPEX_USAGE.match(text) is not None:
        return start_failed(text, _IPEX_CAUSE, ("ipex_llm", "usage_error"))
    if _XINFERENCE.search(text) is not None:  # its traceback's exception, when kept, tells the cause
        f = start_failed(text, _XINFERENCE_CAUSE, ("xinference", "failed_load"))
        return Failure(f.kind, {**f.details, "cut": True, "frame": "wait_for_load"}, f.fatal, f.key)
    return None


def frame(text: str, run: RunState) -> Failure | None:
    """A frame of a host's start-up that tells the start failed (a BentoML runner's ``init_local``, Xinference's
    REST ``launch_model`` or its worker's ``launch_builtin_model``), or of verl's rollout loop that tells it ended
    (``_loop_forever``)."""
    if run.requested:
        return None
    if _BENTO_INIT.search(text) is not None:
        f, where = start_failed(text, _BENTO_CAUSE, ("bentoml", "init_local")), "init_local"
    elif _ART_PREPARE.search(text) is not None:
        f, where = (
            start_failed(text, _ART_CAUSE, ("art", "prepare_backend")),
            "_prepare_backend_for_training",
        )
    elif _XINF_WORKER.search(text) is not None:
        f, where = (
            start_failed(text, _XINFERENCE_CAUSE, ("xinference", "failed_load")),
            "launch_builtin_model",
        )
    elif _XINF_LAUNCH.search(text) is not None:
        f, where = (
            start_failed(text, _XINFERENCE_LAUNCH_CAUSE, ("xinference", "launch_model")),
            "launch_model",
        )
    elif _VERL_LOOP.search(text) is not None:
        phase = serving_or(run, "unknown")
        f, where = _failure(text, phase, _VERL_LOOP_CAUSE, ("verl", "loop_forever")), "_loop_forever"
    elif _VERL_ROLLOUT.search(text) is not None:
        f, where = (
            _failure(text, "serving", _VERL_ROLLOUT_CAUSE, ("verl", "generate_sequences")),
            "generate_sequences",
        )
    else:
        return None
    return Failure(f.kind, {**f.details, "cut": True, "frame": where}, f.fatal, f.key)


def stop_signal(text: str) -> str | None:
    """The stop signal (``STOP_SIGNALS``) Abseil's handler line names, or None."""
    m = _ABSL_SIGNAL.search(text)
    return m.group("sig") if m is not None and m.group("sig") in STOP_SIGNALS else None


def fatal_signal(text: str) -> str | None:
    """The signal a crash handler's line names (Abseil's '*** SIGBUS received at time=', faulthandler's 'Fatal
    Python error: Bus error'), or None (and for a stop signal, ``STOP_SIGNALS``: no crash); ``native`` reads the
    same lines where no process prefix is."""
    if (m := _ABSL_SIGNAL.search(text)) is not None:
        return None if m.group("sig") in STOP_SIGNALS else m.group("sig")
    if (f := _FAULT_RE.match(text)) is not None:
        return _FAULT[f.group("what")]
    return None


def _signal_name(n: int) -> str | None:
    """The POSIX signal numbered n (Linux's numbering), or None."""
    try:
        return signal.Signals(n).name
    except ValueError:
        return None


def start_failed(text: str, cause: str, key: tuple[str, str]) -> Failure:
    """A start-up failure another program's raw line tells (the engine never served)."""
    f = _failure(text, "startup", cause, key)
    return Failure(f.kind, {**f.details, "before_serving": True}, f.fatal, f.key)


def _failure(text: str, phase: str, cause: str, key: tuple[str, str]) -> Failure:
    return Failure(FailureKind.ERROR_LINE, {"text": text[:300], "phase": phase, "cause": cause}, False, key)
