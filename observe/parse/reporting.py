"""A stream's failures as EngineError events, each once per dedup window: the failure a message reports
(``failures.failure``), an ERROR / CRITICAL record no rule knows as one ``error_line`` per record (the lines
of one traceback logged line by line share the record's process and logger call site), the tracebacks
printed raw (``frames.RawTracebacks``) and, at the end, the vLLM frames no rule read (``unread.Unread``).
The Parser keeps one :class:`FailureReporter` per stream and tells it how far the run has got."""

from __future__ import annotations

import re

from observe.failures.kinds import FailureKind
from observe.model import EngineError, LogEvent
from observe.parse import (
    dedup,
    errrun,
    failures,
    fastchat,
    frames,
    headless,
    ipython,
    logerror,
    rayhang,
    raypg,
    served,
    triggers,
    unread,
    workerbase,
)
from observe.parse import envelope as E
from observe.parse.envelope import Ctx
from observe.parse.failtypes import Failure, RunState

#: a tool parser's own call site (entrypoints/openai/tool_parsers/<name>_tool_parser.py 0.6 → 0.11, tool_parsers/ 0.32):
#: the server builds a parser per request, and every ERROR record one logs (logger.exception in the except around
#: extract_tool_calls / extract_tool_calls_streaming, which then answers the text without tool calls or skips that
#: delta; logger.error on an unexpected tokenizer or token) is that request's, the engine untouched. Not the registry
#: (abstract_tool_parser.py: a parser module that fails to import at start-up is logged there and raised)
_TOOL_PARSER_SITE = re.compile(r"(?!abstract_)\w+_tool_parser\.py")


#: a frame of one request's own work, so an exception raised under it (any frame deeper in the same traceback: json's
#: decoder under the parser) is that request's, even in a traceback printed bare: a tool parser's extraction
#: (``extract_tool_calls`` / ``extract_tool_calls_streaming``, a vLLM parser or a ``--tool-parser-plugin`` one; the
#: server answers that request without tool calls, or skips the delta), and structured output's validation of a
#: request's grammar (v1/structured_output/backend_*.py ``validate_xgrammar_grammar``, ``validate_guidance_grammar``,
#: ``validate_structured_output_request_*``; 0.8.0 / 0.8.1 kept the one validator, v1/structured_output/utils.py
#: ``validate_structured_output_request``: called from the request's input processing, processor.py's
#: _validate_structured_output 0.8 → 0.11, sampling_params.py's _validate_structured_outputs 0.32, whose error
#: the server answers that request with), and OpenAIServing's tokenizing of a request's prompt (serving_engine.py
#: ``_tokenize_prompt_input_or_inputs`` / ``_tokenize_prompt_input(s)`` / ``_normalize_prompt_text_to_input`` /
#: ``_normalize_prompt_tokens_to_input``, 0.6 → 0.10: called only from a handler's ``prompts = list(self.
#: _tokenize_prompt_input_or_inputs(request, …))`` in create_completion, create_embedding, the tokenize and score
#: routes; a ValueError there is answered as that request's error, anything else leaves the handler as that one
#: request's 500, uvicorn's "Exception in ASGI application", and the server serves on)
_REQUEST_FRAME = re.compile(
    r'File "[^"]*/(?:(?!abstract_)\w+_tool_parser\.py", line \d+, in extract_tool_calls'
    r'|v1/structured_output/backend_\w+\.py", line \d+, in validate_\w+'
    r'|v1/structured_output/utils\.py", line \d+, in validate_structured_output_request'
    r'|vllm/entrypoints/openai/serving_engine\.py", line \d+, in _(?:tokenize|normalize)_prompt_\w+)'
)

#: the lines of a request handler's own traceback that say nothing of the engine: its header, a frame in the OpenAI
#: server's handler files (serving_chat.py / serving_completion.py; chat_completion/serving.py from 0.20), and the
#: function name that a hard wrap puts on the next, prefix-less line. A record whose traceback is cut while only these
#: followed it (eval32aw 024: "Error in chat completion stream generator." then its first frame) told no engine death
_HANDLER_LINE = re.compile(
    r'\s*(?:Traceback \(most recent call last\):|File "[^"]*/entrypoints/openai/(?:serving_chat|serving_completion'
    r'|chat_completion/serving)\.py", line \d+,?(?: in \w+)?|in (?:chat_)?completion_stream_generator)\s*'
)


def _stack_line(msg: str, ctx: Ctx) -> bool:
    """Whether msg is a bare traceback's frame or source line (no prefix, no level)."""
    return ctx.bare and ctx.level is None and (msg[:1].isspace() or msg.lstrip().startswith('File "'))


def _tool_parser_site(ctx: Ctx) -> bool:
    name = (ctx.logger_file or "").rsplit("/", 1)[-1]
    return _TOOL_PARSER_SITE.fullmatch(name) is not None


class FailureReporter:
    """The failure state of one stream: recent failures, the last ERROR record's site, raw tracebacks."""

    def __init__(self) -> None:
        self._recent = dedup.DedupWindow()
        self._site: tuple[int | None, str | None, int | None] | None = None  # last ERROR record's site
        self._headed = False  # the ERROR record at that site began with its traceback's header
        # that record opened at its header (its message line cut): its next frame is the function that logged it
        self._outermost = False
        self.raw = frames.RawTracebacks()  # the tracebacks workers print raw, per process
        self._headless = headless.Headless()  # a process's raw traceback cut above its header
        self._unread = unread.Unread()  # the fallback: a vLLM frame no rule read (parse.unread)
        # per process and rank: the raw traceback being printed has passed a frame of one request's own work
        self._in_request: dict[tuple[int | None, int | None], bool] = {}
        self._held: tuple[Failure, str, Ctx, int, bool] | None = None  # a request handler's record, held back
        self._hang = rayhang.Hang()  # Ray's raylet's notices of worker processes hanging at their start
        self._pg = raypg.Wait()  # vLLM's start waiting for a placement group Ray cannot fill
        self.answers = errrun.Answers()  # the run of 5xx answers on /v1/ routes (parse.errrun)
        self._fastchat = fastchat.Window()  # FastChat's vLLM worker announced, not yet registered
        # a bare traceback's frames and source lines, what they told held until a line ends them: logging's report
        # of a failed log call (``logerror``) drops them, any other line lets them out in order
        self._stack: list[tuple[Failure | None, str, Ctx, int, bool]] = []
        self._message = False  # logging's "Message: %r" line followed the held stack
        self.held_now: list[EngineError] = []  # what the current line told, held with the stack
        self._holding = True  # off at the stream's end: what it lets out is told at once
        self._nb_head: tuple[Failure, str, Ctx, int] | None = (
            None  # IPython's header, told if the stream ends there
        )

    def restart(self) -> None:
        """A (re)start: earlier error context no longer applies."""
        self._recent.clear()
        self._site = None
        self._hang.reset()
        self._pg.reset()
        self.answers.reset()

    def message(self, msg: str, ctx: Ctx, run: RunState, cur: int, out: list[LogEvent], rules: bool) -> None:
        """The failure a message reports (rules: its literals may fire a rule); cur: its physical line."""
        f = failures.failure(msg, ctx, run) if rules else None
        if f is None and rules:
            f = self._pg.note(msg, run)  # the start stuck waiting for Ray's GPUs (parse.raypg)
        if ctx.level in triggers.ERROR_LEVELS:
            site = (ctx.pid, ctx.logger_file, ctx.logger_line)
            same = site == self._site
            self._site = site
            if not same:
                self._headed = False
                self._outermost = "Traceback (most recent" in msg
            self._headed = self._headed or "Traceback (most recent" in msg
            if self._outermost and msg.lstrip().startswith('File "'):
                self._outermost = False
                if f is None and served.handler_own_frame(msg, ctx.logger_file):
                    f = failures.request_error()  # the handler's own except logged it: one request's error
            tool = _tool_parser_site(ctx)
            if f is None and not same and msg.strip():
                f = failures.request_error() if tool else None
                f = f or failures.error_line(msg, run, ctx.logger_file)
            elif f is None and not same:  # the worker wrapper's record, its words cut (parse.workerbase)
                f = workerbase.method_failed(msg, ctx, run)
            # a traceback cut above its header: its frames tell; and the KV size check's or V1's busy loop's
            # frame under any header (the exception line under it, when there, explains it: failing.unexplained)
            if f is None and not tool and (not self._headed or frames.read_under_header(msg)):
                f = self.raw.record_frame(msg, run, ctx)
        elif (
            f is not None
            and f.kind == FailureKind.EXCEPTION
            and self._in_request.pop((ctx.pid, ctx.rank), False)
        ):
            f = (
                failures.request_error()
            )  # raised under a request's frame (its exception line closes that traceback)
        if f is not None and f.kind == FailureKind.ERROR_LINE and ctx.logger_file in served.REQUEST_LOGGERS:
            self._held = (f, msg, ctx, cur, run.requested)  # settle(): is it the record's only line?
            return
        self._emit(f, msg, ctx, cur, out, run.requested)

    def settle(self, ctx: Ctx | None, out: list[LogEvent], line: str = "") -> None:
        """Before each message (ctx, its text line; None: the stream's end): a request handler's ERROR record held
        back is emitted, marked ``alone`` (failing.engine_error) unless this line goes on with it: a line at its call
        site or one with no level (its traceback's lines, or one printed bare). While what goes on is only the
        handler's own traceback (``_HANDLER_LINE``) it stays held: cut there, the record is still alone."""
        if self._held is None:
            return
        f, msg, hctx, cur, requested = self._held
        site = (hctx.pid, hctx.logger_file, hctx.logger_line)
        # the same words again at the site are the next request's record (a run of 404s), not this one going on
        again = bool(line.strip()) and line.strip()[:40] == msg.strip()[:40]
        goes_on = (
            ctx is not None
            and not again
            and (ctx.level is None or (ctx.pid, ctx.logger_file, ctx.logger_line) == site)
        )
        if goes_on and _HANDLER_LINE.fullmatch(line):
            return
        self._held = None
        if not goes_on:
            f = Failure(f.kind, {**f.details, "alone": True}, f.fatal, f.key)
        self._emit(f, msg, hctx, cur, out, requested)

    def aborted(self, cur: int) -> None:
        """The engine aborted a request it held, on physical line cur (``served.ABORTED``)."""
        self._unread.aborted_at = cur

    def said(self) -> None:
        """A record under vLLM's own logger prefix was read (``unread``: the excepthook's header needs one)."""
        self._unread.said = True

    def raw_line(self, msg: str, ctx: Ctx, run: RunState, cur: int, out: list[LogEvent], told: bool) -> None:
        """A line of a traceback printed raw (a process or rank prefix, no level): ``frames.RawTracebacks``."""
        text = msg.strip()
        key = (ctx.pid, ctx.rank)
        if text.startswith('File "'):  # once under a request's frame, every deeper frame is too
            self._in_request[key] = self._in_request.get(key, False) or _REQUEST_FRAME.match(text) is not None
        elif text.startswith("Traceback (most recent"):
            self._in_request.pop(key, None)
        elif (hang := self._hang.note(text, ctx, run)) is not None:
            self._emit(hang, msg, ctx, cur, out, run.requested)
        if ctx.bare:
            self._fastchat.note(text, (ctx.source, ctx.lineno), run.stats_seen)
        nb = ipython.bare_header(text, run) if "Traceback (most recent" in text else None
        self._nb_head = None if nb is None else (nb, msg, ctx, cur)
        f = self.raw.line(msg, key, told, run, ctx)
        h = self._headless.line(msg, ctx, run, told or f is not None)
        self._emit(f or h, msg, ctx, cur, out, run.requested)

    def release(self, requested: bool, cur: int, out: list[LogEvent]) -> None:
        """End of stream: the raw tracebacks and unread frames still held; else, when nothing was read as a failure,
        a run of 5xx answers ending the stream (``errrun``)."""
        self._flush(out)
        self._holding = False
        self.settle(None, out)
        told = self._unread.told
        held = self._unread.release(requested, self.raw.release(requested))
        if not requested and self._nb_head is not None and self._nb_head[3] == cur and not (held or told):
            held.append(self._nb_head[:3])  # the paste ends on IPython's header (parse.ipython.bare_header)
        for f, msg, ctx in held:
            self._emit(f, msg, ctx, cur, out, requested)
        if not (held or told) and (run := self.answers.failure()) is not None:
            f, msg, env = run
            out.append(EngineError(env, f.kind, msg, f.details, f.fatal))

    def report(self, f: Failure, msg: str, ctx: Ctx, cur: int, out: list[LogEvent]) -> None:
        """A failure the parser read from the run's course (``errexit``), reported as any other."""
        self._emit(f, msg, ctx, cur, out)

    def boundary(self, msg: str, ctx: Ctx, out: list[LogEvent]) -> None:
        """Before a message: a held bare stack goes on (its frame or source line), waits (logging's ``Message:``
        line after it), is dropped (logging's ``Arguments:`` line next: ``logerror``) or is let out in order."""
        self.held_now = []
        if not self._stack:
            return
        text = msg.strip()
        bare = ctx.bare and ctx.level is None
        if not self._message and _stack_line(msg, ctx):
            return
        if bare and not self._message and logerror.message_line(text):
            self._message = True  # logging's report, if its Arguments line follows
            return
        if bare and self._message and logerror.arguments_line(text):
            self._stack, self._message = [], False  # handleError printed a log call's stack: no failure
            return
        self._flush(out)

    def _emit(
        self, f: Failure | None, msg: str, ctx: Ctx, cur: int, out: list[LogEvent], requested: bool = False
    ) -> None:
        # held from a frame line that told something (a traceback's frames before its exception line), never from a
        # message's indented continuation after it: the sidecar's stream never ends, so what it holds waits for a line
        opens = f is not None and msg.lstrip().startswith('File "')
        if self._message or (_stack_line(msg, ctx) and self._holding and (opens or self._stack)):
            self._stack.append((f, msg, ctx, cur, requested))  # a bare traceback's line: held (``boundary``)
            if f is not None:
                self.held_now.append(
                    EngineError(E.envelope(ctx), f.kind, msg.strip()[:2000], f.details, f.fatal)
                )
            return
        self._flush(out)
        self._send(f, msg, ctx, cur, out, requested)

    def _flush(self, out: list[LogEvent]) -> None:
        """The held bare stack's lines, told in order."""
        held, self._stack, self._message = self._stack, [], False
        for h in held:
            self._send(*h[:4], out, h[4])

    def _send(
        self, f: Failure | None, msg: str, ctx: Ctx, cur: int, out: list[LogEvent], requested: bool = False
    ) -> None:
        f = self._fastchat.startup(f, (ctx.source, ctx.lineno))
        failure_line = ctx.level is None or ctx.level in triggers.ERROR_LEVELS
        self._unread.note(f, msg, ctx, failure_line, cur, requested)
        if f is not None and self._recent.is_new(f, cur):
            d = f.details if ctx.rank is None else {**f.details, "rank": ctx.rank}
            out.append(EngineError(E.envelope(ctx), f.kind, msg.strip()[:2000], d, f.fatal))
