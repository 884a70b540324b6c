"""Startup facts: what a server's first log lines say about its version, engine, launch flags,
memory and KV-cache capacity.

One table, read top to bottom for every message that is no stats line: each row is the literal(s)
that must occur, the pattern, and the reader producing ``(name, value)`` facts. Besides facts, a
reader may yield two markers the parser acts on: NEW_RUN (a server (re)start: earlier shutdown
and error context no longer applies) and STARTING (an engine is initialising: a shutdown seen
before is over); an ``("engine", "v0" | "v1")`` fact is emitted only when the engine changes.
"""

from __future__ import annotations

import re
from typing import Any

from observe.flags import cmdline
from observe.parse import banner
from observe.parse.envelope import Ctx
from observe.parse.flags import flags_from_args, flags_from_command
from observe.parse.reprs import parse_dict_repr, parse_kv_repr
from observe.parse.rules import Rule, fire, gate

Fact = tuple[str, Any]
NEW_RUN: Fact = ("<new run>", None)
STARTING: Fact = ("<engine starting>", None)
#: the start-up steps between loading the weights and sizing the KV cache ("Starting to load model", "Loading model
#: weights took" / "Model loading took"), and the facts that say the cache is sized (V0 "# GPU blocks", V1's KV lines)
LOADING_PHASES = frozenset({"loading_weights", "profiling"})
KV_SIZED = frozenset(
    {"num_gpu_blocks", "kv_cache_tokens", "available_kv_gib", "kv_cache_size_gib", "max_concurrency"}
)

_A = re.ASCII


def _int(s: str) -> int:
    return int(s.replace(",", ""))


def _version(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    return [("version", m.group("v")), NEW_RUN]


def _engine_init(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    eng = m.group("eng")
    if eng:
        engine = eng.lower()
    elif ctx.logger_file == "core.py":
        engine = "v1"  # early V1 (v1/engine/core.py) said "an LLM engine"
    else:
        engine = "v0"
    return [STARTING, ("engine", engine), *banner.config_facts(msg)]


def _parsed(flags: dict[str, Any]) -> list[Fact]:
    """The flags vLLM printed among its own parsed arguments, and their names as the release's (it has them)."""
    return [("flags", flags), ("release_flags", tuple(sorted(flags)))] if flags else []


def _non_default_args(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    d = parse_dict_repr(msg[m.end() :])
    return [NEW_RUN, *_parsed(flags_from_args(d))] if d else [NEW_RUN]


def _namespace_args(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    d = parse_kv_repr(msg[m.end() :])
    return _parsed(flags_from_args(d, explicit=False)) if d else []


def _blocks(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    out: list[Fact] = []
    if m.group("cpu") is not None or m.group("dev") != "CPU" or msg.strip().startswith("# CPU blocks"):
        out.append(("num_gpu_blocks", int(m.group("n"))))
    if m.group("cpu") is not None:
        out.append(("num_cpu_blocks", int(m.group("cpu"))))
    return out


def _concurrency(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    return [("max_concurrency", float(m.group("x"))), ("max_concurrency_len", _int(m.group("len")))]


def _weights(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    out: list[Fact] = [("weights_gib", float(m.group("g")))]
    if m.group("s"):
        out.append(("model_load_seconds", float(m.group("s"))))
    return out


def _kv_tokens(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    out: list[Fact] = [("kv_cache_tokens", _int(m.group("n")))]
    if m.group("host"):
        out.append(("kv_cache_host_pool", True))  # 0.33 HiSparse: the tokens count a host pool too
    return out


def _graph_took(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    return [("cuda_graph_gib", float(m.group("g"))), ("cuda_graph_capture_seconds", float(m.group("s")))]


def _graph_pool(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    return [("cuda_graph_gib", float(m.group("a"))), ("cuda_graph_estimated_gib", float(m.group("e")))]


def _auto_fit(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    full = m.group("f")
    before, after = (int(full), int(full)) if full else (int(m.group("a")), int(m.group("b")))
    g = m.group("g") or m.group("g0")  # 0.30/0.31's full-fit form gives no size
    return [
        ("auto_fit_max_model_len", {"from": before, "to": after, "kv_gib": None if g is None else float(g)}),
        ("max_model_len", after),
    ]


def _active_seqs(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    return [("max_num_active_seqs", {"from": int(m.group("a")), "to": int(m.group("b"))})]


def _iteration(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    d: dict[str, Any] = {
        "index": int(m.group("i")),
        "context_requests": int(m.group("cr")),
        "context_tokens": int(m.group("ct")),
        "generation_requests": int(m.group("gr")),
        "generation_tokens": int(m.group("gt")),
        "elapsed_ms": float(m.group("ms")),
        "kv_usage_pct": float(m.group("kv")),
    }
    if m.group("dummy"):
        d["dummy"] = True
    return [("iteration", d)]


def _profile_kv(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    key, unit = m.group("key"), m.group("u")
    if key == "gpu_memory_utilization":
        if unit in (".", ",", " ") or m.end() == len(msg):
            return [("gpu_memory_utilization", float(m.group("v")))]
    elif unit.startswith("Gi"):
        name = "total_gpu_memory_gib" if key == "total_gpu_memory" else "kv_cache_size_gib"
        return [(name, float(m.group("v")))]
    return []


def _profile_total(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    return [("total_gpu_memory_gib", float(m.group("t"))), ("gpu_memory_utilization", float(m.group("u")))]


def _command(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    flags, env = flags_from_command(m.group("args"), m.group("env"))
    out: list[Fact] = [("flags", flags)] if flags else []
    if "vllm.entrypoints" in m.group(0)[: m.start("args")]:
        out.append(("launcher", "api_server"))  # launched as a module, not `vllm serve`
    mem = cmdline.memory_env(env)
    if mem:
        out.append(("memory_env", mem))  # VLLM_CPU_KVCACHE_SPACE=40 and its kin, named where they show
    if env.get("VLLM_USE_V1") in ("0", "1"):
        out.append(("engine", "v1" if env["VLLM_USE_V1"] == "1" else "v0"))
    return out


# the flags vLLM's own warnings and errors tell the user to change (their config / CLI spellings)
_HINT_FLAGS = (
    "gpu_memory_utilization|max_model_len|max_num_batched_tokens|max_num_seqs|enforce_eager|"
    "num_speculative_tokens|tensor_parallel_size|pipeline_parallel_size|swap_space|kv_cache_dtype|"
    "block_size|cpu_offload_gb|max_seq_len_to_capture|num_gpu_blocks_override|enable_chunked_prefill|"
    "kv_cache_memory_bytes|max_num_partial_prefills|long_prefill_token_threshold|max_cudagraph_capture_size"
)
_HINT_FLAG_NAMES = tuple(_HINT_FLAGS.split("|"))
_DIRECTION = {
    "increas": "up",
    "decreas": "down",
    "reduc": "down",
    "lower": "down",
    "rais": "up",
    "set": "set",
}
# each verb as it may begin a hint ("increas", "Increas", …): where a match can start
_VERB_STEMS = tuple(v for verb in _DIRECTION for v in (verb, verb.capitalize()))
_HINT_RE = re.compile(
    r"(?P<verb>"
    + "|".join(f"[{v[0].upper()}{v[0]}]{v[1:]}" for v in _DIRECTION)
    + r")(?:e|es|ed|ing|ting)?\s+(?:the\s+)?"
    r"(?:value\s+of\s+)?[`'\"]?(?:--)?(?P<flag>" + _HINT_FLAGS.replace("_", "[_-]") + r")\b[`'\"]?"
    r"(?:\s*(?:to|=)\s*(?:at\s+least\s+|at\s+most\s+)?(?P<val>\d+(?:\.\d+)?|True|False))?",
    _A,
)


def _hint_matches(msg: str) -> list[re.Match[str]]:
    """What ``_HINT_RE.finditer(msg)`` gives, trying the pattern only where a verb stem begins (found
    by ``str.find``), not at every position of a long line."""
    starts = []
    for v in _VERB_STEMS:
        i = msg.find(v)
        while i >= 0:
            starts.append(i)
            i = msg.find(v, i + 1)
    out = []
    end = 0
    for i in sorted(starts):
        if i >= end and (h := _HINT_RE.match(msg, i)) is not None:
            out.append(h)
            end = h.end()
    return out


def _hints(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    """Hints vLLM prints itself ("Try increasing `gpu_memory_utilization` or decreasing `max_model_len`",
    "Please increase max_num_batched_tokens", "set max_model_len to 8192"): one ("hint", {flag,
    direction, value, text}) fact per flag named; value is the number the hint gives, else None.
    A clause "or decreasing `max_model_len`" after a first verb is its own hint."""
    out: list[Fact] = []
    folded = msg.replace("-", "_")
    if not any(f in folded for f in _HINT_FLAG_NAMES):  # every hint names one (a cheap test first)
        return out
    seen: set[str] = set()
    for h in _hint_matches(msg):
        flag = "--" + h.group("flag").replace("_", "-")
        if flag in seen:
            continue
        seen.add(flag)
        val = h.group("val")
        value: Any = None
        if val is not None:
            value = {"True": True, "False": False}.get(
                val, float(val) if "." in val else int(val) if val.isdigit() else val
            )
        start = max(0, h.start() - 80)
        out.append(
            (
                "hint",
                {
                    "flag": flag,
                    "direction": _DIRECTION[h.group("verb").lower()],
                    "value": value,
                    "text": msg[start : h.end() + 40].strip()[:200],
                },
            )
        )
    return out


#: traceback frames and startup lines that say which phase an engine was in (what an OOM is read against;
#: parse.ipython reads a traceback printed elsewhere against it too)
OOM_PHASE_FRAMES = {
    "load_model": "loading_weights",
    "load_weights": "loading_weights",
    "_load_model": "loading_weights",
    "initialize_model": "loading_weights",
    "create_weights": "loading_weights",  # a layer allocating its parameters (vLLM 0.2 → 0.32)
    "process_weights_after_loading": "loading_weights",
    "profile_run": "profiling",
    "determine_available_memory": "profiling",
    "determine_num_available_blocks": "profiling",
    "capture_model": "cuda_graph_capture",
    "_capture_cudagraphs": "cuda_graph_capture",
    "capture": "cuda_graph_capture",
    # torch's CUDA-graph context (torch/cuda/graphs.py: ``torch.cuda.graph.__enter__`` / ``__exit__``), which vLLM
    # enters only to capture (V0 model_runner, V1 compilation/backends.py and cuda_graph.py, 0.4 → 0.32)
    "capture_begin": "cuda_graph_capture",
    "capture_end": "cuda_graph_capture",
    "_warmup_sampler": "warmup",
    "_dummy_sampler_run": "sampler_warmup",  # V1: max_num_seqs rows of logits through the sampler
    "compile_or_warm_up_model": "warmup",
    "_initialize_kv_caches": "kv_cache_init",
    "initialize_cache": "kv_cache_init",
    "initialize_from_config": "kv_cache_init",
}


def _phase_frame(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    ph = OOM_PHASE_FRAMES.get(m.group("fn"))
    return [("phase", ph)] if ph else []


def _weights_progress(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    """A shard bar midway (some shards loaded, not all): the weights were loading when it was printed."""
    k, n = int(m.group("k")), int(m.group("n"))
    return [("weights_progress", (k, n))] if 0 < k < n else []


def _capture_progress(m: re.Match[str], msg: str, ctx: Ctx) -> list[Fact]:
    """A CUDA-graph capture bar midway (some sizes captured, not all): the graphs were being captured."""
    return [("phase", "cuda_graph_capture")] if int(m.group("k")) < int(m.group("n")) else []


def _fact(name: str, value: Any) -> Any:
    return lambda m, msg, ctx: [(name, value)]


def _phase(name: str) -> Any:
    return _fact("phase", name)


def _one(name: str, group: str, conv: Any = float) -> Any:
    """A reader of one fact from one named group."""
    return lambda m, msg, ctx: [(name, conv(m.group(group)))]


def _rule(name: str, literal: str, pattern: str, read: Any, flags: int = _A, **kw: Any) -> Rule[list[Fact]]:
    return Rule(name, (literal,), re.compile(pattern, flags), read, **kw)


RULES: tuple[Rule[list[Fact]], ...] = (
    # the server version: the first form that matches counts
    _rule(
        "version-api-server",
        "vLLM API server version",
        r"vLLM API server version (?P<v>[\w.+-]+)",
        _version,
        group="version",
    ),
    _rule(
        "version-server",
        "vLLM server version",
        r"vLLM server version (?P<v>[\w.+-]+?)(?:,|\s|$)",
        _version,
        group="version",
    ),
    _rule(
        "version-engine",
        "LLM engine (v",
        r"Initializing an? (?:(?P<eng>V[01]) )?LLM engine \(v(?P<v>[\w.+-]+)\)",
        _version,
        group="version",
    ),
    # the startup logo (2026 →); block characters, so not ASCII-only
    _rule(
        "version-logo",
        "version ",
        r"[\u2580-\u259f]\s+version (?P<v>\d[\w.+-]*)\s*$",
        _version,
        0,
        group="version",
    ),
    _rule("engine-init", "LLM engine", r"Initializing an? (?:(?P<eng>V[01]) )?LLM engine\b", _engine_init),
    # launch flags: the dict of non-default args (newer vLLM), else the argparse Namespace
    _rule(
        "non-default-args",
        "non-default args: ",
        r"non-default args: ",
        _non_default_args,
        group="args",
        claims=True,
    ),
    _rule("namespace-args", "args: Namespace(", r"(?:^| )args: Namespace\(", _namespace_args, group="args"),
    _rule(
        "blocks",
        " blocks: ",
        r"# (?P<dev>\w+) blocks: (?P<n>-?\d+)(?:, # CPU blocks: (?P<cpu>\d+))?",
        _blocks,
    ),
    _rule(
        "kv-cache-size",
        " KV cache size: ",
        r"(?P<dev>[A-Za-z]+)(?P<host> \+ host)? KV cache size: (?P<n>\d[\d,]*) tokens",
        _kv_tokens,
    ),
    _rule(
        "available-kv",
        "Available KV cache memory: ",
        r"Available KV cache memory: (?P<g>-?\d+(?:\.\d+)?) GiB",  # negative on a rank others crowd
        _one("available_kv_gib", "g"),
        group="available-kv",
    ),
    _rule(
        "cpu-kv-set",
        " GiB for KV cache",
        r"(?:Explicitly|Auto) set \((?P<g>\d+(?:\.\d+)?)/(?P<t>\d+(?:\.\d+)?)\) GiB for KV cache",
        _one("available_kv_gib", "g"),
        group="available-kv",
    ),
    # 0.34's extensible KV cache, sized after warmup (v1/worker/extensible_kv_cache.py @ v0.34.0: the
    # budget at 693, the size the cache was extended to at 536); the blocks are the final capacity
    _rule(
        "kv-after-warmup",
        "KV cache blocks (",
        r"; (?P<n>\d+) KV cache blocks \((?P<g>\d+(?:\.\d+)?) GiB\) fit within the requested",
        _one("available_kv_gib", "g"),
        group="available-kv",
    ),
    _rule(
        "kv-extended",
        "Extended KV cache to ",
        r"Extended KV cache to (?P<n>\d+) blocks \((?P<g>\d+(?:\.\d+)?) GiB\)",
        lambda m, msg, ctx: [("num_gpu_blocks", int(m.group("n"))), ("kv_extended_gib", float(m.group("g")))],
    ),
    # the block size the attention backend(s) or a hybrid model's pages call for, when it is not the
    # default (platforms/interface.py @ v0.34.0 786 and 934 / 1120; 0.32 prints the same)
    _rule(
        "block-size-set",
        " block size to ",
        r"Setting (?:kv cache|attention) block size to (?P<n>\d+)\b",
        _one("block_size", "n", int),
    ),
    _rule(
        "profile-kv-3line",
        "reserved for KV Cache is ",
        r"the rest of the memory reserved for KV Cache is (?P<g>-?\d+(?:\.\d+)?)GiB",
        _one("kv_cache_size_gib", "g"),
    ),
    _rule(
        "max-concurrency",
        "Maximum concurrency for ",
        r"Maximum concurrency for (?P<len>\d[\d,]*) tokens per request: (?P<x>\d+(?:\.\d+)?)x",
        _concurrency,
    ),
    _rule(
        "weights",
        " took ",
        r"(?:Loading model weights|Model loading) took (?P<g>\d+(?:\.\d+)?) Gi?B(?: memory)?(?: and (?P<s>\d+(?:\.\d+)?) seconds)?",
        _weights,
    ),
    _rule(
        "init-engine-took",
        "init engine (profile, create kv cache, warmup model) took ",
        r"init engine \(profile, create kv cache, warmup model\) took (?P<s>\d+(?:\.\d+)?) s",
        _one("init_engine_seconds", "s"),
    ),
    # the memory profile: one "Memory profiling results: k=v, …" line, else the older 3-line form
    _rule(
        "memory-profile",
        "Memory profiling results",
        r"(?P<key>total_gpu_memory|kv_cache_size|gpu_memory_utilization)=(?P<v>\d+(?:\.\d+)?)(?P<u>GiB|Gib|,|\.|\s|$)",
        _profile_kv,
        group="profile",
        claims=True,
        every=True,
    ),
    _rule(
        "memory-profile-3line",
        "x gpu_memory_utilization (",
        r"total_gpu_memory \((?P<t>\d+(?:\.\d+)?)GiB\) x gpu_memory_utilization \((?P<u>\d+(?:\.\d+)?)\)",
        _profile_total,
        group="profile",
    ),
    _rule(
        "chunked-prefill",
        "Chunked prefill is enabled with max_num_batched_tokens=",
        r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>\d+)\.",
        _one("max_num_batched_tokens", "n", int),
    ),
    _rule(
        "blocks-override",
        "with num_gpu_blocks_override=",
        r"Overriding num_gpu_blocks=(?P<old>\d+) with num_gpu_blocks_override=(?P<new>\d+)\b",
        _one("num_gpu_blocks_override", "new", int),
    ),
    # V1's note from 0.21 (gpu_worker.py): "CUDA graph memory profiling is enabled (default since v0.21.0). The current
    # --gpu-memory-utilization=0.3000 is equivalent to …": the value in force
    _rule(
        "util-with-graph-profiling",
        "The current --gpu-memory-utilization=",
        r"The current --gpu-memory-utilization=(?P<u>[01](?:\.\d+)?) is equivalent to\b",
        _one("gpu_memory_utilization", "u"),
    ),
    _rule(
        "max-model-len",
        "Using max model len ",
        r"Using max model len (?P<n>\d+)\s*$",
        _one("max_model_len", "n", int),
    ),
    _rule("mq-engine", "MQLLMEngine", r"MQLLMEngine", lambda m, msg, ctx: [("engine", "v0")]),
    # the startup phase: a traceback frame names the function, a log line the step begun or done
    _rule(
        "phase-frame",
        'File "',
        r'^\s*File "[^"]*", line \d+, in (?P<fn>\w+)\s*$',
        _phase_frame,
        group="phase",
    ),
    _rule("phase-load-start", "Starting to load model", r"Starting to load model", _phase("loading_weights")),
    _rule("phase-loaded", "Model loading took", r"Model loading took", _phase("profiling"), group="phase"),
    _rule(
        "phase-loaded-v0", "Loading model weights took", r"Loading model weights took", _phase("profiling")
    ),
    # vLLM's weight-loading bar (model_executor/model_loader/weight_utils.py, 0.4 → 0.32: "Loading safetensors /
    # pt / fastsafetensors checkpoint shards:  3% Completed | 1/37 [...]"); one midway says the weights were
    # still loading — tqdm's stderr often lands after the EngineCore's OOM record (diagnosis reads it back)
    _rule(
        "weights-progress",
        "checkpoint shards:",
        r"Loading \w+ checkpoint shards:\s+\d+% Completed \| (?P<k>\d+)/(?P<n>\d+) ",
        _weights_progress,
    ),
    _rule("phase-capture", "Capturing cudagraphs", r"Capturing cudagraphs", _phase("cuda_graph_capture")),
    _rule(
        "phase-capture-v0",
        "Capturing the model for CUDA graphs",
        r"Capturing the model for CUDA graphs",
        _phase("cuda_graph_capture"),
    ),
    # V1's capture bar (gpu_model_runner.py _capture_cudagraphs, 0.11 → 0.32: tqdm "Capturing CUDA graphs (decode |
    # mixed prefill-decode, <mode>):  53%|…| 27/51 […]"); one midway says the graphs were being captured
    _rule(
        "phase-capture-bar",
        "Capturing CUDA graphs (",
        r"Capturing CUDA graphs \((?:decode|mixed prefill-decode), \w+\):\s+\d+%\|.*?\| (?P<k>\d+)/(?P<n>\d+) ",
        _capture_progress,
    ),
    _rule("phase-captured", "Graph capturing finished", r"Graph capturing finished", _phase("warmup")),
    # the API server up (openai/api_server.py 0.6 → 0.32, "Starting vLLM API server [N ]on …"): the engine built
    _rule("server-ready", "Starting vLLM API server", r"Starting vLLM API server", _fact("ready", True)),
    # V1's _dummy_sampler_run: `self.sampler(logits=logits, sampling_metadata=dummy_metadata)` (gpu_model_runner)
    _rule("phase-sampler", "sampling_metadata=dummy_metadata", r"dummy_metadata", _phase("sampler_warmup")),
    # CUDA-graph memory (0.33): the profiler's estimate, capture's own account, and the two compared
    _rule(
        "cuda-graph-took",
        "Graph capturing finished",
        r"Graph capturing finished in (?P<s>\d+) secs?, took (?P<g>-?\d+(?:\.\d+)?) GiB",
        _graph_took,
    ),
    _rule(
        "cuda-graph-estimate",
        "Estimated CUDA graph memory: ",
        r"Estimated CUDA graph memory: (?P<g>\d+(?:\.\d+)?) GiB total",
        _one("cuda_graph_estimated_gib", "g"),
    ),
    _rule(
        "cuda-graph-pool",
        "CUDA graph pool memory: ",
        r"CUDA graph pool memory: (?P<a>-?\d+(?:\.\d+)?) GiB \(actual\), (?P<e>\d+(?:\.\d+)?) GiB \(estimated\)",
        _graph_pool,
    ),
    # max_model_len fitted to the KV cache (0.31+ ``--max-model-len auto``): the success forms
    _rule(
        "auto-fit-reduced",
        "Auto-fit max_model_len: ",
        r"Auto-fit max_model_len: (?:reduced from (?P<a>\d+) to (?P<b>\d+)|full model context length (?P<f>\d+) fits)"
        r" (?:to fit )?in available (?:KV cache memory \((?P<g>\d+(?:\.\d+)?) GiB"  # 0.32+
        r"|GPU memory(?: \((?P<g0>\d+(?:\.\d+)?) GiB available for KV cache\))?)",  # 0.30, 0.31
        _auto_fit,
    ),
    # the scheduler's prefill cadence (0.33 ``--prefill-schedule-interval``) and a draft pass's cap
    _rule(
        "prefill-cadence",
        "Prefill cadence: applying prefill_schedule_interval=",
        r"Prefill cadence: applying prefill_schedule_interval=(?P<n>\d+)",
        _one("prefill_schedule_interval", "n", int),
    ),
    _rule(
        "active-seqs-override",
        "Overriding max_num_active_seqs from ",
        r"max_num_batched_tokens=(?P<t>\d+)\. Overriding max_num_active_seqs from (?P<a>\d+) to (?P<b>\d+)",
        _active_seqs,
    ),
    # ``--enable-logging-iteration-details``: one line a step (engine idle steps are not logged)
    _rule(
        "iteration",
        "Iteration(",
        r"Iteration\((?P<i>\d+)\): (?P<cr>\d+) context requests, (?P<ct>\d+) context tokens, "
        r"(?P<gr>\d+) generation requests, (?P<gt>\d+) generation tokens, "
        r"iteration elapsed time: (?P<ms>\d+(?:\.\d+)?) ms(?P<dummy> \(dummy\))?, "
        r"(?P<dev>[A-Za-z]+) KV cache usage: (?P<kv>\d+(?:\.\d+)?)%",
        _iteration,
    ),
    # hints vLLM prints itself: a flag to raise, lower or set (and the value, when it gives one)
    _rule("hint-increase", "ncreas", r"ncreas", _hints, group="hint", when=lambda ctx: ctx.level != "DEBUG"),
    _rule("hint-decrease", "ecreas", r"ecreas", _hints, group="hint", when=lambda ctx: ctx.level != "DEBUG"),
    _rule("hint-reduce", "educ", r"educ", _hints, group="hint", when=lambda ctx: ctx.level != "DEBUG"),
    _rule("hint-set", "set ", r"set ", _hints, group="hint", when=lambda ctx: ctx.level != "DEBUG"),
    # the launch command pasted above a log: "[$ ][ENV=1 ]vllm serve MODEL --flag v …" or the module form
    _rule(
        "command",
        "vllm",
        r"^\s*(?:[$#>]\s+)?(?P<env>(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)"
        r"(?:\S*/)?(?:vllm\s+serve\b|python[\d.]*\s+(?:-[A-Za-z]+\s+)*-m\s+vllm\.entrypoints\.(?:openai\.api_server|api_server|cli\.main\s+serve)\b)"
        r"(?P<args>.*)$",
        _command,
        when=lambda ctx: ctx.level is None,
    ),
)


_GATE = gate(RULES)


def startup_facts(msg: str, ctx: Ctx) -> list[Fact]:
    """The facts and markers one message gives, in table order."""
    return [f for facts in fire(RULES, msg, ctx, gate=_GATE) for f in facts]
