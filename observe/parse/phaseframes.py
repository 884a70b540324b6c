"""vLLM's own functions as a traceback's frames name them, by the phase of the run they belong to: start-up
(``PHASE_FRAMES``: the executor's and workers' construction, weight loading, profiling, the KV cache's sizing, CUDA
graph capture, the front end launching the engine cores), serving (``SERVING_FRAMES``: the engine loops) or both
(``SHARED_FRAMES``). The frame readers (``parse.frames``, ``parse.unread``) and the catch-all
(``failures.failing``) name a cut traceback's phase from them. Data only.
"""

from __future__ import annotations

#: V0's KV-cache size check (worker.py 0.4 → 0.10, the first step of ``Worker.initialize_cache``): it raises only
#: "No available memory for the cache blocks" (no GPU blocks) or "The model's max seq len (N) is larger than
#: the maximum number of tokens that can be stored in KV cache (M)" — read in the 0.4.1 and 0.5.0.post1 wheels.
#: A traceback cut at its call (or its frame) is that refusal, whatever the record's header: ``kv_check``
KV_CHECK = "raise_if_cache_size_invalid"
#: the OpenAI server's engine client (entrypoints/openai/api_server.py 0.5 → 0.10, V0 and V1): run_server enters
#: ``async with build_async_engine_client(args)`` once, before it serves; ``…_from_engine_args`` builds the engine
#: there and raises "Engine process failed to start" (0.6, 0.7) when its process dies first. Only a stop thrown
#: in at its ``yield`` passes it later: after a requested stop nothing is read, once the engine served it is unknown
CLIENT_START = ("build_async_engine_client", "build_async_engine_client_from_engine_args")
#: vllm-omni's stage-initialisation functions (async_omni_engine.py, stage_runtime.py), start-up only
OMNI_STAGE_INIT = (
    "_initialize_stages",
    "_initialize_stage_replicas",
    "_initialize_replica",
    "_initialize_llm_replica",
)
#: run_mp_engine's source line building V0's MQLLMEngine (engine/multiprocessing/engine.py: ``from_engine_args`` in
#: 0.6 and 0.7, ``from_vllm_config`` 0.8 → 0.10). run_mp_engine builds the engine, then calls ``engine.start()``,
#: and logs whatever either raised (``logger.exception(e)``, the record headed by its traceback): a traceback
#: through this line, cut or whole, is the engine's failed build, never a loop that served
MQ_BUILD_CALLS = ("MQLLMEngine.from_vllm_config(", "MQLLMEngine.from_engine_args(")
#: vLLM's start-up functions, as they show in frames (``File "…", line N, in f`` or the call under
#: it) → the phase (the names of V0 worker.py / model_runner.py / parallel_state.py / pynccl.py, of
#: model_loader and models/utils.py, and the V1 gpu_worker.py / gpu_model_runner.py / core.py, 0.4 → 0.32)
PHASE_FRAMES: dict[str, str] = {
    "load_model": "loading_weights",
    "load_weights": "loading_weights",
    "get_model": "loading_weights",
    "initialize_model": "loading_weights",
    "_initialize_model": "loading_weights",
    "make_layers": "loading_weights",
    "create_weights": "loading_weights",
    "profile_run": "profiling",
    # the MultiModalProfiler's per-item max-token count (multimodal/profiling.py _get_mm_max_tokens, under
    # get_mm_max_contiguous_tokens / get_mm_max_tokens), asked for only through the MULTIMODAL registry's
    # get_max_tokens_per_item_by_modality ("directly used only in V1 for profiling the memory usage of a model"):
    # the model runner's profiling and the scheduler's encoder budget, both built once at the engine's start-up
    "_get_mm_max_tokens": "profiling",
    "get_mm_max_contiguous_tokens": "profiling",
    "determine_num_available_blocks": "profiling",
    "determine_available_memory": "profiling",
    # V1's CUDA-graph memory estimate (v1/worker/gpu_model_runner.py, 2026: gpu_worker's determine_available_memory
    # calls ``self.model_runner.profile_cudagraph_memory()``, which first builds a throw-away KV cache,
    # ``_init_minimal_kv_cache_for_profiling`` → ``initialize_kv_cache(minimal_config, is_profiling=True)``): both run
    # only in the start-up's memory profiling, before the real KV cache exists
    "profile_cudagraph_memory": "profiling",
    "_init_minimal_kv_cache_for_profiling": "profiling",
    "initialize_cache": "kv_cache_init",
    KV_CHECK: "kv_cache_init",
    "initialize_from_config": "kv_cache_init",
    "_initialize_kv_caches": "kv_cache_init",
    # V0 worker.py's initialize_cache → _init_cache_engine → CacheEngine → cache_engine.py's _allocate_kv_cache
    # (0.4 → 0.10): the KV cache's own tensors, allocated once at start-up (a paste cut under initialize_cache)
    "_init_cache_engine": "kv_cache_init",
    "_allocate_kv_cache": "kv_cache_init",
    "capture_model": "cuda_graph_capture",
    "ncclCommInitRank": "startup",
    "init_model_parallel_group": "startup",
    "initialize_model_parallel": "startup",
    "init_distributed_environment": "startup",
    "init_worker_distributed_environment": "startup",
    "init_device": "startup",
    "from_engine_args": "startup",
    # V1's AsyncLLM built by its classmethod (v1/engine/async_llm.py 0.8 → 0.32), as a caller's source line calls
    # it: the client's construction, which launches the engine cores and waits for them (other classes' own
    # from_vllm_config are not meant)
    "AsyncLLM.from_vllm_config": "startup",
    # V0's engine process building its MQLLMEngine (engine/multiprocessing/engine.py run_mp_engine 0.8 → 0.10:
    # "engine = MQLLMEngine.from_vllm_config(", before "engine.start()"; 0.6 and 0.7 call from_engine_args, named
    # above): a raise under it is a failed build, which run_mp_engine logs (``MQ_BUILD_CALLS``)
    "MQLLMEngine.from_vllm_config": "startup",
    # V1's engine core process building its engine (core.py run_engine_core 0.8 → 0.32: "engine_core =
    # EngineCoreProc(*args, …)", DPEngineCoreProc's under data parallelism), as the source line under
    # run_engine_core's frame calls it: a raise under it leaves engine_core None, which run_engine_core logs as
    # "EngineCore failed to start." (the busy loop runs only after it)
    "EngineCoreProc": "startup",
    "DPEngineCoreProc": "startup",
    "_init_engine": "startup",
    # the executor's construction: ExecutorBase.__init__ → _init_executor → (Ray) _init_workers_ray, called
    # only there (V0 executor_base.py 0.4 → 0.10, V1 EngineCore.__init__'s executor_class(vllm_config))
    "_init_executor": "startup",
    "_init_workers_ray": "startup",
    # V1's front end launching the engine cores and waiting for their ready message (v1/engine/utils.py
    # launch_core_engines → wait_for_engine_startup 0.10 → 0.32, core_client.py _wait_for_engine_startup 0.8):
    # every raise in it is a start-up failure ("Engine core initialization failed", a bad handshake)
    "launch_core_engines": "startup",
    "wait_for_engine_startup": "startup",
    "_wait_for_engine_startup": "startup",
    # vllm-omni's AsyncOmniEngine building its stages (vllm_omni/engine/async_omni_engine.py: the orchestrator
    # thread's _run_orchestrator → _initialize_stages → stage_runtime.py StageRuntime.initialize →
    # _initialize_stage_replicas → _initialize_replica → _initialize_llm_replica), run once before the omni
    # engine serves: a traceback through them, even cut, is its failed start-up
    **dict.fromkeys(OMNI_STAGE_INIT, "startup"),
    **dict.fromkeys(CLIENT_START, "startup"),
}
#: vLLM's functions that run only once its engine is built → the phase (the offline generate loop; V0's
#: distributed executors' driver step, called only by their ``execute_model`` and by
#: ``stop_remote_worker_execution_loop``, both from ``LLMEngine.step`` / ``step_async``, 0.4 → 0.10)
SERVING_FRAMES: dict[str, str] = {
    "_run_engine": "serving",
    "run_engine_loop": "serving",
    "engine_step": "serving",
    "_driver_execute_model": "serving",
    "_driver_execute_model_async": "serving",
    # V1's EngineCore busy loop (core.py 0.8 → 0.32): run_engine_core calls it only once EngineCoreProc(...) is
    # built and its start-up handshake is done, so a failure under it is while serving
    "run_busy_loop": "serving",
    "_process_engine_step": "serving",
}
#: vLLM's functions that run both while the engine is built and while it serves → "unknown": V1's
#: ``collective_rpc`` (the start-up's ``determine_available_memory``, ``initialize_from_config`` and
#: ``compile_or_warm_up_model``, and every step's ``execute_model``, 0.8 → 0.32) and V0's ``_run_workers``
#: (``init_device``, ``load_model``, the KV sizing, and the step's ``start_worker_execution_loop``, 0.4 → 0.10).
#: Such a frame reports the failure only when no other frame names the phase, and never guesses one.
SHARED_FRAMES: dict[str, str] = {"collective_rpc": "unknown", "_run_workers": "unknown"}
