"""The Parser: physical lines in, typed events out, one Parser per source stream.

Why a stateful parser: vLLM logs are read from real terminals, containers and issue pastes. A terminal
hard-wraps a stats record across two physical lines ("Running: 32 r" / "eqs, …"), two records get glued
on one line, tqdm bars share a line through ``\\r``, a traceback repeats the same OOM on every re-logged
line, and vLLM's "MM-DD HH:MM:SS" stamp has no year. So a :class:`Parser` keeps a little state per stream
(a held-back incomplete record, the inferred year, recently reported errors, whether a shutdown began)
and emits events from ``observe.model`` with an :class:`~observe.model.Envelope` saying where each came from.

Data flow per line: ``envelope`` peels the wrappers and prefixes; the message then goes to ``stats``
(stats line and companions) or to ``startup`` (facts) and ``reporting`` (errors, through ``failures``).

* pure — no I/O, no clock; the caller supplies the year to assume (e.g. the file's mtime year);
* ``feed()`` never raises, whatever the text (surrogates, control characters, binary junk);
* a truncated or broken record is dropped or has fields left ``None`` — never mis-read;
* nothing from a log line is executed: dict reprs go through ``ast.literal_eval`` only.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from observe import redact
from observe.model import (
    AccessLog,
    Envelope,
    LogEvent,
    LogLine,
    Preemption,
    PrefixCacheSample,
    SpecDecodeSample,
    StartupFact,
    StatsSample,
)
from observe.parse import canon, errexit, frames, oom, reporting, served, startup, stats, triggers
from observe.parse import envelope as E
from observe.parse.envelope import ACCESS_RE, PREFIX_RE, Ctx
from observe.parse.failtypes import RunState
from observe.parse.shutdownmsg import begins_shutdown, requested_shutdown

# a wrapped stats record is re-joined from at most this many physical lines
_MAX_JOINS = 3
#: the traceback lines of a JSON record's exc_info read (its end holds the exception; a deep stack is cut)
_MAX_EXC_LINES = 200

# uvicorn's access message as a JSON record holds it: 'client - "METHOD path HTTP/x" status'
_JSON_ACCESS_RE = re.compile(
    r"\S+ - \"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+\" (?P<status>\d{3})\b", re.ASCII
)

#: read canonical V1 stats lines with one pattern (False: every line takes the general path)
FAST_STATS = True


#: how many runs of API-server lines a Parser keeps (enough to see two servers alternate)
RUNS_KEPT = 4096
_ARGS = "non-default args: {"


def _cut_args(msg: str) -> bool:
    """Whether msg holds a "non-default args" dict that does not end where the line ends (wrapped, cut)."""
    i = msg.find(_ARGS)
    return i >= 0 and not msg.rstrip().endswith("}")


class Parser:
    """Stateful, streaming, pure (no I/O). One Parser per source stream (file / rotated set)."""

    def __init__(self, *, year: int | None = None) -> None:
        self.lines = 0
        self.vllm_lines = 0
        self.events = 0
        self.parse_errors = 0  # lines whose text made the parser itself stumble (never raised)
        self.formats: set[str] = set()
        self.processes: set[str] = set()
        self.api_servers: set[int] = set()  # pids of "(APIServer pid=N)": several = several servers
        # the API-server pid of each run of their lines (A A B A … → [A, B, A]), the first RUNS_KEPT runs
        self.api_runs: list[int] = []
        self._clock = E.YearClock(year)
        self._pending: tuple[Ctx, str, int, int] | None = None  # ctx, msg, n_clauses, joins
        # a wrapped "non-default args" line held back: ctx, msg, joins
        self._held_args: tuple[Ctx, str, int] | None = None
        self.damaged_lines = 0  # records cut or wrapped beyond repair: read in part, the rest lost
        self._shutdown = False
        self._requested = False  # the shutdown under way was asked for (signal, Ctrl-C, API stop)
        self._after_5xx = False  # the last message was an access line answered 5xx (parse.errexit)
        self._errors = reporting.FailureReporter()  # what failures the stream reports (parse.reporting)
        self._engine: str | None = None
        self._stats_seen = False
        self._loading = False  # RunState.loading: the last start-up step read loads the weights or profiles
        self._counted_line = -1
        self._last_stamp: tuple[int, int, int, tuple[str, str, str] | None] | None = None
        self._cur = 0  # physical line counter (what the dedup window counts)
        self._groups = triggers.ALL  # the literal groups the line being fed may hold
        self._redact = redact.Stream()  # what users sent leaves through no event (observe.redact)

    # ------------------------------------------------------------------ public API
    def feed(self, line: LogLine, groups: int = triggers.ALL) -> list[LogEvent]:
        """Parse one physical line; returns the events it completes (possibly of earlier lines).

        groups: the ``triggers.GROUPS`` whose literals the line may hold (a caller that has looked,
        like ``scan``, says which; the rules of the others are not tried)."""
        self.lines += 1
        self._cur += 1
        self._groups = groups
        out: list[LogEvent] = []
        try:
            text = line.text
            if "\r" in text or "\n" in text:  # tqdm bars, "\r\n" continuations, a caller's multi-line text
                for seg in text.replace("\n", "\r").split("\r"):
                    if seg.strip():
                        self._segment(seg, line, out)
            elif text:
                self._segment(text, line, out)
        except Exception:
            self.parse_errors += 1
        self._groups = triggers.ALL
        self.events += len(out)
        return self._redact.events(out)

    @property
    def holding(self) -> bool:
        """Whether an incomplete record (stats, or a ``non-default args`` dict) is held back (the next
        lines may continue it)."""
        return self._pending is not None or self._held_args is not None

    def credit_access(self, n: int, process: str | None = None) -> None:
        """Account for n uvicorn access lines without a wrapper timestamp, not fed: exactly what feeding
        them would count (lines, vLLM lines, one AccessLog event each, the process of their
        "(APIServer pid=N)" prefix). Only while nothing is held back."""
        if n <= 0:
            return
        assert self._pending is None
        self.lines += n
        self._cur += n
        self.vllm_lines += n
        self.events += n
        self._counted_line = self._cur
        self._stats_seen = True
        self._errors.answers.counted()
        if process is not None:
            self.processes.add(process)

    def credit_lines(self, n: int) -> None:
        """Account for n lines not fed that feeding would only have counted (``scan.INERT``: no
        prefix, wrapper or rule literal). Only while nothing is held back."""
        if n <= 0:
            return
        assert self._pending is None
        self.lines += n
        self._cur += n

    def flush(self) -> list[LogEvent]:
        """End of stream: emit (or drop, if incomplete) a record held back for re-joining."""
        out: list[LogEvent] = []
        try:
            self._finish_pending(out)
            self._release_args(out)
            self._errors.release(self._requested, self._cur, out)
        except Exception:
            self.parse_errors += 1
        self.events += len(out)
        return self._redact.events(out)

    # ------------------------------------------------------------------ one logical line
    def _segment(
        self, seg: str, line: LogLine, out: list[LogEvent], outer_ts: datetime | None = None
    ) -> None:
        if FAST_STATS and seg[:1] == "(" and outer_ts is None and self._pending is None:
            c = canon.read(seg)
            if c is not None:
                self._canonical_stats(c, line, out)
                return
        if "[" in seg:  # every colour code has one
            seg = E.strip_ansi(seg)
        if seg[:5] == "INFO:" and self._pending is None:  # fast path: uvicorn access lines dominate busy logs
            a = ACCESS_RE.match(seg)
            if a is not None:
                ts = outer_ts.replace(tzinfo=None) if outer_ts is not None else None
                self._access(
                    Envelope(source=line.source, lineno=line.lineno, outer_ts=outer_ts, ts=ts), a, out
                )
                return
        # outer wrappers
        if not seg.startswith(("(", "INFO ", "WARNING ", "ERROR ", "DEBUG ")):
            for _ in range(4):
                w = E.WRAP_RE.match(seg)
                if w is None or w.end() == 0:
                    break
                ts_text = w.group("rfc") or w.group("brk")
                if ts_text:
                    outer_ts = E.iso(ts_text) or outer_ts
                elif w.group("jd"):
                    outer_ts = self._clock.journal_ts(w.group("jd")) or outer_ts
                seg = seg[w.end() :]
            if E.looks_like_json_record(seg) and self._json_record(seg, line, out, outer_ts):
                return
        ctx = Ctx(line.source, line.lineno, outer_ts=outer_ts)
        # process prefixes, possibly nested "(EngineCore pid=1) (RayWorkerProc pid=2) ", and
        # PyTorch's "[rank0]: " before or after them
        has_prefix = False
        if seg[:5] == "[rank":
            has_prefix = self._rank(ctx, seg)
            if has_prefix:
                seg = seg[E.RANK_RE.match(seg).end() :]  # type: ignore[union-attr]
        while seg[:1] == "(":
            p = E.PROC_RE.match(seg)
            if p is None:
                break
            has_prefix = True
            name, rank_text, dims, pid = p.groups()
            self._process(ctx, f"{name}_{dims}" if name and dims else name, pid, out)
            rank = E.rank_of(name, rank_text, dims)
            if rank is not None:
                ctx.rank = rank
            seg = seg[p.end() :]
            if seg[:5] == "[rank" and self._rank(ctx, seg):
                seg = seg[E.RANK_RE.match(seg).end() :]  # type: ignore[union-attr]
        # the logger prefix
        m = PREFIX_RE.match(seg)
        if m is None and E.has_level_word(seg):
            m = PREFIX_RE.search(seg)  # VLLM_LOGGING_PREFIX or an unknown wrapper before the level
            if m is not None and m.start() > 0 and oom.is_oom_head(seg[: m.start()]):
                # a flattened paste: PyTorch's OOM message, then a vLLM record on the same line: two messages
                self._segment(seg[: m.start()], line, out, outer_ts)
                self._segment(seg[m.start() :], line, out, outer_ts)
                return
        if m is not None:
            has_prefix = True
            self._logger_prefix(ctx, m.groups(), out)
            msg = seg[m.end() :]
        else:
            msg = seg
            if outer_ts is None and self._last_stamp is not None:
                # an unprefixed line (traceback, wrapper output): the best known time is the last stamp
                ctx.year, ctx.mo, ctx.dd, ctx.hms = self._last_stamp
        # a held-back "non-default args" dict a terminal wrapped: does this line continue it?
        if self._held_args is not None:
            if not has_prefix and self._join_args(msg, out):
                self._count_vllm()
                return
            self._release_args(out)
        # a held-back incomplete stats record: does this line continue it?
        if self._pending is not None:
            if not has_prefix and self._try_join(msg, out):
                self._count_vllm()
                return
            self._finish_pending(out)
        if has_prefix:
            self._count_vllm()
        # two records glued on one physical line: split at the second prefix
        if m is not None and ("INFO " in msg or "WARNING " in msg or "ERROR " in msg or "DEBUG " in msg):
            g = E.GLUED_RE.search(msg)
            if g is not None and g.start() > 0:
                self._message(msg[: g.start()], ctx, out)
                self._segment(msg[g.start() :], line, out, outer_ts)
                return
        if m is None and msg[:5] in ("INFO:", "WARNI", "ERROR"):
            a = ACCESS_RE.match(msg)
            if a is not None:
                self._access(E.envelope(ctx), a, out)
                return
        r = E.ray_repeat(msg)
        if r is not None:
            msg, ctx.repeat = r
        if m is None:
            s = E.suffix_location(msg)
            if s is not None:
                msg, ctx.logger_file, ctx.logger_line = s
        ctx.bare = not has_prefix
        self._message(msg, ctx, out)

    @staticmethod
    def _rank(ctx: Ctx, seg: str) -> bool:
        """Whether seg begins with PyTorch's "[rankN]:" (then ctx.rank is N)."""
        r = E.RANK_RE.match(seg)
        if r is None:
            return False
        ctx.rank = int(r.group("rank"))
        return True

    def _process(self, ctx: Ctx, name: str | None, pid: str, out: list[LogEvent]) -> None:
        """One "(Name pid=N)" process prefix read into ctx (the engine, if the name tells it)."""
        if name:
            self.processes.add(name)
            ctx.process = name
            if name == "APIServer" and len(self.api_servers) < 16:
                self.api_servers.add(int(pid))
            if name == "APIServer" and (not self.api_runs or self.api_runs[-1] != int(pid)):
                if len(self.api_runs) < RUNS_KEPT:
                    self.api_runs.append(int(pid))
            if self._engine is None:
                eng = E.engine_from_process(name)
                if eng is not None:
                    self._note_engine(eng, ctx, out)
        ctx.pid = int(pid)

    def _logger_prefix(self, ctx: Ctx, groups: tuple[str, ...], out: list[LogEvent]) -> None:
        """The logger prefix's (level, mo, dd, hh, mi, ss, file, line) read into ctx: the stamp's year
        inferred, the last stamp kept, the engine if the logger file tells it."""
        level, mo, dd, hh, mi, ss, lf, ln = groups
        self._errors.said()
        ctx.level = "WARNING" if level == "WARN" else level
        ctx.mo = int(mo)
        ctx.dd = int(dd)
        ctx.hms = (hh, mi, ss)
        ctx.logger_file = lf.rsplit("/", 1)[-1] if "/" in lf else lf
        ctx.logger_line = int(ln)
        self._clock.stamp(ctx)
        self._last_stamp = (ctx.year, ctx.mo, ctx.dd, ctx.hms)
        if self._engine is None:
            eng = E.engine_from_logger_file(ctx.logger_file)
            if eng is not None:
                self._note_engine(eng, ctx, out)

    def _canonical_stats(self, c: canon.Canonical, line: LogLine, out: list[LogEvent]) -> None:
        """A canonical V1 stats line (``canon``): the general path's steps for it, in its order, without its search."""
        name, pid, prefix, fields = c
        ctx = Ctx(line.source, line.lineno)
        self._process(ctx, name, pid, out)
        self._logger_prefix(ctx, prefix, out)
        self._count_vllm()
        self._emit_sample("v1", ctx, out, **fields)

    def _json_record(self, seg: str, line: LogLine, out: list[LogEvent], outer_ts: datetime | None) -> bool:
        """A JSON line: a whole vLLM line inside (docker json-file, k8s) or a JSON logging record."""
        rec = E.json_object(seg)
        if rec is None:
            return False
        rec_ts = E.json_record_time(rec)
        inner = rec.get("log")
        if isinstance(inner, str):  # a whole vLLM line inside, stamped outside
            outer_ts = rec_ts or outer_ts
            inner = inner.rstrip("\n")
            if "\r" in inner:
                for s in inner.split("\r"):
                    if s.strip():
                        self._segment(s, line, out, outer_ts)
            elif inner.strip():
                self._segment(inner, line, out, outer_ts)
            return True
        msg = rec.get("message", rec.get("msg"))
        if not isinstance(msg, str):
            return False
        if PREFIX_RE.search(msg) is not None or msg.startswith("("):
            self._segment(msg, line, out, outer_ts)
            return True
        ctx = Ctx(line.source, line.lineno, outer_ts=outer_ts)
        E.json_logging_ctx(rec, ctx, rec_ts)
        if ctx.process is not None:
            self.processes.add(ctx.process)
        name = rec.get("name") or rec.get("logger")
        if isinstance(name, str) and name.startswith("vllm"):
            self._count_vllm()
            self._errors.said()
        elif name == "uvicorn.access" and (a := _JSON_ACCESS_RE.match(msg)) is not None:
            # uvicorn's access record in vLLM's JSON format: the message without uvicorn's own prefix
            self._access(E.envelope(ctx), a, out)
            return True
        if self._pending is not None:
            self._finish_pending(out)
        self._message(msg, ctx, out)
        exc = rec.get("exc_info")  # vLLM's JSON formatter (0.32+) puts the traceback here, not on lines
        if isinstance(exc, str):
            # another program's JSON logger (NIM's launcher) holds a traceback as Python prints it: read as a bare one
            own = isinstance(name, str) and name.startswith("vllm")
            tb_ctx = ctx if own else Ctx(line.source, line.lineno, outer_ts=outer_ts, bare=True)
            for tb_line in exc.splitlines()[-_MAX_EXC_LINES:]:
                if tb_line.strip():
                    self._message(tb_line, tb_ctx, out)
        return True

    def _count_vllm(self) -> None:
        if self._counted_line != self._cur:
            self._counted_line = self._cur
            self.vllm_lines += 1

    def _access(self, env: Envelope, a: re.Match[str], out: list[LogEvent]) -> None:
        """uvicorn's access line (any of its forms): the server was answering requests; a 5xx is remembered for the
        next message (``errexit``)."""
        self._count_vllm()
        status = int(a.group("status"))
        out.append(AccessLog(env, a.group("method"), a.group("path"), status))
        self._errors.answers.answer(env, a.group("method"), a.group("path"), status, self._requested)
        self._after_5xx = status >= 500
        self._stats_seen = True

    # ------------------------------------------------------------------ message dispatch
    def _message(self, msg: str, ctx: Ctx, out: list[LogEvent]) -> None:
        self._errors.boundary(msg, ctx, out)
        self._errors.settle(ctx, out, msg)
        after_5xx, self._after_5xx = self._after_5xx, False
        n0 = len(out)
        # (a record wrapped inside its head — "…generation throughput: 31" / "0.2 tokens/s, Running: …" — is held)
        if (stats.RUNNING in msg or stats.HEAD in msg) and self._stats(msg, ctx, out):
            pass
        elif stats.SPEC_V0 in msg or stats.SPEC_V1 in msg:
            f = stats.spec_decode_fields(msg)
            if f is not None:
                out.append(SpecDecodeSample(E.envelope(ctx), **f))
        elif stats.PREFIX_V0 in msg:
            p = stats.prefix_hit_v0(msg)
            if p is not None:
                out.append(PrefixCacheSample(E.envelope(ctx), *p))
        elif stats.PREEMPTED in msg:
            q = stats.preemption(msg)
            if q is not None:
                out.append(Preemption(E.envelope(ctx), *q))
        else:
            groups = self._groups
            # a request handler's logger tells on its ERROR records only
            err = ctx.level in triggers.ERROR_LEVELS
            if (groups & triggers.SERVING or err) and served.shows_serving(
                msg, ctx.logger_file if err else None
            ):
                self._stats_seen = True  # a request handler, a request added: the engine had started
                if served.ABORTED in msg:
                    self._errors.aborted(self._cur)
            if groups & triggers.STARTUP:
                self._startup(msg, ctx, out)
            n1 = len(out)
            if groups & triggers.FAILURE or ctx.level in triggers.ERROR_LEVELS:
                run = self._run()._replace(after_5xx=after_5xx)
                self._errors.message(msg, ctx, run, self._cur, out, bool(groups & triggers.FAILURE))
            if ctx.level is None and (ctx.pid is not None or ctx.rank is not None or ctx.bare):
                self._errors.raw_line(
                    msg, ctx, self._run(), self._cur, out, len(out) > n1 or bool(self._errors.held_now)
                )
                # a V1 client's raise after an engine death
                self._stats_seen = self._stats_seen or self._errors.raw.started
            if groups & triggers.SHUTDOWN and begins_shutdown(msg):
                died = errexit.server_exits_after_dead_engine(msg, after_5xx, self._requested)
                if died is not None:  # uvicorn told to exit by vLLM's launcher: not a stop asked for
                    self._errors.report(died, msg, ctx, self._cur, out)
                self._shutdown = True
                if died is None and requested_shutdown(msg):
                    self._requested = True
        # a bare line is vLLM's when it tells something, or is a frame of vLLM's own code, and not only
        # when it is an exception line (anybody's) of a traceback through no vLLM frame
        if (
            (told := out[n0:] + self._errors.held_now)
            and not (ctx.bare and not self._errors.raw.vllm_seen and frames.anybodys(told))
        ) or (ctx.bare and frames.vllm_frame(msg)):
            self._count_vllm()

    # ------------------------------------------------------------------ stats
    def _stats(self, msg: str, ctx: Ctx, out: list[LogEvent]) -> bool:
        parsed = stats.parse_stats(msg)
        if parsed is None:
            return False
        fields, complete, n_clauses = parsed
        if complete:
            self._emit_stats(fields, ctx, out)
        else:
            self._finish_pending(out)
            self._pending = (ctx, msg, n_clauses, 0)
            self._count_vllm()
        return True

    def _try_join(self, cont: str, out: list[LogEvent]) -> bool:
        """Whether cont continues the held-back record (then it is emitted or held longer)."""
        assert self._pending is not None
        ctx, msg, n_clauses, joins = self._pending
        cand = msg + cont
        parsed = stats.parse_stats(cand)
        if parsed is None:
            return False
        fields, complete, n = parsed
        if complete:
            self._pending = None
            self._emit_stats(fields, ctx, out)
            return True
        if n > n_clauses and joins + 1 < _MAX_JOINS:
            self._pending = (ctx, cand, n, joins + 1)
            return True
        return False

    def _finish_pending(self, out: list[LogEvent]) -> None:
        if self._pending is None:
            return
        ctx, msg, _, _ = self._pending
        self._pending = None
        self.damaged_lines += 1  # a stats record cut short: what it holds is kept, the rest is lost
        parsed = stats.parse_stats(msg)
        if parsed is not None and parsed[0].get("_required"):
            self._emit_stats(parsed[0], ctx, out)

    def _emit_stats(self, f: dict[str, Any], ctx: Ctx, out: list[LogEvent]) -> None:
        self._emit_sample(f["fmt"], ctx, out, **stats.stats_fields(f))

    def _emit_sample(self, fmt: str, ctx: Ctx, out: list[LogEvent], **fields: Any) -> None:
        self.formats.add("vllm-" + fmt)
        self._stats_seen = True
        self._note_engine(fmt, ctx, out)
        out.append(StatsSample(E.envelope(ctx), fmt, **fields))

    # ------------------------------------------------------------------ startup facts
    def _startup(self, msg: str, ctx: Ctx, out: list[LogEvent]) -> None:
        if self._held_args is None and _cut_args(msg):
            self._held_args = (ctx, msg, 0)  # wrapped by a terminal: the next lines may continue it
            return
        self._startup_facts(msg, ctx, out)

    def _join_args(self, cont: str, out: list[LogEvent]) -> bool:
        """Whether cont continues the held-back args dict (then it is read, or held longer)."""
        assert self._held_args is not None
        ctx, msg, joins = self._held_args
        if not cont.strip() or joins + 1 > _MAX_JOINS:
            return False
        msg += cont
        if _cut_args(msg):
            self._held_args = (ctx, msg, joins + 1)
        else:
            self._held_args = None
            self._startup_facts(msg, ctx, out)
        return True

    def _release_args(self, out: list[LogEvent]) -> None:
        """A held-back args dict nothing continued: the flags it holds, and a "flags_damaged" fact
        (the flags it lost are unknown, not vLLM's defaults)."""
        if self._held_args is None:
            return
        ctx, msg, _ = self._held_args
        self._held_args = None
        self.damaged_lines += 1
        self._startup_facts(msg, ctx, out)
        out.append(StartupFact(E.envelope(ctx), "flags_damaged", True))

    def _startup_facts(self, msg: str, ctx: Ctx, out: list[LogEvent]) -> None:
        for name, value in startup.startup_facts(msg, ctx):
            if name == startup.NEW_RUN[0]:
                # a (re)start: earlier shutdown and error context no longer apply
                self._shutdown = self._requested = False
                self._errors.restart()
            elif name == startup.STARTING[0]:
                self._shutdown = self._requested = False
            elif name == "engine":
                self._note_engine(value, ctx, out)
            else:
                out.append(StartupFact(E.envelope(ctx), name, value))
            if name == "phase" or name in startup.KV_SIZED or name == startup.NEW_RUN[0]:
                self._loading = name == "phase" and value in startup.LOADING_PHASES

    def _note_engine(self, eng: str, ctx: Ctx, out: list[LogEvent]) -> None:
        if eng != self._engine:
            self._engine = eng
            out.append(StartupFact(E.envelope(ctx), "engine", eng))

    def _run(self) -> RunState:
        return RunState(
            self._shutdown, self._stats_seen, self._requested, self.vllm_lines > 0, loading=self._loading
        )


def parse_text(text: str, source: str = "<text>", *, year: int | None = None) -> list[LogEvent]:
    """Convenience: feed every line of text through a new Parser and flush."""
    p = Parser(year=year)
    out: list[LogEvent] = []
    for i, t in enumerate(text.split("\n"), 1):
        out.extend(p.feed(LogLine(source, i, t)))
    out.extend(p.flush())
    return out
