"""The one vocabulary for vLLM's command line: read flags from every form vLLM (or a user) prints
them in, normalise them, and render them back so that the rendered command means the same server.

Forms read:
- ``non-default args: {'model_tag': 'm', 'max_num_seqs': 8, 'enable_prefix_caching': False}``
  (vLLM >= 0.8) and ``args: Namespace(model='m', ...)`` (older releases): ``from_kwargs``;
- a pasted ``vllm serve m --max-num-seqs 8 --no-enable-prefix-caching`` or ``observe run``'s argv:
  ``from_argv`` (tokens only, never run).

Values keep their meaning: ``True`` is a bare switch, ``False`` an explicit ``--no-X`` (vLLM's
boolean flags are ``argparse.BooleanOptionalAction``), a list a multi-value flag, a dict a JSON
flag (``--speculative-config``). ``render`` writes ``False`` back as ``--no-X``, so a server
started with prefix caching off is not silently turned back on by the pasted command.

``FIELDS`` maps the flags observe reasons about to `model.EngineConfig` fields; ``in_force``
is the one rule for "what value is in force" (the engine's reported value, then the typed flag).
Pure: no I/O.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = [
    "ALIASES",
    "FIELDS",
    "apply_to_config",
    "from_argv",
    "from_kwargs",
    "in_force",
    "memory_env",
    "model_name",
    "norm",
    "parse_value",
    "render",
    "render_argv",
    "render_command",
    "same_value",
]

# vLLM's environment variables that change how much memory the engine takes or leaves to its KV
# cache (vllm/envs.py @ v0.32.0, the comment above each): a `NAME=value` before a pasted command
# shows them, vLLM's own log never does. Not memory: VLLM_CPU_OMP_THREADS_BIND,
# VLLM_CPU_NUM_OF_RESERVED_CPU (cores), VLLM_MQ_MAX_CHUNK_BYTES_MB (a message size threshold).
MEMORY_ENV: dict[str, str] = {
    "VLLM_CPU_KVCACHE_SPACE": "the KV cache size on CPU, GiB",
    "VLLM_MEMORY_PROFILER_ESTIMATE_CUDAGRAPHS": "CUDA graph memory counted before the KV cache is sized",
    "VLLM_FLASHINFER_WORKSPACE_BUFFER_SIZE": "FlashInfer's GPU workspace, bytes",
    "VLLM_DEEPEP_BUFFER_SIZE_MB": "DeepEP's GPU buffers (MoE all-to-all), MB",
    "VLLM_SPARSE_INDEXER_MAX_LOGITS_MB": "the sparse MLA indexer's logits on the GPU, MB",
    "VLLM_XGRAMMAR_CACHE_MB": "xgrammar's compiler cache in host memory, MB",
    "VLLM_MEDIA_CACHE_MAX_SIZE_MB": "the media download cache, MB",
}


def memory_env(env: Mapping[str, str]) -> dict[str, str]:
    """The assignments of ``env`` (a command's ``NAME=value`` prefix) that change vLLM's memory."""
    return {k: v for k, v in env.items() if k in MEMORY_ENV}


# flag → (EngineConfig field, type); the type converts values read as text
FIELDS: dict[str, tuple[str, type]] = {
    "--model": ("model", str),
    "--max-model-len": ("max_model_len", int),
    "--gpu-memory-utilization": ("gpu_memory_utilization", float),
    "--max-num-seqs": ("max_num_seqs", int),
    "--max-num-batched-tokens": ("max_num_batched_tokens", int),
    "--tensor-parallel-size": ("tensor_parallel_size", int),
    "--pipeline-parallel-size": ("pipeline_parallel_size", int),
    "--kv-cache-dtype": ("kv_cache_dtype", str),
    "--block-size": ("block_size", int),
    "--enable-prefix-caching": ("enable_prefix_caching", bool),
}
# engine-init repr / config keys → the flag they report
CONFIG_KEYS: dict[str, str] = {
    "max_seq_len": "--max-model-len",
    "max_model_len": "--max-model-len",
    "tensor_parallel_size": "--tensor-parallel-size",
    "pipeline_parallel_size": "--pipeline-parallel-size",
    "kv_cache_dtype": "--kv-cache-dtype",
    "enable_prefix_caching": "--enable-prefix-caching",
    "model": "--model",
    "block_size": "--block-size",
}
# short forms vLLM's parser accepts
ALIASES = {"-tp": "--tensor-parallel-size", "-pp": "--pipeline-parallel-size", "-dp": "--data-parallel-size"}
# flags vLLM declares with nargs="+" (several words each)
MULTI_VALUE = frozenset(("--served-model-name", "--middleware", "--lora-modules", "--prompt-adapters"))
# switches without an --enable-/--disable-/--no- prefix (vLLM's store_true / BooleanOptionalAction flags)
SWITCHES = frozenset(
    (
        "--enforce-eager",
        "--trust-remote-code",
        "--headless",
        "--async-scheduling",
        "--disable-log-requests",
        "--disable-log-stats",
        "--skip-tokenizer-init",
        "--use-v2-block-manager",
        "--worker-use-ray",
        "--engine-use-ray",
        "--disable-custom-all-reduce",
        "--ray-workers-use-nsight",
        "--fully-sharded-loras",
        "--calculate-kv-scales",
        "--api-server-count-auto",
        "--return-tokens-as-token-ids",
        "--disable-frontend-multiprocessing",
        "--enable-auto-tool-choice",
        "--multi-step-stream-outputs",
    )
)
_SHELL_STOP = frozenset(("|", ">", ">>", "2>&1", "&", "&&", ";", "||"))


def norm(flag: str) -> str:
    """``max_num_seqs``, ``--max_num_seqs``, ``--max-num-seqs`` and ``-tp`` → the ``--kebab`` form."""
    f = flag.strip()
    if f in ALIASES:
        return ALIASES[f]
    f = f.lstrip("-")
    return "--" + f.replace("_", "-")


def parse_value(text: str) -> Any:
    """A command-line word as the value it stands for: 8 → int, 0.9 → float, {...} → dict, true → True."""
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    if text[:1] in "{[":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return {"true": True, "false": False, "True": True, "False": False}.get(text, text)


def from_kwargs(d: Mapping[Any, Any], *, explicit: bool = True) -> dict[str, Any]:
    """An argument dict (``non-default args``, a ``Namespace`` body) → ``{"--flag": value}``.

    vllm serve's positional ``model_tag`` is ``--model``. With ``explicit=False`` (a Namespace
    lists every argument, defaults included) ``None`` and ``False`` are dropped: they are the
    defaults of switches, and ``--no-X`` does not exist for the old releases that print a Namespace.
    """
    out: dict[str, Any] = {}
    for k, v in d.items():
        if not isinstance(k, str) or not k:
            continue
        if not explicit and (v is None or v is False):
            continue
        if k == "model_tag":
            out.setdefault("--model", v)
            continue
        out[norm(k)] = v
    return out


def from_argv(tokens: Sequence[str]) -> tuple[str | None, dict[str, Any]]:
    """``[MODEL] --max-model-len 2048 --enforce-eager --no-enable-prefix-caching`` → (model, flags).

    ``--x=y`` and ``--x y`` are the same; ``--a_b`` is ``--a-b``; ``--no-x`` is ``--x: False``;
    the flags vLLM declares with several values (``--served-model-name a b``) take every word up
    to the next flag, the others one; a shell operator ends the command. The first bare word that
    belongs to no flag is the model (``--model M`` too).
    """
    model: str | None = None
    flags: dict[str, Any] = {}
    i, n = 0, len(tokens)
    while i < n:
        t = tokens[i]
        if t in _SHELL_STOP:
            break
        if not _is_flag(t):
            if model is None:
                model = t
            i += 1
            continue
        name, eq, val = t.partition("=")
        flag = norm(name)
        i += 1
        if eq:
            value: Any = parse_value(val)
        elif i < n and is_switch(flag) and tokens[i].lower() in ("true", "false"):
            value = tokens[i].lower() == "true"  # old StoreBoolean switches took an optional value
            i += 1
        elif i < n and not is_switch(flag) and not _is_flag(tokens[i]) and tokens[i] not in _SHELL_STOP:
            words = [tokens[i]]
            i += 1
            while flag in MULTI_VALUE and i < n and not _is_flag(tokens[i]) and tokens[i] not in _SHELL_STOP:
                words.append(tokens[i])
                i += 1
            value = words if flag in MULTI_VALUE else parse_value(words[0])
        elif flag.startswith("--no-"):
            flag, value = "--" + flag[5:], False
        else:
            value = True
        if flag == "--model" and isinstance(value, (str, int, float)) and not isinstance(value, bool):
            model = str(value)
            continue
        flags[flag] = value
    return model, flags


def is_switch(flag: str) -> bool:
    """Whether vLLM declares ``flag`` as a switch (no value): its boolean flags and their ``--no-`` forms."""
    return flag in SWITCHES or flag.startswith(("--no-", "--enable-", "--disable-"))


def _is_flag(t: str) -> bool:
    return t.startswith("-") and len(t) > 1 and not _is_number(t)


def _is_number(t: str) -> bool:
    try:
        float(t)
    except ValueError:
        return False
    return True


def _word(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer() and abs(value) >= 1:
        return str(int(value))
    if isinstance(value, (dict, list)):
        return json.dumps(value, separators=(",", ":"))
    return str(value)


def render(flag: str, value: Any) -> list[str]:
    """One flag as the words a user types: True → ``--x``; False → ``--no-x``; None → nothing;
    a list → ``--x a b``; a dict → ``--x '{"k":1}'`` (JSON)."""
    flag = norm(flag)
    if value is True:
        return [flag]
    if value is False:
        return ["--no-" + flag[2:]]
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [flag, *(_word(v) for v in value)] if value else []
    return [flag, _word(value)]


def _one(value: Any) -> str | None:
    """A model value as one name: the first of a list (``--served-model-name a b``), never a switch."""
    if isinstance(value, (list, tuple)):
        value = value[0] if value else None
    if value is None or isinstance(value, bool) or value == "":
        return None
    return str(value)


def model_name(flags: Mapping[str, Any], reported: Any = None, *, served: bool = False) -> str | None:
    """The model of a launch, chosen one way everywhere.

    ``served=False``: what vLLM loads (a path or hub id), which the command line needs: the flags'
    ``--model`` (vllm serve's positional ``model_tag``, in either spelling), else ``reported`` (the
    model an engine's config printed, which may be a served name). ``served=True``: the name clients
    and the metrics' ``model_name`` label see: the first ``--served-model-name``, else the same.
    None when nothing names it.
    """
    keys = ("--served-model-name", "--model", "--model-tag") if served else ("--model", "--model-tag")
    for key in keys:
        if (name := _one(flags.get(key))) is not None:
            return name
    return _one(reported)


def render_argv(flags: Mapping[str, Any], *, skip: Iterable[str] = ("--model",)) -> list[str]:
    """Every flag in order, as words (``--model`` is left to the caller: it is positional for serve)."""
    skipped = {norm(s) for s in skip}
    out: list[str] = []
    for flag, value in flags.items():
        if not flag.startswith("-") or norm(flag) in skipped:
            continue
        out.extend(render(flag, value))
    return out


#: the server's command before `vllm serve` existed (the `vllm` console script, vllm/scripts.py, first shipped in 0.5.2)
API_SERVER = ("python", "-m", "vllm.entrypoints.openai.api_server")
SERVE_SINCE = "0.5.2"


def render_command(
    model: str | None, flags: Mapping[str, Any], program: Sequence[str] = ("vllm", "serve")
) -> str:
    """``vllm serve MODEL --flag value ...`` as one shell-quoted line to paste. MODEL is what vLLM
    loads (a path or hub id), never a ``--served-model-name``: a ``model`` that is one of the served
    names gives way to the flags' ``--model`` (a served name is what /v1/models and the metrics'
    ``model_name`` label show, so it is easily taken for the model)."""
    named = flags.get("--model")
    served = flags.get("--served-model-name")
    names = [str(x) for x in served] if isinstance(served, (list, tuple)) else [str(served)] if served else []
    if named is not None and (model is None or (str(model) in names and str(model) != str(named))):
        model = str(named)
    if (
        program[-1] != "serve"
    ):  # `python -m vllm.entrypoints.openai.api_server --model M` (before `vllm serve`)
        rest = {k: v for k, v in flags.items() if k not in ("--model", "--model-tag")}
        return shlex.join([*program, "--model", model or "MODEL", *render_argv(rest)])
    argv = [*program, model or "MODEL", *render_argv(flags)]
    return shlex.join(argv)


def _typed(flag: str, value: Any) -> Any:
    spec = FIELDS.get(flag)
    if spec is None or value is None:
        return value
    kind = spec[1]
    if kind is bool:
        return value if isinstance(value, bool) else parse_value(str(value)) is True
    if kind is str:
        return str(value)
    try:
        return kind(value)
    except (TypeError, ValueError):
        return None


def apply_to_config(cfg: Any, flags: Mapping[str, Any], *, overwrite: bool = True) -> None:
    """Set the EngineConfig fields that ``flags`` determine (``overwrite=False``: only unknown ones)."""
    for flag, value in flags.items():
        spec = FIELDS.get(norm(flag))
        if spec is None or value is None:
            continue
        typed = _typed(norm(flag), value)
        if typed is not None and (overwrite or getattr(cfg, spec[0]) is None):
            setattr(cfg, spec[0], typed)


def config_to_flags(config: Mapping[str, Any]) -> dict[str, Any]:
    """An engine-init repr dict (``max_seq_len=2048, ...``) → the flags it reports."""
    out: dict[str, Any] = {}
    for key, flag in CONFIG_KEYS.items():
        if config.get(key) is not None and flag not in out:
            out[flag] = config[key]
    return out


def in_force(cfg: Any, flag: str) -> Any:
    """The value in force for ``flag``: the engine's reported value (an EngineConfig field), else
    the flag as typed; None = unknown (not "default": observe does not guess vLLM's defaults here)."""
    flag = norm(flag)
    spec = FIELDS.get(flag)
    if spec is not None:
        v = getattr(cfg, spec[0], None)
        if v is not None:
            return v
    return (getattr(cfg, "flags", None) or {}).get(flag)


def same_value(a: Any, b: Any) -> bool:
    """Whether two values mean the same setting (8 == 8.0 == "8"; "fp8" == "FP8")."""
    if a is None or b is None:
        return a is b
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b or str(a).lower() == str(b).lower()
    try:
        return float(a) == float(b)
    except (TypeError, ValueError):
        return str(a).strip().lower() == str(b).strip().lower()
