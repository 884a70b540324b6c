"""The error grammar: vLLM's failure messages → (kind, details) for an EngineError.

One table, tried top to bottom; the first row that fires names the failure (one per message). Each row is the
literal(s) that must occur, the pattern, and a reader returning a :class:`Failure` (or None: not this failure after
all, try the next row). A traceback repeats its failure on every re-logged line and the parent process re-raises it,
so a :class:`DedupWindow` reports each failure of the deduplicated kinds once per window of lines.
"""

from __future__ import annotations

import re
from typing import Any

from observe.failures.kinds import FailureKind
from observe.parse import deaths, failrows, lorarank, mambacap, startonly
from observe.parse.dumpinput import failed_step
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState, phase
from observe.parse.oom import oom_details
from observe.parse.rules import Rule, fire, gate

_A = re.ASCII

# a traceback's source-code line quoting the message, not the error itself
_QUOTED_SOURCE = ("raise ", 'File "', "#", "self.", "return ")
#: failures read from the source line that raises them, when a paste is cut inside the traceback before
#: its exception line: vLLM's own `raise ValueError("No available memory for the cache blocks. "` (V0
#: worker.py raise_if_cache_size_invalid, V1 kv_cache_utils check_enough_kv_cache_memory) is the
#: traceback's innermost frame; the exception line under it, when there, is the same failure (deduplicated).
RAISED_LITERALS = ("No available memory for the cache blocks",)


# ----------------------------------------------------------------------------- out of memory
def _oom(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    body = msg.lstrip()
    if not (
        "OutOfMemoryError" in msg
        or "Tried to allocate" in msg
        or "occurred when" in msg
        or ctx.level in ("ERROR", "CRITICAL")
        or body.startswith(("RuntimeError", "torch.", "CUDA Error: "))
    ):
        return None  # "out of memory" in passing (a hint, a log of settings), not the error
    d = oom_details(m.groupdict().get("dev"), msg)
    return Failure(
        FailureKind.OOM, d, True, (FailureKind.OOM, d.get("gpu"), d.get("tried_to_allocate"), d.get("free"))
    )


# ----------------------------------------------------------------------------- the other failures
_KV_LEN_RE = re.compile(r"max seq len \((?P<v>\d+)\)", _A)
_KV_NEED_RE = re.compile(r"\((?P<v>\d+(?:\.\d+)?) Gi?B KV cache is needed", _A)
_KV_AVAIL_RE = re.compile(r"available KV cache memory \((?P<v>-?\d+(?:\.\d+)?) Gi?B\)", _A)
_KV_EST_RE = re.compile(r"estimated maximum model length is (?P<v>\d+)\b", _A)


def _kv_needed(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """Every V1 form of "KV cache too small for one request" (0.7 "models's" → 0.32 "model's", with
    or without the estimated length and the docs link), and any piece of it: a paste cut short or a
    traceback wrapped over lines still gives the numbers it holds (the missing ones stay None)."""

    def num(rx: re.Pattern[str], conv: Any) -> Any:
        f = rx.search(msg)
        return None if f is None else conv(f.group("v"))

    d = {
        "max_model_len": num(_KV_LEN_RE, int),
        "kv_needed_gib": num(_KV_NEED_RE, float),
        "kv_available_gib": num(_KV_AVAIL_RE, float),
        "estimated_max_model_len": num(_KV_EST_RE, int),
    }
    if all(v is None for v in d.values()):
        return None
    whole = d["max_model_len"] is not None and d["kv_needed_gib"] is not None
    key = ("kvneed", d["max_model_len"], d["kv_needed_gib"]) if whole else None  # a piece: never merged away
    return Failure(FailureKind.KV_NEEDED_EXCEEDS_AVAILABLE, d, True, key)


_V0_KV_RE = re.compile(r"stored in KV cache \((?P<v>\d+)\)", _A)


def _max_seq_kv(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """V0 (0.2 → 0.10): "The model's max seq len (N) is larger than the maximum number of tokens that
    can be stored in KV cache (K)"; K is missing from a line cut before it."""
    kv = _V0_KV_RE.search(msg, m.end())
    d = {"max_seq_len": int(m.group("len")), "kv_tokens": int(kv.group("v")) if kv else None}
    return Failure(FailureKind.MAX_SEQ_LEN_EXCEEDS_KV, d, True, ("maxseq", d["max_seq_len"], d["kv_tokens"]))


def _no_memory(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    return Failure(FailureKind.NO_AVAILABLE_MEMORY, {}, True, ("noavail",))


_BLOCKS_RE = re.compile(r"# (?P<dev>\w+) blocks: (?P<n>-?\d+)", _A)


def _no_blocks(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """V0's start-up count "# GPU blocks: 0, # CPU blocks: 256" (-1 in 0.1.x): nothing was left for the KV
    cache. vLLM raises "No available memory for the cache blocks" next (0.2 →), the same failure."""
    n = int(m.group("n"))
    if n > 0:
        return None
    return Failure(FailureKind.NO_AVAILABLE_MEMORY, {"gpu_blocks": n}, True, ("noavail",))


def _no_memory_auto_fit(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    return Failure(FailureKind.NO_AVAILABLE_MEMORY, {"form": "auto_fit_max_model_len"}, True, ("noavail",))


def _free_memory(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """V1's worker refusing to start (gpu_worker.py init_device, 0.8 → 0.32: "Free memory on device [dev] (F/T GiB)
    on startup is less than desired GPU memory utilization (U, R GiB). Decrease …"); a line hard-wrapped after "on
    startup is [less]" still holds the device's figures (the utilization and its GiB, on the next line, stay None)."""
    util, req = m.group("util"), m.group("req")
    d = {
        "device": m.group("dev"),
        "free_gib": float(m.group("free")),
        "total_gib": float(m.group("total")),
        "gpu_memory_utilization": float(util) if util else None,
        "requested_gib": float(req) if req else None,
    }
    return Failure(FailureKind.FREE_MEMORY_BELOW_UTILIZATION, d, True, ("freemem", d["free_gib"]))


def _max_position(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    d = {
        "max_model_len": int(m.group("len")),
        "derived_max_model_len": int(float(m.group("derived"))),
        "derived_from": m.group("src"),
    }
    return Failure(FailureKind.MAX_POSITION_EXCEEDED, d, True, ("maxpos", d["max_model_len"]))


def _prompt_limit(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    d: dict[str, Any] = {
        "prompt_tokens": int(m.group("n")),
        "limit": int(m.group("lim")) if m.group("lim") else None,
    }
    if m.group("lim") is None:
        d["reason"] = "block_manager_capacity"
    return Failure(FailureKind.PROMPT_TOO_LONG, d, False, None)


def _context_length(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The OpenAI server's "maximum context length is N tokens. However, you requested M tokens" and the renderer's
    (2026 →) "However, your prompt contains [at least ]M input tokens" (0.22: "you requested K output tokens and …")."""
    n = m.group("n") or m.group("n2") or m.group("n3") or m.group("n4")
    if n is None:
        return None
    return Failure(
        FailureKind.PROMPT_TOO_LONG, {"prompt_tokens": int(n), "limit": int(m.group("lim"))}, False, None
    )


def _batched_below_len(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    d = {
        "flag": "--max-num-batched-tokens",
        "max_num_batched_tokens": int(m.group("b")),
        "max_model_len": int(m.group("len")),
        "source": "config",
    }
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "batched", d["max_num_batched_tokens"]))


def _quant_capability(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """vLLM's capability check of a quantization method (0.2 model_loader.py → 0.10 config/__init__.py →
    0.32 config/vllm.py, one wording): the GPU is too old for it; no launch flag lowers the minimum."""
    d = {"source": "config", "reason": "gpu_capability", "text": m.group(0), "quantization": m.group("q")}
    d.update(min_capability=int(m.group("min")), capability=int(m.group("cur")))
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "quant-capability", d["quantization"]))


def bf16_refusal(text: str, capability: int | None, **extra: Any) -> Failure:
    """vLLM's bfloat16 check (0.2 config.py → 0.4-0.10 worker.py, V1 gpu_worker.py → 0.32 platforms/cuda.py, one
    wording): the GPU (``capability`` ×10; None: none, or cut off) is below 8.0; ``--dtype half`` is the lever."""
    d: dict[str, Any] = {"source": "config", "reason": "gpu_capability", "text": text, "dtype": "bfloat16"}
    d.update(min_capability=80, capability=capability, **extra)
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "bf16-capability", capability))


def _bf16_capability(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    return bf16_refusal(m.group(0), int(m["maj"]) * 10 + int(m["mi"]) if m["maj"] else None)


_ARG_FLAG_RE = re.compile(r"argument (?P<flag>--[\w-]+)(?:/[\w-]+)*: (?P<why>.*)$", _A)
_UNRECOGNIZED_RE = re.compile(r"unrecognized arguments: (?P<args>.*)$", _A)
_REQUIRED_RE = re.compile(r"the following arguments are required: (?P<args>.*)$", _A)


def _argparse(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """argparse's "prog: error: …": the flag it names, and why (invalid value / choice, unknown flag)."""
    text = m.group("text").strip()
    d: dict[str, Any] = {"source": "argparse", "text": text[:300]}
    a = _ARG_FLAG_RE.search(text)
    u = _UNRECOGNIZED_RE.search(text)
    r = _REQUIRED_RE.search(text)
    if a is not None:
        d["flag"] = a.group("flag")
        v = re.search(r"(?:invalid \w+ value|invalid choice): '(?P<v>[^']*)'", a.group("why"), _A)
        if v is not None:
            d["value"] = v.group("v")
    elif u is not None:
        d["flag"] = u.group("args").split()[0] if u.group("args").split() else None
        d["reason"] = "unrecognized"
    elif r is not None:
        d["reason"] = "required"
        d["missing"] = r.group("args")
    return Failure(FailureKind.INVALID_LAUNCH_ARGS, d, True, ("badargs", text[:120]))


def _usage(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """argparse's usage block alone: the launch was refused; which flag, only its cut "error:" line says."""
    d: dict[str, Any] = {"source": "argparse", "usage_only": True, "prog": m.group("prog")}
    return Failure(FailureKind.INVALID_LAUNCH_ARGS, d, True, ("badargs-usage", m.group("prog")))


def _pydantic(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """The header of a pydantic ValidationError; the line(s) under it say what is wrong (and are the
    fatal record: the header alone is not counted as the failure)."""
    d = {"source": "pydantic", "config_class": m.group("cls"), "errors": int(m.group("n"))}
    return Failure(FailureKind.INVALID_CONFIG, d, False, ("badcfg", "pydantic", d["config_class"]))


def _pydantic_value(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """A pydantic line "  Value error, <why> [type=value_error, …]" under its header."""
    d = {"source": "pydantic", "text": m.group("text").strip()[:300]}
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "pydantic-value", d["text"][:120]))


_EXC_RE = re.compile(
    r"^\s*(?P<type>(?:[A-Za-z_]\w*\.){0,6}[A-Z]\w*(?:Error|Exception))(?::\s?(?P<text>.*))?$", _A
)


def _exception(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """A Python exception line ("ValueError: …") no other row knows: the raw material of a crash's root
    cause (the first exception of a traceback). Not fatal by itself."""
    e = _EXC_RE.match(msg)
    if e is None:
        return None
    typ, text = e.group("type"), (e.group("text") or "").strip()
    if typ.rsplit(".", 1)[-1] in ("EngineDeadError", "EngineGenerateError"):
        return None
    d: dict[str, Any] = {"type": typ, "text": text[:300], "phase": phase(run)}
    if run.requested:
        d["requested_shutdown"] = True  # raised while stopping as asked: not a failure of the engine
    if startonly.raised(msg.strip(), run):
        d["before_serving"] = True  # failing._before_serving: wait_for_ready's raise, the executor's build
    return Failure(FailureKind.EXCEPTION, d, False, ("exc", typ, text[:120]))


# the lines of a traceback that say nothing by themselves (the exception line does)
_TRACEBACK_PIECES = _QUOTED_SOURCE + (
    "Traceback (most recent",
    "The above exception",
    "During handling",
    "^",
    "~",
)


#: a Hub look-up that start-up survives (transformers_utils/config.py's with_retry, 0.8 → 0.32): each failed try but
#: the last logs "<what>: <error>, retrying N of M" and tries again; the last logs "<what>: <error>" and raises, which
#: try_get_safetensors_metadata catches (returns None) but list_repo_files' callers do not: that one stays a failure;
#: serving_chat.py's chat_completion_full_generator (0.8.5; gone by 0.32) when neither auto tool choice nor a named tool
#: applies: it logs this at ERROR and answers the request with a plain chat completion; NIXL's _get_new_notifs: skips;
#: fa_utils.get_flash_attn_version (0.7 → 0.32): logs the unsupported FA version, its assert is caught, another backend
_SURVIVED_LOOKUP = re.compile(
    r"Error retrieving (?:safetensors: .*|file list: .*, retrying \d+ of \d+)|Error in chat_completion_full_generator"
    r" - cannot determine if tools should be extracted\. Returning a standard chat completion\."
    r"|Potentially invalid KV blocks for unrecognized request \S+ were retrieved by a decode worker\. They may have expired\."
    r"|Cannot use FA version \d+ is not supported due to .*",
    re.S,
)


#: V1's WorkerProc.worker_main (multiproc_executor.py, 0.8 → 0.32) logs this only while its ready_writer is set, i.e.
#: before the worker told the executor it was ready; after that it logs "WorkerProc failed." / "hit an exception."
_WORKER_NOT_READY = "WorkerProc failed to start"
#: an exception's repr, as V0's MQLLMEngine.start logs what its loops raised (``logger.exception(repr(e))``)
_REPR_RE = re.compile(r"[A-Za-z_][\w.]*(?:Error|Exception)\((?:'|\")")


def error_line(msg: str, run: RunState, logger_file: str | None = None) -> Failure | None:
    """An ERROR / CRITICAL record no rule knows (the catch-all's raw material). Not fatal by itself.
    None for a piece of a traceback (a cut paste starting inside one): its exception line tells; and for a
    record vLLM carries on from (``_SURVIVED_LOOKUP``: a Hub look-up's try, a tool check's fallback, NIXL's stale notice).
    logger_file: the record's own file (dumpinput.failed_step reads a cut dump record by it)."""
    if msg[:1] in (" ", "\t"):
        return None
    text = msg.strip()
    if not text or text.startswith(_TRACEBACK_PIECES) or _SURVIVED_LOOKUP.fullmatch(text):
        return None
    d: dict[str, Any] = {
        "text": text[:300],
        "phase": "serving" if failed_step(text, logger_file) else phase(run),
    }
    if run.requested:
        d["requested_shutdown"] = True
    if _REPR_RE.match(text):  # an exception's repr opening its record (failing.served_record)
        d["repr"] = True
    if (text.startswith(_WORKER_NOT_READY) and not run.stats_seen) or startonly.raised(text, run):
        d["before_serving"] = True  # failing._before_serving: the worker raised before it was ready
    return Failure(FailureKind.ERROR_LINE, d, False, ("errline", text[:120]))


def _worker(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """A worker raised: the worker and the method when the line names them, else the line's process."""
    d = {"worker": m.groupdict().get("worker") or ctx.process, "method": m.groupdict().get("method")}
    return Failure(FailureKind.WORKER_EXCEPTION, d, True, ("worker", ctx.pid, d["method"]))


def request_error() -> Failure:
    """One request's error, answered as such: never the engine's failure."""
    return Failure(FailureKind.REQUEST_ERROR, {"phase": "serving"}, False, None)


def _request_error(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    return request_error()


def _served_request(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    return (
        request_error() if run.stats_seen and not run.shutdown else None
    )  # before: the start-up's own inputs


#: the OpenAI server's handlers, whose try around rendering a request's chat template logs its exception
_SERVING_FILES = ("serving_chat.py", "serving_completion.py", "serving_engine.py", "chat_utils.py")


def _request_template(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """A jinja2 exception vLLM's server logged: only one request's chat template failed to render."""
    return _request_error(m, msg, ctx, run) if ctx.logger_file in _SERVING_FILES else None


def _prompt_length(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    d = {"prompt_tokens": int(m.group("n")), "limit": int(m.group("lim"))}
    return Failure(FailureKind.PROMPT_TOO_LONG, d, False, None)


_HANG_SHM = r"No available shared memory broadcast block found in (?P<s>\d+) second"
_HANG_OLD = r"No available block found in (?P<s>\d+) second"


def _hang(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """vLLM's hang warning: a process waited that long for the shared-memory ring (a peer hangs or is
    busy compiling). Not fatal; repeated every interval, so every one is reported."""
    d = {"seconds": int(m.group("s")), "process": ctx.process, "phase": phase(run)}
    return Failure(FailureKind.ENGINE_HANG, d, False, None)


_rule = failrows.row  # one row builder for both tables


RULES: tuple[Rule[Failure], ...] = (
    # "CUDA out of memory" (torch's OutOfMemoryError, every release), "CUDA error: out of memory"
    # (a RuntimeError from the driver, e.g. while capturing CUDA graphs), the HIP / XPU / NPU forms;
    # "CUDA Error: … at …cumem_allocator.cpp" (vLLM's sleep-mode allocator, "CUDA Error: %s at %s:%d"),
    # "CUDA driver error: out of memory" (torch's C10_CUDA_DRIVER_CHECK, c10/cuda/driver_api.h)
    _rule(
        "oom",
        "out of memory",
        r"(?P<dev>CUDA|HIP|XPU|MPS|NPU)(?: (?:driver )?[Ee]rror:)? out of memory",
        _oom,
    ),
    _rule("weights-oom", "insufficient memory to allocate the weight", None, _oom),  # 0.11 linear.py re-raise
    # V1 (0.7 →): the whole message, or the piece of it a cut paste or a wrapped traceback line holds
    _rule(
        "kv-needed-exceeds-available",
        "To serve at least one request with the model",
        r"To serve at least one request with the models?'s max seq len",
        _kv_needed,
    ),
    _rule("kv-needed-piece", "GiB KV cache is needed", r"Gi?B KV cache is needed", _kv_needed),
    _rule(
        "kv-available-piece",
        "larger than the available KV cache memory (",
        r"larger than the available KV cache memory \(",
        _kv_needed,
    ),
    _rule(
        "kv-estimated-len-piece",
        "the estimated maximum model length is ",
        r"the estimated maximum model length is \d",
        _kv_needed,
    ),
    _rule(
        "max-seq-len-exceeds-kv",
        "max seq len (",
        r"max seq len \((?P<len>\d+)\) is larger than the maximum number of tokens",
        _max_seq_kv,
    ),
    _rule("no-available-memory", "No available memory for the cache blocks", None, _no_memory),
    _rule("no-gpu-blocks", " blocks: ", _BLOCKS_RE.pattern, _no_blocks),
    _rule(
        "auto-fit-no-memory",
        "Cannot auto-fit max_model_len: not enough GPU memory",
        None,
        _no_memory_auto_fit,
    ),
    _rule(
        "free-memory-below-utilization",
        "Free memory on device",
        r"Free memory on device(?: (?P<dev>\S+))? \((?P<free>\d+(?:\.\d+)?)/(?P<total>\d+(?:\.\d+)?) GiB\) on startup is(?: less|\s*$)"
        r"(?: than desired GPU memory utilization \((?P<util>\d+(?:\.\d+)?), (?P<req>\d+(?:\.\d+)?) GiB\))?",
        _free_memory,
    ),
    _rule(
        "max-position-exceeded",
        "User-specified max_model_len",
        r"User-specified max_model_len \((?P<len>\d+)\) is greater than the derived max_model_len "
        r"\((?P<src>\w+)=(?P<derived>\d+(?:\.\d+)?)\b",
        _max_position,
    ),
    # a request's prompt over the limit; a line of that form that does not match is cut short
    _rule(
        "prompt-too-long",
        "Input prompt (",
        r"Input prompt \((?P<n>\d+) tokens\)(?: \+ lookahead slots \((?P<la>\d+)\))? is too long and exceeds "
        r"(?:limit of (?P<lim>\d+)\b|the capacity of block_manager)",
        _prompt_limit,
        claims=True,
    ),
    _rule(
        "context-length",
        "maximum context length is",
        r"maximum context length is (?P<lim>\d+) tokens\. However, (?:you requested (?P<n>\d+) tokens"
        r"|your prompt contains (?:at least )?(?P<n2>\d+) input tokens|your request has (?P<n3>\d+) input tokens"
        r"|you requested \d+ output tokens and your prompt contains (?:at least )?(?P<n4>\d+) input tokens)",
        _context_length,
        claims=True,
    ),
    # V0 llm_engine (0.6 →) and the V1 input processor (0.7 → 0.32): "The decoder prompt (length N) is
    # longer than the maximum model length of M." and (0.32) "… (length N) plus the number of requested
    # output tokens (at least 1) is longer than the maximum model length of M."
    _rule(
        "prompt-length-v1",
        "prompt (length ",
        r"prompt \(length (?P<n>\d+)\) (?:plus the number of requested output tokens \(at least 1\) )?"
        r"is longer than the maximum model length of (?P<lim>\d+)\b",
        _prompt_length,
        claims=True,
    ),
    # 0.8.3 serving_completion.py:116 / serving_chat.py:198: logger.exception, then create_error_response
    _rule("request-preprocessing", "Error in preprocessing prompt inputs", None, _request_error),
    # a tool parser's except (tool_parsers/*_tool_parser.py, 0.6 → 0.32): it logs the exception, then answers the
    # text without tool calls ("extracting") or skips that delta ("streaming"): one request's, the engine untouched
    _rule(
        "tool-call-parse",
        "tool call",
        r"^Error (?:in extracting|trying to handle streaming) tool call",
        _request_error,
    ),
    # openai_harmony (gpt-oss) failing to parse a token stream or a conversation: vLLM feeds it one request's tokens
    # or messages (the chat stream generator's harmony_parser.process, the Responses and chat renderers), so it is
    # that request's error, the engine untouched; not its vocab download at the server's start ("error downloading")
    _rule(
        "request-harmony-parse",
        "HarmonyError: ",
        r"HarmonyError: (?:Unexpected token \d+ while expecting|unexpected tokens remaining in message header|"
        r"Unknown role\b)",
        _request_error,
    ),
    # the chat template's own failure, logged by logger.exception and re-raised as a ValueError the server answers
    # with an error response (entrypoints/chat_utils.py apply_hf_chat_template 0.8.5 → 0.10, `transformers`;
    # renderers/mistral.py 0.32, `mistral_common`): one request's error, not the engine's
    _rule(
        "request-chat-template",
        " while applying chat template",
        r"An error occurred in `\w+` while applying chat template",
        _request_error,
    ),
    # the handler's except around rendering a request's chat template (serving_chat.py 0.4 → 0.5 logger.error
    # "…from request: %s", 0.6 → 0.8 logger.exception), then an error response: the message, or jinja2's exception
    # line under that handler's record (a paste cut before the message)
    _rule("request-chat-template-v0", "Error in applying chat template from request", None, _request_error),
    _rule("request-jinja", "jinja2.exceptions.", r"^jinja2\.exceptions\.\w+:", _request_template),
    # the multi-modal processor refusing an input (inputs/registry.py call_hf_processor 0.7 → 0.8, RuntimeError;
    # multimodal/processing.py 0.9 → 0.32, ValueError): once the server served, one request's input (before it, the
    # start-up's dummy inputs: left to the other rows)
    _rule("request-mm-processor", "Failed to apply ", r"Failed to apply \w+ on data=", _served_request),
    # the engine died under the API server: killed, crashed, or its worker did
    _rule("engine-core-exited", "engine core exited unexpectedly", None, deaths.crashed("mpclient_exited")),
    _rule(
        "proc-died",
        "died unexpectedly",
        r"(?:proc|process|RayWorkerProc)\s+(?P<proc>\S+?)(?: \(PID: \d+\))?,?\s+died unexpectedly"
        r"(?: \(exit code: (?P<code>-?\d+)\))?",
        deaths.proc_died,
    ),
    _rule("engine-already-dead", "is already dead, terminating server", None, deaths.crashed("already_dead")),
    _rule("engine-loop-died", "Engine loop has died", None, deaths.crashed("engine_loop_died")),
    _rule(
        "engine-process-died",
        "Engine process (pid ",
        r"Engine process \(pid (?P<pid>\d+)\) died",
        deaths.crashed("engine_process_died"),
    ),
    # vLLM's hang warning, shm_broadcast.py: 0.5 → 0.6 "No available block found in 60 second.",
    # 0.7 → "No available shared memory broadcast block found in 60 second(s). This typically happens
    # when some processes are hanging …"
    _rule("hang-shm", "No available shared memory broadcast block found", _HANG_SHM, _hang),
    _rule("hang-block", "No available block found in ", _HANG_OLD, _hang),
    # a launch vLLM rejects while validating its arguments or its config
    _rule(
        "batched-below-max-model-len",
        "is smaller than max_model_len (",
        r"max_num_batched_tokens \((?P<b>\d+)\) is smaller than max_model_len \((?P<len>\d+)\)",
        _batched_below_len,
    ),
    _rule("lora-rank", "is greater than max_lora_rank", lorarank.PATTERN, lorarank.rank_refused),
    _rule("mamba-blocks", mambacap.LITERAL, mambacap.PATTERN, mambacap.seqs_refused),
    _rule(
        "quant-capability",
        "is not supported for the current GPU. Minimum capability: ",
        r"The quantization method (?P<q>[\w-]+) is not supported for the current GPU\. Minimum capability: "
        r"(?P<min>\d+)\. Current capability: (?P<cur>\d+)\.?",
        _quant_capability,
    ),
    _rule(
        "bf16-capability",
        "Bfloat16 is only supported on GPUs",
        r"Bfloat16 is only supported on GPUs with compute capability of at least 8\.0\. Your .+? GPU (?:has compute "
        r"capability (?P<maj>\d+)\.(?P<mi>\d+)|does not have a compute capability)\.?",
        _bf16_capability,
    ),
    # PROG is one word, or "vllm <sub-command>" (the CLI's sub-parsers: "vllm serve: error: argument --X: …")
    _rule(
        "argparse-error",
        ": error: ",
        r"^\s*(?:usage: .*?)?(?:vllm [\w-]+|[\w./-]+): error: (?P<text>.+)$",
        _argparse,
    ),
    # argparse prints "usage: PROG [-h] …" (format_usage) before its "PROG: error: …" line, and otherwise only
    # for -h (then its "options:" section follows): a block a paste cuts before its error line is the refusal
    _rule("argparse-usage", "usage: ", r"^usage: (?P<prog>vllm [\w-]+|[\w./-]+) \[-h\]", _usage),
    _rule(
        "pydantic-validation",
        " validation error",
        r"(?P<n>\d+) validation errors? for (?P<cls>\w+)",
        _pydantic,
    ),
    _rule("pydantic-value-error", "Value error, ", r"^\s*Value error, (?P<text>.+)$", _pydantic_value),
    _rule(
        "worker-exception",
        "Exception in worker",
        r"Exception in worker (?P<worker>\S+) while processing method (?P<method>\w+)",
        _worker,
    ),
    # V0 worker_base.py execute_method, 0.4 → 0.10: "Error executing method X. …" (its repr, 'X', from 0.6 on)
    _rule("worker-method-error", "Error executing method ", r"method '?(?P<method>\w+)", _worker),
    _rule("worker-proc-exception", "WorkerProc hit an exception", None, _worker),
    _rule("failed-execution", "Writing input of failed execution to ", None, failrows.step_raised),
    _rule("engine-dead", "EngineDeadError", None, deaths.engine_dead),
    # AsyncEngineDeadError's own text (V0 start_background_loop, 0.2 → 0.10), quoted alone by a host's logger
    _rule("background-loop-errored", "Background loop has errored already", None, deaths.engine_dead),
    # V1 EngineDeadError's own text (v1/engine/exceptions.py, 0.8+), quoted alone by a host's logger (Dynamo's
    # engine monitor: "vLLM AsyncLLM health check failed: EngineCore encountered an issue. See stack trace …")
    _rule("engine-dead-text", "EngineCore encountered an issue", None, deaths.engine_dead),
    _rule("request-engine-dead", "failed (engine dead)", None, deaths.request_engine_dead),
    _rule("output-handler-failed", "output_handler failed", None, deaths.engine_dead),
    # a running engine's death (V1 core.py once engine_core exists, V0's background loop), its traceback below
    _rule("engine-fatal", "EngineCore encountered a fatal error", None, deaths.crashed("fatal_error", True)),
    _rule(
        "background-failed", "Engine background task failed", None, deaths.crashed("background_failed", True)
    ),
    # asyncio's "Exception in callback functools.partial(<function …>)" for that loop's done-callback
    _rule(
        "loop-callback-v0.2", "_raise_exception_on_finish at", None, deaths.crashed("background_failed", True)
    ),
    _rule("loop-callback-v0.5", "_log_task_completion at", None, deaths.crashed("background_failed", True)),
    _rule("engine-core-init-failed", "Engine core initialization failed", None, deaths.engine_core),
    _rule("engine-core-failed-to-start", "EngineCore failed to start", None, deaths.engine_core),
    _rule("engine-core-exception", "EngineCore hit an exception", None, deaths.engine_core),
    *failrows.RULES,  # host programs' and device runtimes' words, V0 model_runner_base's record, a refused model
    # any other exception line: what a crash's root cause is read from
    _rule("exception", "Error", r"Error", _exception),
    _rule("exception-named", "Exception", r"Exception", _exception),
)


_GATE = gate(RULES)


def failure(msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """The failure one message reports, if any (a quoted source line only when it raises one of
    RAISED_LITERALS: marked ``from_source``)."""
    if _GATE.search(msg) is None:
        return None
    head = msg.lstrip()
    quoted = head.startswith(_QUOTED_SOURCE) and _BLOCKS_RE.match(head) is None  # "# GPU blocks: N" is vLLM's
    if quoted and not (head.startswith("raise ") and any(lit in msg for lit in RAISED_LITERALS)):
        return None
    found = fire(RULES, msg, ctx, run)
    if not found:
        return None
    f = found[0]
    return Failure(f.kind, {**f.details, "from_source": True}, f.fatal, f.key) if quoted else f
