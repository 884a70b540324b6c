"""Redaction: what a user typed never leaves observe — prompts, completions and token ids are cut
from log text before it becomes evidence, an event in a report, or a field of /api/diagnosis.

Pure (no I/O). vLLM writes request contents to its log in these forms:

* its request logger (`--enable-log-requests`, formerly on unless `--disable-log-requests`):
  ``Received request ID: prompt: %r, params: SamplingParams(...), prompt_token_ids: [...]`` (0.4's
  ``async_llm_engine.py`` with ``sampling_params:``; 0.5–0.10's ``entrypoints/logger.py``, with
  ``prompt_embeds shape:`` from 0.9); from 0.11 ``Request ID details: prompt: %r, prompt_token_ids:
  [...]`` at DEBUG and ``Received request ID: params: SamplingParams(...)`` at INFO;
  ``Generated response ID: output: %r, output_token_ids: [...], finish_reason: ...``;
  ``Request ID JSON body: {...}`` (DEBUG);
* the response logger (``VLLM_DEBUG_LOG_API_SERVER_RESPONSE``): ``response_body={...}``;
* error text that quotes a request: pydantic's ``input_value='...'``, dict or JSON reprs of a body
  (``'messages': [...]``, ``"content": "..."``), ``RequestOutput(prompt='...', ...)``.

`redact(text)` replaces each such value with ``<redacted N chars>``. Values are scanned, not
pattern-matched: a quoted value ends at its unescaped closing quote (so quotes inside a prompt
do not end it), a bracketed one at its balancing bracket, and a value that never ends (a line cut
at a length limit) is redacted to the end of the text. Sampling parameters go whole (``stop``,
``bad_words``, structured-output schemas are typed by users too). A prompt that itself contains a
log prefix can be split by the parser into two records; the second then starts inside the prompt,
and everything before the request logger's next field is redacted as well.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from observe.model import EngineError

__all__ = ["redact", "redact_error", "redacted"]

# keys whose value is what a user typed or what the model answered, in vLLM's log forms:
# `key: value` (the request logger), `key=value` (reprs), `'key': value` / `"key": value` (dicts, JSON)
_KEYS = (
    "prompt",
    "prompts",
    "output",
    "outputs",
    "prompt_token_ids",
    "output_token_ids",
    "token_ids",
    "input_ids",
    "params",
    "sampling_params",
    "messages",
    "content",
    "text",
    "input",
    "input_value",
    "stop",
    "bad_words",
    "logit_bias",
    "guided_json",
    "guided_regex",
    "guided_choice",
    "guided_grammar",
    "guided_decoding",
    "structured_outputs",
    "response_format",
    "tools",
    "suffix",
    "arguments",
    "reasoning_content",
    "multi_modal_data",
    "documents",
    "query",
)
_KEY_ALT = "|".join(sorted(_KEYS, key=len, reverse=True))
_KEY_RE = re.compile(
    r"(?:(?<![\w'\"])(?:'(?:" + _KEY_ALT + r")'|\"(?:" + _KEY_ALT + r")\")\s*:\s*"
    r"|(?<![\w.'\"])(?:" + _KEY_ALT + r")(?::\s*|=))",
    re.ASCII,
)
# everything after these is a request or response body
_BODY_RE = re.compile(r"\bJSON body: |\bresponse_body=", re.ASCII)
# the request logger's fields that follow a quoted prompt or output: a record that starts inside
# a prompt (split from it at a log prefix the prompt contained) shows one after a closing quote
_ORPHAN_RE = re.compile(
    r"['\"], (?:params|sampling_params|prompt_token_ids|output_token_ids|finish_reason|"
    r"prompt_embeds shape|lora_request|prompt_adapter_request): ",
    re.ASCII,
)
_MARK = "<redacted "
_CLOSE = {"(": ")", "[": "]", "{": "}"}
_IDENT = re.compile(r"[A-Za-z_][\w.]*(?=\()", re.ASCII)


def redacted(n: int) -> str:
    """The placeholder for n characters removed."""
    return f"{_MARK}{n} chars>"


def _string_end(text: str, i: int) -> int:
    """Index just past the string literal opening at text[i] (a quote); len(text) if it never closes."""
    q = text[i]
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c == "\\":
            j += 2
            continue
        if c == q:
            return j + 1
        j += 1
    return n


def _bracket_end(text: str, i: int) -> int:
    """Index just past the bracketed value opening at text[i]; len(text) if it never balances."""
    stack = [_CLOSE[text[i]]]
    j = i + 1
    n = len(text)
    while j < n:
        c = text[j]
        if c in "'\"":
            j = _string_end(text, j)
            continue
        if c in _CLOSE:
            stack.append(_CLOSE[c])
        elif c == stack[-1]:
            stack.pop()
            if not stack:
                return j + 1
        elif c in ")]}":  # a mismatched closer: the value is broken, take the rest
            return n
        j += 1
    return n


def _value_end(text: str, i: int) -> int | None:
    """Index just past the value starting at text[i], or None when it is a plain word or number."""
    if i >= len(text):
        return None
    c = text[i]
    if c in "'\"":
        return _string_end(text, i)
    if c == "\\":  # an escaped quote: the value sits inside an encoded string (JSON of a log line)
        return len(text)
    if c in _CLOSE:
        return _bracket_end(text, i)
    m = _IDENT.match(text, i)  # SamplingParams(...), CompletionOutput(...), array(...)
    if m is not None:
        return _bracket_end(text, m.end())
    return None


def redact(text: str) -> str:
    """`text` with every prompt, completion, token-id list and request body replaced by a marker."""
    if not text:
        return text
    out: list[str] = []
    pos = 0
    n = len(text)
    while pos < n:
        b = _BODY_RE.search(text, pos)
        k = _KEY_RE.search(text, pos, b.start() if b is not None else n)
        if k is None:
            if b is None:
                out.append(text[pos:])
                break
            out.append(text[pos : b.end()])
            if b.end() < n:
                out.append(redacted(n - b.end()))
            break
        end = _value_end(text, k.end())
        if end is None:
            out.append(text[pos : k.end()])
            pos = k.end()
            continue
        out.append(text[pos : k.end()])
        out.append(redacted(end - k.end()))
        pos = end
    result = "".join(out)
    o = _ORPHAN_RE.search(result)
    if o is not None and _MARK not in result[: o.start()]:
        cut = o.start() + 1
        result = redacted(cut) + result[cut:]
    return result


def _value(v: Any) -> Any:
    if isinstance(v, str):
        return redact(v)
    if isinstance(v, dict):
        return {k: _value(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_value(x) for x in v)
    return v


def redact_error(e: EngineError) -> EngineError:
    """The error with its message and string details redacted (what reports and detectors quote)."""
    return dataclasses.replace(e, message=redact(e.message), details=_value(e.details))
