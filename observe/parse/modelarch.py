"""vLLM's refusal of a model architecture neither its registry nor the Transformers backend can take. Pure.

"Cannot find model module. '<Arch>' is not a registered model in the Transformers library (only relevant if the model
is meant to be in Transformers) and 'AutoModel' is not present in the model config's 'auto_map' (relevant if the model
is custom)." is raised (ValueError) by ``resolve_transformers_arch`` (``vllm/model_executor/model_loader/utils.py``,
0.8 → 0.10; ``models/registry.py`` later): vLLM has no native class for the architecture, so it looks for one in
``transformers`` or in the model repository's ``auto_map`` and finds neither. It runs while the model's class is
resolved at start-up, before any weight is loaded: the launch is refused (a newer vLLM that knows the architecture,
or ``--trust-remote-code`` with a repository that ships its code, is the way out), not a crash. After the engine
served, not read.

ModelRegistry's own refusal (``_raise_for_unsupported``, ``model_executor/models/registry.py``, 0.6 → 0.32: "Model
architectures ['<Arch>', …] are not supported for now. Supported architectures: [...]", a ValueError raised while the
model's class is resolved at start-up) is read as an exception line with its tail (``frames.VLLM_RAISES``). A paste cut
right after its first sentence, "Model architectures ['<Arch>'] are not supported for now." alone on a line (or behind
"ValueError: "), is the same refusal (``cut_refusal``): the bracketed list of quoted names, that sentence and the line's
end, nothing else (not any "not supported" text). SGLang's registry copied the wording; either way it is the server's
refused model at start-up.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

__all__ = ["CUT_LITERAL", "CUT_PATTERN", "LITERAL", "PATTERN", "arch_refused", "cut_refusal"]

LITERAL = "is not a registered model in the Transformers library"
PATTERN = (
    r"Cannot find model module\. '(?P<arch>[\w.]+)' is not a registered model in the Transformers library"
)

#: the registry's first sentence alone, the "Supported architectures: …" tail cut off (a list of quoted names)
CUT_LITERAL = "] are not supported for now."
CUT_PATTERN = r"^\s*(?:ValueError: )?Model architectures \[(?P<arch>'[\w.]+'(?:, '[\w.]+')*)\] are not supported for now\.\s*$"


def arch_refused(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    if run.stats_seen or run.shutdown:
        return None
    d = {
        "source": "config",
        "reason": "unsupported_architecture",
        "architecture": m.group("arch"),
        "text": m.group(0),
    }
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "architecture", m.group("arch")))


def cut_refusal(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """ModelRegistry's refusal cut after its first sentence: the launch refused (before serving only)."""
    if run.stats_seen or run.shutdown:
        return None
    arch = m.group("arch").replace("'", "")
    d = {
        "source": "config",
        "reason": "unsupported_architecture",
        "architecture": arch,
        "text": m.group(0).strip(),
    }
    return Failure(FailureKind.INVALID_CONFIG, d, True, ("badcfg", "architecture", arch))
