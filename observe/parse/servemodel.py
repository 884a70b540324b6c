"""The ``vllm`` console script refusing ``vllm serve --model X``: the model goes as the positional argument. Pure.

"ValueError: With `vllm serve`, you should provide the model as a positional argument or in a config file instead of
via the `--model` option." is raised by vLLM's FlexibleArgumentParser.parse_args (``vllm/utils.py``, PR #17944, 0.8.5 →;
``vllm/utils/__init__.py`` in the 0.10.1.1 and 0.11.0 wheels, read there) for any ``serve`` command line holding
``--model``, before any engine is built; the older ``serve`` entry (``vllm/scripts.py``, then
``vllm/entrypoints/cli/serve.py``) raised "… as a positional argument instead of via the `--model` option." after
parsing, before ``run_server``. Either is the launch refused at its command line (launch_rejected), never a crash: the
fix is the command line's shape, ``vllm serve <model> …``, not a flag value. Later releases (``argparse_utils.py``,
0.13 → 0.22 in the logs read) only WARN with the same words followed by "The `--model` option will be removed in …"
and go on starting: that record is no refusal, and only the exception line (``ValueError: `` before the words) is read.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["LITERAL", "PATTERN", "model_option_refused"]

LITERAL = "you should provide the model as a positional argument"
PATTERN = (
    r"\bValueError: (?P<text>With `vllm serve`, you should provide the model as a positional argument "
    r"(?:or in a config file )?instead of via the `--model` option\.?)"
)


def model_option_refused(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    if "will be removed" in msg:  # the later releases' deprecation WARNING: the launch went on
        return None
    d = {"source": "argparse", "reason": "model_option", "text": m.group("text")}
    return Failure(FailureKind.INVALID_LAUNCH_ARGS, d, True, ("badargs", "model-option"))
