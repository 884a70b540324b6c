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
'could not be loaded' messages carry vLLM's error themselves and are not read here. Pure: a raw line in, a Failure or
None out.
"""

from __future__ import annotations

import re

from observe.parse.failtypes import Failure, RunState
from observe.parse.hosted import start_failed

#: the sentence EuroEval raises (``{model_id!r}``: the model id in Python's quotes)
_HIDDEN = re.compile(
    r"\bThe model (?P<q>['\"])[^'\"]{1,300}(?P=q) could not be loaded, but vLLM did not mention exactly what happened\."
)
#: what a line must hold for ``death`` to read it (``triggers.TRIGGERS`` via ``frames.LITERALS``)
LITERALS: tuple[str, ...] = ("but vLLM did not mention exactly what happened",)
_CAUSE = (
    "EuroEval could not load the model in vLLM, and vLLM's error named no cause (its 'See root cause above.'): the "
    "engine's construction raised before anything served; vLLM's own output, which holds the cause, was hidden"
)
_FIX = (
    "re-run the benchmark with the environment variable FULL_LOG=1 (EuroEval then shows vLLM's own output and its "
    "traceback), which tells why the engine did not start; no vLLM flag is the lever until that error is known"
)


def death(text: str, run: RunState) -> Failure | None:
    """EuroEval's failed load of the model in vLLM, when text (a stripped raw line) holds its sentence (after a
    requested stop: none)."""
    if run.requested or (m := _HIDDEN.search(text)) is None:
        return None
    f = start_failed(text[m.start() :], _CAUSE, ("euroeval", "load_hidden"))
    return Failure(f.kind, {**f.details, "fix": _FIX}, f.fatal, f.key)
