"""A request's precomputed multi-modal embeddings refused by the model's input schema: one request's refusal, never the
engine's failure nor a failed start.

vLLM's multi-modal models describe their inputs as TensorSchema classes (vllm/utils/tensor_schema.py, 0.10 →:
``*ImageEmbeddingInputs``, ``*VideoEmbeddingInputs``, ``*AudioEmbeddingInputs`` …), whose validation raises a
ValueError in its own words: "<field> has rank <n> but expected <m>" (``_validate_tensor_shape_expected``) and
"<field> dim[<i>] expected <d>, got <a>". Only a user's request carries precomputed embeddings: the chat API's
``image_embeds`` / ``audio_embeds`` content parts (or an offline prompt's ``multi_modal_data``); the start-up's
profiling feeds the model dummy raw media (``get_dummy_mm_data``: images, videos, audio), never ``*_embeds``. So this
refusal of an ``image_embeds`` / ``video_embeds`` / ``audio_embeds`` field is that request's input refused (the
server answers it with an error response and serves on), printed bare or under the API server. Not read so inside an
engine core's or a worker's record (a process prefix other than the API server's, a logger outside the request
path): there the engine's own death, if any, is read by its own rows.

Pure: a row reader.
"""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.parse import served
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

#: the trigger literal and the row's pattern (any exception name before it, or none)
LITERAL = "_embeds "
PATTERN = r"\b(?:image|video|audio)_embeds (?:has rank \d+ but expected \d+|dim\[\d+\] expected \S+, got \d+)"


def _request_side(ctx: Ctx) -> bool:
    """Whether the line is printed bare or by the API server's request path (not an engine core's or a worker's)."""
    process_ok = ctx.process is None or ctx.process.startswith("APIServer")
    logger_ok = ctx.logger_file is None or ctx.logger_file in served.REQUEST_LOGGERS
    return process_ok and logger_ok


def embeds_refused(m: re.Match[str], msg: str, ctx: Ctx, run: RunState) -> Failure | None:
    """A request's precomputed embeddings refused by the model's input schema: that request's error."""
    if not _request_side(ctx):
        return None
    return Failure(FailureKind.REQUEST_ERROR, {"phase": "serving", "mm_embeds_refused": True}, False, None)
