"""A model with no chat template, in vLLM's own words: the refusal to render a chat without one is one request's (or
one call's) refusal, and the API server's chat-template warm-up failing is logged while the server starts on.

vLLM raises "As of transformers v4.44, default chat template is no longer allowed, so you must provide a chat template
if the tokenizer does not define one." when it renders a conversation and neither ``--chat-template`` nor the tokenizer
gives a template (entrypoints/chat_utils.py ``apply_chat_template`` / ``apply_hf_chat_template``, a ValueError;
the later renderers' ``safe_apply_chat_template``, ChatTemplateResolutionError, with the same words). It is called
only to render one conversation: a request's, whose preprocessing except answers it 400 (the client sees the
same text as a BadRequestError) and the server serves on; an offline ``LLM.chat`` call's, refused before any step;
and, from the 2026 servers, the start-up's chat-template warm-up's (below). No start-up step raises it, so wherever
it is printed, bare or in a record, it is ``request_error``: never the engine's failure nor a failed start. A real
start-up refusal of the template flag (``--chat-template`` naming a file that cannot be opened, its own words) is not
this text and is read as before.

The warm-up: ``OpenAIServingChat.warmup`` (entrypoints/openai/serving_chat.py, then chat_completion/serving.py; added
by vLLM PR #30700, December 2025) renders a dummy chat through ``_preprocess_chat`` while the API server is built, in a ``try``
whose ``except Exception`` logs "Chat template warmup failed" with its traceback (logger.exception) and lets the
start-up go on. Its record's frames, from the ``warmup`` frame down, are that logged warm-up (``warmup_frame``), never
a traceback of the engine's failure; its message line, where kept, is a request handler's file's record and already
read as handled (``served.REQUEST_LOGGERS``).

Pure: a row reader and a frame test.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

#: the trigger literal and the row's pattern (any exception name before it, or none)
LITERAL = "default chat template is no longer allowed"
PATTERN = r"As of transformers v4\.44, default chat template is no longer allowed\b"

#: the warm-up's own frame: ``OpenAIServingChat.warmup`` in the chat handler's file (either name)
_WARMUP = re.compile(
    r'/entrypoints/openai/(?:serving_chat|chat_completion/serving)\.py", line \d+, in warmup\b'
)


def no_template(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure:
    """vLLM's refusal to render a chat with no template: one request's (or call's) refusal, the engine untouched."""
    return Failure(FailureKind.REQUEST_ERROR, {"phase": "serving", "no_chat_template": True}, False, None)


def warmup_frame(msg: str) -> bool:
    """Whether msg is the chat-template warm-up's own frame (``File ".../serving.py", line N, in warmup``)."""
    return _WARMUP.search(msg) is not None
