"""Redaction: what a user sent never leaves observe. One redaction, `Stream`, applied by the parser to
every event it emits (so every report format, /api/diagnosis, /metrics labels, the alerts quoting
them and `observe run`'s message get the redacted form): `redact` on every error message, and
`deny` (default-deny, below) on the errors vLLM printed while it could take requests.

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

from observe.model import AccessLog, EngineError, StartupFact

__all__ = ["Stream", "access", "deny", "redact", "redact_error", "redacted"]

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


# ----------------------------------------------------------------------------- the request path
# Default-deny for what vLLM says while it serves: its request-path errors quote what users sent
# (a message, an image URL, a schema, a model name), in wordings no list of bad patterns covers.
# Only vLLM's own wording (the literal text of a format string in _TEMPLATES, or the prose around
# what `_structural` takes out) and bounded tokens (numbers, flag names, exception class names)
# are kept; quoted values, backtick values that are not a flag or a field name, bracketed and
# braced reprs (lists, dicts, JSON, ``Name(...)``), and URLs past their host are replaced by
# their length. A template's holes are typed: {int} and {num} are kept, {any} is redacted, {rest}
# (another library's message vLLM appends) is denied in turn.

#: vLLM's request-path wordings whose values are not quoted, or whose quotes are vLLM's own text;
#: (release and file where the format string is, the format string with typed holes)
_TEMPLATES: tuple[tuple[str, str], ...] = (
    (
        "0.6.3 entrypoints/openai/serving_engine.py:275",
        "This model's maximum context length is {int} tokens. However, you requested {int} tokens "
        "({int} in the messages, {int} in the completion). Please reduce the length of the messages "
        "or completion.",
    ),
    (
        "0.6.3 entrypoints/openai/serving_engine.py:269",
        "This model's maximum context length is {int} tokens. However, you requested {int} tokens in "
        "the messages, Please reduce the length of the messages.",
    ),
    (
        "0.32 renderers/params.py:528 (qualifier 'at least ')",
        "This model's maximum context length is {int} tokens. However, your prompt contains at least "
        "{int} input tokens, which exceeds this limit even without any output tokens. Please reduce "
        "the length of the input prompt.",
    ),
    (
        "0.32 renderers/params.py:528",
        "This model's maximum context length is {int} tokens. However, your prompt contains {int} "
        "input tokens, which exceeds this limit even without any output tokens. Please reduce the "
        "length of the input prompt.",
    ),
    (
        "0.32 renderers/params.py:389",
        "This model's maximum context length is {int} tokens. However, your prompt contains {int} "
        "characters (more than {int} characters, which is the upper bound for {int} input tokens). "
        "Please reduce the length of the input prompt.",
    ),
    (
        "0.8.5 utils.py FlexibleArgumentParser.parse_args (0.11.0 utils/__init__.py:1861); the launch's own words",
        "With `vllm serve`, you should provide the model as a positional argument or in a config file instead of via "
        "the `--model` option.",
    ),
    (
        "vllm/scripts.py serve, then entrypoints/cli/serve.py ServeSubcommand.cmd (before 0.8.5)",
        "With `vllm serve`, you should provide the model as a positional argument instead of via the `--model` option.",
    ),
    (
        "0.6 → 0.11 worker/worker_base.py WorkerWrapperBase.execute_method (the method's repr: a worker method's name)",
        "Error executing method '{name}'. This might cause deadlock in distributed execution.",
    ),
    ("0.6.3 entrypoints/chat_utils.py:426, 0.8.5 :1067", "Unknown part type: {any}"),
    ("0.6.3 entrypoints/openai/serving_engine.py:200, 0.8.5 :169", "The model `{any}` does not exist."),
    ("0.32 tokenizers/deepseek_v32_encoding.py:261", "Invalid role: {any}"),
    ("0.32 renderers/base.py:450", "Token id {int} is out of vocabulary"),
    (
        "0.6.3 multimodal/utils.py:47",
        "Invalid 'image_url': A valid 'image_url' must start with either 'data:image' or 'http'.",
    ),
    (
        "0.8.5 multimodal/utils.py:83",
        "The file path {any} must be a subpath of `--allowed-local-media-path` {any}.",
    ),
    (
        "0.32 multimodal/media/connector.py:350",
        "The file path {any} must be a subpath of `--allowed-local-media-path {any}`.",
    ),
    (
        "0.32 multimodal/media/connector.py:361",
        "The URL must be from one of the allowed domains: {any}. Input URL domain: {any}",
    ),
    ("0.32 multimodal/media/connector.py:324", "Invalid data URL {any}: missing ',' separator."),
    ("0.32 multimodal/media/connector.py:86", "Failed to fetch media from URL: HTTP {int} error"),
    ("0.32 multimodal/media/connector.py:114", "Failed to fetch media from URL: {rest}"),
    ("0.32 multimodal/media/image.py:94", "Failed to load image: {rest}"),
    (
        "0.8.5 v1/structured_output/backend_xgrammar.py:242",
        "Failed to transform regex into a grammar: {rest}",
    ),
    (
        "0.6.3 entrypoints/openai/tool_parsers/llama_tool_parser.py:116",
        "Error in extracting tool call from response: {rest}",
    ),
    (
        "0.6.3 entrypoints/openai/tool_parsers/hermes_tool_parser.py:107",
        "Error in extracting tool call from response {rest}",
    ),
    ("0.32 tool_parsers/xlam_tool_parser.py:183", "Error extracting tool calls: {rest}"),
    ("0.6.3 entrypoints/openai/serving_chat.py:108", "Error with model {rest}"),
    ("0.32 entrypoints/anthropic/api_router.py:75", "Error in create_messages: {rest}"),
    ("vLLM 0.11 serving_engine (tests/data/forms)", "Error in preprocessing prompt inputs: {rest}"),
    (
        "CPython's UnicodeDecodeError (a request's bytes)",
        "'utf-8' codec can't decode byte {hex} in position {int}: {rest}",
    ),
    (
        "pydantic-core's error line (the request models of entrypoints/openai/protocol.py)",
        "{rest} [type={name}, input_value={any}, input_type={name}]",
    ),
)
_HOLES = {
    "{hex}": r"(0x[0-9a-f]{2})",
    "{name}": r"([A-Za-z_]\w{0,40})",
    "{int}": r"(-?\d+)",
    "{num}": r"(-?\d+(?:\.\d+)?)",
    "{any}": r"(.+?)",
    "{rest}": r"(.*)",
}
_HOLE_RE = re.compile(r"\{(?:hex|name|int|num|any|rest)\}")


def _compile(fmt: str) -> tuple[re.Pattern[str], tuple[str, ...]]:
    parts, holes, pos = [], [], 0
    for m in _HOLE_RE.finditer(fmt):
        parts += [re.escape(fmt[pos : m.start()]), _HOLES[m.group()]]
        holes.append(m.group())
        pos = m.end()
    parts.append(re.escape(fmt[pos:]))
    return re.compile("".join(parts), re.DOTALL), tuple(holes)


_COMPILED = tuple(_compile(fmt) for _, fmt in _TEMPLATES)
# a Python exception's class before its message ("ValueError: ", "jinja2.exceptions.TemplateError: ")
_CLASS_RE = re.compile(r"\s*(?:[A-Za-z_]\w*\.){0,6}[A-Z]\w*(?:Error|Exception|Warning):\s?", re.ASCII)
_MARK_RE = re.compile(r"<redacted \d+ chars>")
# a backtick value kept: a flag or a field name as vLLM writes them ("`--max-model-len`", "`max_model_len`")
_BOUNDED = re.compile(r"--?[a-z0-9][a-z0-9-]*|[a-z_][a-z0-9_]*(?:\.[a-z_][a-z0-9_]*)*", re.ASCII)
# a bracketed tag kept: "[shutdown]", "[Errno 98]", "[rank0]" (a word, maybe one number; a list is quoted)
_TAG_RE = re.compile(r"\[[A-Za-z][\w.-]{0,30}(?: -?\d{1,10})?\]", re.ASCII)
# a URL: scheme, optional userinfo, host[:port], then path / query / fragment
_URL_RE = re.compile(
    r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]{0,15}://)(?P<user>[^\s/?#@'\"<>]*@)?"
    r"(?P<host>[^\s/?#'\"<>()\[\]{}]*)(?P<rest>[^\s'\"<>()\[\]{}]*)",
    re.ASCII,
)
_PLURAL_RE = re.compile(r"\(\w{0,2}\)", re.ASCII)  # "second(s)", "generate()": prose, not a call's arguments
_DATA_URL_RE = re.compile(r"data:[\w.+-]+/[\w.+-]+[;,][^\s'\"<>]*", re.ASCII)
_TRAIL = ".,;:!?"
#: hosts of the documentation vLLM, PyTorch and pydantic link in their own messages: path kept
_DOCS = frozenset({"docs.vllm.ai", "pytorch.org", "errors.pydantic.dev"})


def _url(m: re.Match[str]) -> str:
    """scheme://host kept (which server a fetch went to); userinfo, path, query and fragment not,
    but the path and fragment of the documentation links vLLM and its libraries print (_DOCS)."""
    rest = m.group("rest")
    keep = len(rest) - len(rest.rstrip(_TRAIL))  # a sentence's full stop after the URL
    body = rest[: len(rest) - keep]
    page = ""
    if m.group("host").lower() in _DOCS:  # the page kept, and its fragment; a query never
        page, sep, query = body.partition("?")
        body = sep + query.partition("#")[0]
    out = m.group("scheme")
    if m.group("user"):
        out += redacted(len(m.group("user")))
    out += m.group("host") + page
    if body:
        out += redacted(len(body))
    return out + rest[len(page) + len(body) :]


def _structural(s: str) -> str:
    """Prose kept; quoted values, unbounded backtick values, bracketed / braced reprs, calls'
    arguments, URLs past their host and data URLs replaced by their length."""
    out: list[str] = []
    i, n = 0, len(s)
    while i < n:
        c = s[i]
        prev = s[i - 1] if i else " "
        word_start = not (prev.isalnum() or prev in "_.-/")
        if c == "<" and (m := _MARK_RE.match(s, i)) is not None:
            out.append(m.group())
            i = m.end()
        elif c in "'\"" and not prev.isalnum():  # an opening quote (after a letter it is an apostrophe)
            j = _string_end(s, i)
            out.append(redacted(j - i))
            i = j
        elif c == "`":
            j = s.find("`", i + 1) + 1 or n  # past the closing backtick; unclosed: to the end
            kept = j > i + 1 and s[j - 1] == "`" and _BOUNDED.fullmatch(s[i + 1 : j - 1]) is not None
            out.append(s[i:j] if kept else redacted(j - i))
            i = j
        elif c == "[" and (m := _TAG_RE.match(s, i)) is not None:
            out.append(m.group())
            i = m.end()
        elif c == "(" and (m := _PLURAL_RE.match(s, i)) is not None:
            out.append(m.group())
            i = m.end()
        elif c in "[{" or (c == "(" and (prev.isalnum() or prev in "_.")):  # a list, dict, JSON, call
            j = _bracket_end(s, i)
            out.append(redacted(j - i))
            i = j
        elif word_start and c.isalpha() and (m := _URL_RE.match(s, i)) is not None:
            out.append(_url(m))
            i = m.end()
        elif word_start and c == "d" and (m := _DATA_URL_RE.match(s, i)) is not None:
            out.append("data:" + redacted(m.end() - i - 5))
            i = m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def deny(text: str) -> str:
    """`text` as it may leave observe when vLLM said it on the request path: vLLM's own wording and
    bounded tokens kept, everything a user may have sent replaced by a marker of its length.
    Idempotent (markers are kept)."""
    if not text:
        return text
    m = _CLASS_RE.match(text)
    head, body = (m.group(), text[m.end() :]) if m else ("", text)
    for rx, holes in _COMPILED:
        t = rx.fullmatch(body)
        if t is None:
            continue
        out, pos = [head], 0
        for k, hole in enumerate(holes, 1):
            out.append(body[pos : t.start(k)])
            value = t.group(k)
            if hole in ("{hex}", "{name}", "{int}", "{num}"):
                out.append(value)
            elif hole == "{rest}":
                out.append(deny(value))
            elif value:
                out.append(value if _MARK_RE.fullmatch(value) else redacted(len(value)))
            pos = t.end(k)
        out.append(body[pos:])
        return "".join(out)
    return head + _structural(body)


def _value(v: Any, f: Any) -> Any:
    if isinstance(v, str):
        return f(v)
    if isinstance(v, dict):
        return {k: _value(x, f) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return type(v)(_value(x, f) for x in v)
    return v


def _both(text: str) -> str:
    return deny(redact(text))


def redact_error(e: EngineError, *, request_path: bool = True) -> EngineError:
    """The error with its message and string details redacted: request logging always, and on the
    request path (the default: a caller that cannot tell denies) by `deny` too."""
    f = _both if request_path else redact
    return dataclasses.replace(e, message=f(e.message), details=_value(e.details, f))


def access(ev: AccessLog) -> AccessLog:
    """An access line's path without its query string (the route is vLLM's; the query the client's)."""
    path, sep, query = ev.path.partition("?")
    if not sep:
        return ev
    return dataclasses.replace(ev, path=path + "?" + redacted(len(query)))


#: start-up facts that say a launch is starting: what it prints until it serves is its own
_STARTING = frozenset({"version", "flags", "config", "phase"})
#: start-up facts printed once the engine is up: the API server takes requests next
_UP = frozenset({"init_engine_seconds", "cuda_graph_capture_seconds"})


class Stream:
    """The one redaction every event of a log stream passes (the parser applies it to what it
    emits, so every report format, /api/diagnosis, /metrics labels and alerts get the redacted
    form). Errors are denied (`deny`) unless the stream is known to be starting a launch: from a
    launch's first start-up facts (its version banner, arguments, config, load phases) until the
    engine is up (init engine took …, CUDA graphs captured), serves (stats, access lines) or an
    error says it is serving. A stream starts denied: a log read from its middle (a sidecar
    following a running server) may hold requests from its first line."""

    def __init__(self) -> None:
        self.starting = False  # a launch is starting: its errors are its own, not a request's

    def events(self, evs: list[Any]) -> list[Any]:
        return [self.event(ev) for ev in evs] if evs else evs

    def event(self, ev: Any) -> Any:
        if isinstance(ev, StartupFact):
            if ev.name in _UP:
                self.starting = False
            elif ev.name in _STARTING:
                self.starting = True
            return ev
        if isinstance(ev, EngineError):
            if ev.details.get("phase") == "serving":
                self.starting = False
            # a raising source line read from a cut traceback (`from_source`) is vLLM's own code
            own_code = bool(ev.details.get("from_source"))
            return redact_error(ev, request_path=not (self.starting or own_code))
        if isinstance(ev, AccessLog):
            self.starting = False
            return access(ev)
        self.starting = False  # stats, preemptions, prefix-cache and speculative-decoding lines: serving
        return ev
