"""Lines of a cut traceback that only vLLM's start-up (or a platform plugin's) prints, though their function is not in
``phaseframes.PHASE_FRAMES``: its frame line or its source line alone names the start-up.

- V0's model runner's ``_dummy_run`` (``vllm/worker/model_runner.py`` 0.6 → 0.10: the dummy batch ``profile_run``
  runs, ``self._dummy_run(max_num_batched_tokens, max_num_seqs)``, under the worker's
  ``determine_num_available_blocks``): a frame of it is the start-up's profiling. Only V0's path: V1's
  ``gpu_model_runner.py`` runs its own ``_dummy_run`` while serving too (data parallelism's idle ranks).
- vllm-ascend's NPU worker taking its free-memory baseline, ``self.init_npu_memory = NPUPlatform.mem_get_info()[0]``
  (``worker/worker.py``, ``worker_v1.py`` and the torchair worker: ``init_device`` / its ``_init_device``, after
  ``set_device`` and ``empty_cache``, and nowhere else): the source line, its frame line cut above it, is the worker
  setting its device up at start.

- vLLM's worker wrapper building its worker, ``WorkerWrapperBase.init_worker`` (``vllm/worker/worker_base.py`` 0.6 →
  0.10, ``vllm/v1/worker/worker_base.py`` 0.8 → 2026: it resolves the worker class by its qualified name and constructs
  it). The executors call it only while they are built: V0's ``_init_workers_ray`` / ``_init_executor``
  (``_run_workers("init_worker", …)``), V1's ``WorkerProc.__init__`` (``wrapper.init_worker(all_kwargs)``) and the
  uniproc executor's ``_init_executor``: a frame of it, under vLLM's worker_base.py, is a worker's construction at
  start-up.

- V1's multiproc executor waiting for its workers to answer ready, ``WorkerProc.wait_for_ready``
  (``vllm/v1/executor/multiproc_executor.py`` 0.8 → 2026, read in 0.11.0's wheel: its only call, ``self.workers =
  WorkerProc.wait_for_ready(unready_workers)``, is in ``MultiprocExecutor._init_executor``, under the engine core's
  construction; it raises "WorkerProc initialization failed due to an exception in a background process." when a
  worker answered not ready or its pipe closed): its frame line, or that source line alone, is the executor's build.
  So is that exception's own line (``raised``: the Exception is built in ``wait_for_ready`` and raised nowhere else),
  read as a traceback's exception line or as the engine core's ERROR record, "Process EngineCore_DP0:" or not after it.

- vLLM's executor (V1's, and V0's from 0.7) asking its workers for a method only the engine's construction asks for,
  on ``collective_rpc``'s source line with the method's name quoted (``STARTUP_RPCS``; read in 0.11.0's wheel and 0.32's:
  ``v1/executor/abstract.py`` ``return self.collective_rpc("determine_available_memory")`` and
  ``"get_kv_cache_spec"``, called only by ``EngineCore._initialize_kv_caches``, and ``"initialize_from_config"``, called
  there too; 0.11's ``EngineCore.__init__`` ``self.collective_rpc("initialize_cache", …)``; ``"init_worker"`` /
  ``"init_device"`` / ``"load_model"``, only in the executors' ``_init_executor`` / ``_init_workers_ray``: V0's
  uniproc executor 0.7 → 0.10, V1's uniproc and Ray executors): that line, cut above its frame, is the start-up step
  the method names. ``compile_or_warm_up_model`` is not one (0.11's DP engine core asks for it again when its
  data-parallel group grows, ``reinitialize_distributed``); ``execute_model`` and the rest run while serving.
- V0's model runners' warm-up, ``warmup_model`` in ``vllm/worker/<device>_model_runner.py`` (HabanaAI's vllm-fork:
  ``hpu_worker.py`` ``_warm_up_model`` → ``self.model_runner.warmup_model(self.hpu_cache[0])``; V0's ``tpu_worker.py``
  likewise; each only from the worker's ``initialize_cache``, after the KV sizing, before the engine serves): a frame of
  it is the start-up's warm-up. V1's plugins' ``warmup_model`` (under ``compile_or_warm_up_model``) are not read.

A raise under any of them is the failed start (``before_serving``), never a crash while serving. Pure: a line in, a Failure
or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState

__all__ = ["STARTUP_RPCS", "WAIT_READY_RAISED", "frame", "raised", "startup_rpc"]

_DUMMY_RUN_RE = re.compile(r'File "[^"]*/vllm/worker/model_runner\.py", line \d+, in _dummy_run\b', re.ASCII)
_NPU_BASELINE = "self.init_npu_memory = NPUPlatform.mem_get_info()"
_INIT_WORKER_RE = re.compile(
    r'File "[^"]*/vllm/(?:v1/)?worker/worker_base\.py", line \d+, in init_worker\b', re.ASCII
)

_WAIT_READY_RE = re.compile(
    r'File "[^"]*/vllm/v1/executor/multiproc_executor\.py", line \d+, in wait_for_ready\b', re.ASCII
)
_WAIT_READY_CALL = "self.workers = WorkerProc.wait_for_ready("
#: the exception wait_for_ready builds and raises (its first sentence, so a line cut in "See stack trace for root
#: cause." is read too); the shorter "WorkerProc initialization failed." of later trees is not read
WAIT_READY_RAISED = "Exception: WorkerProc initialization failed due to an exception in a background process."


def raised(text: str, run: RunState) -> bool:
    """Whether text (an exception line or an ERROR record's message, stripped) is wait_for_ready's own exception,
    before any stats line: the executor's workers were never all ready, the failed start."""
    return not run.stats_seen and text.startswith(WAIT_READY_RAISED)


#: the worker methods vLLM's executor asks for only while the engine is built, by collective_rpc's quoted name
STARTUP_RPCS: dict[str, str] = {
    "determine_available_memory": "profiling",
    "get_kv_cache_spec": "kv_cache_init",
    "initialize_from_config": "kv_cache_init",
    "initialize_cache": "kv_cache_init",
    "init_worker": "startup",
    "init_device": "startup",
    "load_model": "loading_weights",
}
_WARMUP_RE = re.compile(
    r'File "[^"]*/vllm/worker/\w+_model_runner\.py", line \d+, in warmup_model\b', re.ASCII
)
_RPC_RE = re.compile(r"""\bcollective_rpc\(\s*(?P<q>["'])(?P<m>\w+)(?P=q)\s*[,)]""", re.ASCII)


def _rpc(text: str) -> str | None:
    """The start-up-only method (``STARTUP_RPCS``) text (a source line, stripped) has the executor ask for, if any."""
    m = _RPC_RE.search(text) if "collective_rpc" in text else None
    return m.group("m") if m is not None and m.group("m") in STARTUP_RPCS else None


def startup_rpc(text: str) -> bool:
    """Whether text (a source line, stripped) is vLLM's executor asking its workers for a start-up-only method."""
    return _rpc(text) is not None


def frame(text: str, run: RunState) -> Failure | None:
    """The start-up step text (a traceback's frame or source line, stripped) names, as a cut frame (after a requested
    stop: none)."""
    if run.requested:
        return None
    if text.startswith(_NPU_BASELINE):
        func, phase = "init_device", "startup"
    elif "init_worker" in text and _INIT_WORKER_RE.search(text) is not None:
        func, phase = "init_worker", "startup"
    elif text.startswith(_WAIT_READY_CALL) or (
        "wait_for_ready" in text and _WAIT_READY_RE.search(text) is not None
    ):
        func, phase = "wait_for_ready", "startup"
    elif (rpc := _rpc(text)) is not None:
        func, phase = rpc, STARTUP_RPCS[rpc]
    elif "warmup_model" in text and _WARMUP_RE.search(text) is not None:
        func, phase = "warmup_model", "warmup"
    elif "_dummy_run" in text and _DUMMY_RUN_RE.search(text) is not None:
        func, phase = "_dummy_run", "profiling"
    else:
        return None
    d = {"text": text[:300], "phase": phase, "frame": func, "cut": True, "before_serving": True}
    return Failure(FailureKind.ERROR_LINE, d, False, ("frame", func))
