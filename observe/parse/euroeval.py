"""EuroEval's word that the vLLM engine it built for a model could not be loaded, its cause hidden by vLLM.

EuroEval (an evaluation harness that builds ``vllm.LLM`` in its own process for each generative model it benchmarks)
catches what the engine's construction raised in ``benchmark_modules/vllm.py`` (``load_model``; from 2026 its helper
``_handle_model_load_error``). When vLLM's error says only "See root cause above." (V1's "Engine core initialization
failed. See root cause above. ...") or "See stack trace for root cause.", EuroEval raises InvalidModel("The model
'<id>' could not be loaded, but vLLM did not mention exactly what happened. Try re-running the benchmark with the
environment variable `FULL_LOG` set to `1` to see the full stack trace. ...") — since October 2025 (EuroEval/EuroEval
#1342); in verbose mode the same sentence goes on with "Since you're running in verbose mode, ...". Its benchmarker
logs it at ERROR and skips the model's remaining benchmarks ("Skipped N benchmarks"). vLLM's own output is hidden
unless FULL_LOG is set. So the sentence is the engine's start failing: vLLM never built, nothing served; vLLM's hidden
traceback holds the cause, and re-running with FULL_LOG=1 shows it (no vLLM flag is the lever). EuroEval's other
'could not be loaded' messages carry vLLM's error themselves: "The model '<id>' could not be loaded. The error was
<repr>." is raised in benchmark_modules/vllm.py (``load_model``, April 2025 → 2026) when building ``vllm.LLM`` raised
the error named, but also, word for word, in benchmark_modules/hf.py when transformers could not load an encoder
model: only a named error that is vLLM's own is read (``named``), vLLM's refusal of the repository's config:
"Unsupported config format: <format>" (vllm/transformers_utils/config.py get_config, 0.6 → 0.8.3: with the format
"auto" when the repository holds neither config.json nor params.json, as a GGUF repository does; 0.8.4 → "... Supported
formats are: ...") and "Invalid repository ID or local directory specified: ..." (0.8.4 →, the same case). That is the
refused launch: vLLM never built, nothing served. Any other error named stays unread here. Pure: a raw line in, a
Failure or None out.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.failtypes import Failure, RunState
from observe.parse.hosted import start_failed

#: the sentence EuroEval raises (``{model_id!r}``: the model id in Python's quotes)
_HIDDEN = re.compile(
    r"\bThe model (?P<q>['\"])[^'\"]{1,300}(?P=q) could not be loaded, but vLLM did not mention exactly what happened\."
)
#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS`` via ``frames.LITERALS``)
LITERALS: tuple[str, ...] = (
    "but vLLM did not mention exactly what happened",
    "could not be loaded. The error was ",
)
_CAUSE = (
    "EuroEval could not load the model in vLLM, and vLLM's error named no cause (its 'See root cause above.'): the "
    "engine's construction raised before anything served; vLLM's own output, which holds the cause, was hidden"
)
_FIX = (
    "re-run the benchmark with the environment variable FULL_LOG=1 (EuroEval then shows vLLM's own output and its "
    "traceback), which tells why the engine did not start; no vLLM flag is the lever until that error is known"
)


def death(text: str, run: RunState) -> Failure | None:
    """EuroEval's failed load of the model in vLLM, when text (a stripped raw line) holds its sentence, or the one
    naming vLLM's config refusal (``named``); after a requested stop: none."""
    if run.requested:
        return None
    if (m := _HIDDEN.search(text)) is None:
        return named(text, run)
    f = start_failed(text[m.start() :], _CAUSE, ("euroeval", "load_hidden"))
    return Failure(f.kind, {**f.details, "fix": _FIX}, f.fatal, f.key)


#: the sentence with the error named (``{error!r}``), vLLM's config refusal inside it: the format it could not read
_NAMED = re.compile(
    r"\bThe model (?P<q>['\"])[^'\"]{1,300}(?P=q) could not be loaded\. The error was \w*Error\((?P<r>['\"])"
    r"(?:Unsupported config format: (?P<fmt>\w+)|(?P<repo>Invalid repository ID or local directory specified))"
)
_FORMAT_FIX = (
    "vLLM found no config it can read in the model's repository (neither config.json nor params.json), as in a "
    "repository of GGUF files: benchmark the model's own repository (safetensors weights with its config.json) "
    "instead, or, serving a GGUF model with vLLM itself, point it at the .gguf file and pass --tokenizer with the base "
    "model's repository; a config in another format needs --config-format (and --load-format) set to it, where the "
    "release has them"
)


def named(text: str, run: RunState) -> Failure | None:
    """EuroEval's failed load with vLLM's config refusal named (vLLM could not read the repository's config): the
    refused launch (INVALID_CONFIG, reason config_format); any other error named, or after a requested stop: none."""
    if run.requested or run.stats_seen or (m := _NAMED.search(text)) is None:
        return None
    fmt = m.group("fmt")
    why = f"Unsupported config format: {fmt}" if fmt else "Invalid repository ID or local directory specified"
    d = {"source": "config", "reason": "config_format", "text": why, "value": fmt, "fix": _FORMAT_FIX}
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "config-format", fmt))
