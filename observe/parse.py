"""The vLLM log grammar: physical lines in, typed events out (every vLLM version, 0.1 → today).

Why a stateful parser: vLLM logs are read from real terminals, containers and issue pastes.
A terminal hard-wraps a stats record across two physical lines ("Running: 32 r" / "eqs, …"),
two records get glued on one line, tqdm bars share a line through ``\\r``, a traceback repeats
the same OOM on every re-logged line, and vLLM's "MM-DD HH:MM:SS" stamp has no year. So a
:class:`Parser` keeps a little state per source stream (a held-back incomplete record, the
inferred year, recently reported errors, whether a shutdown began) and emits events from
``observe.model`` with an :class:`~observe.model.Envelope` saying where each came from.

Rules this module keeps:

* pure — no I/O, no clock; the caller supplies the year to assume (e.g. the file's mtime year);
* ``feed()`` never raises, whatever the text (surrogates, control characters, binary junk);
* a truncated or broken record is dropped or has fields left ``None`` — never mis-read: every
  numeric clause is matched together with its unit (``reqs``, ``%``, ``tokens/s``), so a
  number cut short at the end of a paste does not match at all;
* stats lines are a SET of optional ``Key: value`` clauses, unknown clauses are ignored;
* nothing from a log line is executed: dict reprs go through ``ast.literal_eval`` only.

The formats and the commits that introduced them are listed in the project docs
(``VLLM-FORMATS.md`` of the design notes); tests cite them per form.
"""

from __future__ import annotations

import ast
import json
import re
from collections import deque
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from observe.model import (
    AccessLog,
    EngineError,
    Envelope,
    LogEvent,
    LogLine,
    Preemption,
    PrefixCacheSample,
    SpecDecodeSample,
    StartupFact,
    StatsSample,
)

__all__ = ["Parser", "parse_text", "DEFAULT_YEAR"]

#: Year assumed for vLLM's year-less stamps when neither the caller nor an outer timestamp
#: gives one. 2000 is a leap year, so a genuine "02-29" stamp still parses.
DEFAULT_YEAR = 2000

_A = re.ASCII

# ----------------------------------------------------------------------------- line anatomy
# ANSI colour codes: real ESC, the "←[" rendering of ESC in some terminals, and bare "[1;36m"
# remnants left when a paste drops the ESC byte.
_ANSI_RE = re.compile(r"(?:\x1b|\u2190)?\[(?:\d{1,3}(?:;\d{1,3})*)?m", _A)

# Outer wrappers, stripped from the start of a line (in any nesting order).
_WRAP_RE = re.compile(
    r"""(?:
      [ \t]*\|[ \t]                                                              # Buildkite gutter
    | (?P<rfc>\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?)[ \t]+ # docker logs -t
    | \[(?P<brk>\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?)\][ \t]+  # CI/app
    | (?P<jd>[A-Z][a-z]{2}[ ][ \d]\d[ ]\d\d:\d\d:\d\d)[ ]\S+[ ][^\s:\[]+(?:\[\d+\])?:[ ]     # journald
    | [A-Za-z0-9][\w.-]*?[-_]\d+[ \t]+\|[ \t]?                                    # compose svc-1 |
    )""",
    re.X | _A,
)

# vLLM's own process prefix "(Name pid=N)", "(VllmWorker rank=1 pid=N)", "(VllmWorker TP0 pid=N)",
# "(RayWorkerWrapper pid=N, ip=10.0.0.1)"; nested prefixes are peeled one by one.
_PROC_RE = re.compile(
    r"\((?:(?P<name>[A-Za-z][\w-]*)(?: (?:rank=(?P<rank>\d+)|(?P<dims>[A-Z]+\d+(?:_[A-Z]+\d+)*)))? )?"
    r"pid=(?P<pid>\d+)(?:, ip=[0-9A-Fa-f.:]+)?\)[ \t]*",
    _A,
)

# The logger prefix: "INFO 02-28 21:48:18 metrics.py:161] msg" (2023) and
# "INFO 05-12 10:11:12 [loggers.py:116] msg" (2025-02-24 →), "[v1/metrics/loggers.py:236]" (2025-09 →).
_LEVELS = "DEBUG|INFO|WARNING|WARN|ERROR|CRITICAL"
_PREFIX_RE = re.compile(
    r"(?P<level>"
    + _LEVELS
    + r") (?P<mo>\d\d)-(?P<dd>\d\d) (?P<hh>\d\d):(?P<mi>\d\d):(?P<ss>\d\d)(?:[.,]\d+)? "
    r"\[?(?P<file>[\w./-]+?):(?P<ln>\d+)\] ?",
    _A,
)
# A second prefix inside a message: two records glued on one physical line.
_GLUED_RE = re.compile(
    r"(?:\([A-Za-z][\w-]*(?: [\w=]+)? pid=\d+(?:, ip=[0-9A-Fa-f.:]+)?\) )?(?:"
    + _LEVELS
    + r") \d\d-\d\d \d\d:\d\d:\d\d ",
    _A,
)
# lighteval and similar wrappers move the logger location to the end: "… (scheduler.py:1558)".
_SUFFIX_LOC_RE = re.compile(r"\s\((?P<file>[\w.-]+\.py):(?P<ln>\d+)\)\s*$", _A)
_RAY_REPEAT_RE = re.compile(r"\s*\[repeated (\d+)x across cluster\]\s*$", _A)
_ACCESS_RE = re.compile(
    r"(?:INFO|WARNING|ERROR):\s+\S+ - \"(?P<method>[A-Z]+) (?P<path>\S+) HTTP/[\d.]+\" (?P<status>\d{3})\b",
    _A,
)

# ----------------------------------------------------------------------------- stats grammar
# One alternation over every known clause; each numeric value is captured with its unit.
# One generic "Key: number[unit]" clause; known keys are checked against their unit below, so a
# number cut short ("Running: 32 r", "usage: 17") never matches with the right unit.
_STATS_CLAUSE_RE = re.compile(
    r"([A-Z][A-Za-z ]{0,40}): (\d{1,15}(?:\.\d{1,6})?)( tokens/s| reqs|%|(?![\w.]))", _A
)
_KNOWN_KEYS = frozenset(
    {
        "Avg prompt throughput",
        "Avg generation throughput",
        "Throughput",
        "Running",
        "Waiting",
        "Pending",
        "Swapped",
        "Deferred",
        "Corrupted",
        "Preemptions",
        "External prefix cache hit rate",
        "Prefix cache hit rate",
        "MM cache hit rate",
    }
)
_UNIT = {
    "Avg prompt throughput": " tokens/s",
    "Avg generation throughput": " tokens/s",
    "Throughput": " tokens/s",
    "Running": " reqs",
    "Waiting": " reqs",
    "Pending": " reqs",
    "Swapped": " reqs",
    "Deferred": " reqs",
    "Corrupted": " reqs",
    "Preemptions": "",
    "External prefix cache hit rate": "%",
    "Prefix cache hit rate": "%",
    "MM cache hit rate": "%",
}
_ENGINE_HEAD_RE = re.compile(r"\s*(?:Engine (?P<idx>\d+):|(?P<agg>\d+) Engines Aggregated:)\s*", _A)
_TAIL_CLAUSE_RE = re.compile(r",?\s*(?P<key>[A-Z][A-Za-z0-9 /]*?): \S", _A)

# ----------------------------------------------------------------------------- companion lines
_PREFIX_HIT_V0_RE = re.compile(
    r"Prefix cache hit rate: GPU: (?P<gpu>\d+(?:\.\d+)?)%, CPU: (?P<cpu>\d+(?:\.\d+)?)%", _A
)
_SPEC_FIELD_RE = re.compile(
    r"(?P<key>Avg Draft acceptance rate|Draft acceptance rate|System efficiency|Mean acceptance length"
    r"|Number of speculative tokens|Number of accepted tokens|Number of draft tokens(?: tokens)?"
    r"|Number of emitted tokens(?: tokens)?|Accepted|Drafted|Per-position acceptance rate): "
    r"(?P<val>\d+(?:\.\d+)?(?:, \d+(?:\.\d+)?)*)(?P<unit>%| tokens(?![/\w])|(?=[,.])|\s*$)",
    _A,
)
_PREEMPT_RE = re.compile(r"is preempted by (?:PreemptionMode\.)?(?P<mode>[A-Z]{1,20}) mode", _A)
_CUMULATIVE_RE = re.compile(r"total_num_cumulative_preemption=(?P<n>\d+)\s*$", _A)

# ----------------------------------------------------------------------------- startup facts
_VERSION_RES = (
    re.compile(r"vLLM API server version (?P<v>[\w.+-]+)", _A),
    re.compile(r"vLLM server version (?P<v>[\w.+-]+?)(?:,|\s|$)", _A),
    re.compile(r"Initializing an? (?:(?P<eng>V[01]) )?LLM engine \(v(?P<v>[\w.+-]+)\)", _A),
    re.compile(r"[\u2580-\u259f]\s+version (?P<v>\d[\w.+-]*)\s*$"),  # the startup logo (2026 →)
)
_ENGINE_INIT_RE = re.compile(r"Initializing an? (?:(?P<eng>V[01]) )?LLM engine\b", _A)
_BLOCKS_RE = re.compile(r"# (?P<dev>\w+) blocks: (?P<n>\d+)(?:, # CPU blocks: (?P<cpu>\d+))?", _A)
_KV_SIZE_RE = re.compile(r"(?P<dev>[A-Za-z]+) KV cache size: (?P<n>\d[\d,]*) tokens", _A)
_CONCURRENCY_RE = re.compile(
    r"Maximum concurrency for (?P<len>\d[\d,]*) tokens per request: (?P<x>\d+(?:\.\d+)?)x", _A
)
_AVAIL_KV_RE = re.compile(r"Available KV cache memory: (?P<g>\d+(?:\.\d+)?) GiB", _A)
_CPU_KV_SET_RE = re.compile(
    r"(?:Explicitly|Auto) set \((?P<g>\d+(?:\.\d+)?)/(?P<t>\d+(?:\.\d+)?)\) GiB for KV cache", _A
)
_WEIGHTS_RE = re.compile(
    r"(?:Loading model weights|Model loading) took (?P<g>\d+(?:\.\d+)?) Gi?B(?: memory)?(?: and (?P<s>\d+(?:\.\d+)?) seconds)?",
    _A,
)
_PROFILE_KV_RE = re.compile(
    r"(?P<key>total_gpu_memory|kv_cache_size|gpu_memory_utilization)=(?P<v>\d+(?:\.\d+)?)(?P<u>GiB|Gib|,|\.|\s|$)",
    _A,
)
_PROFILE_3L_TOTAL_RE = re.compile(
    r"total_gpu_memory \((?P<t>\d+(?:\.\d+)?)GiB\) x gpu_memory_utilization \((?P<u>\d+(?:\.\d+)?)\)", _A
)
_PROFILE_3L_KV_RE = re.compile(
    r"the rest of the memory reserved for KV Cache is (?P<g>-?\d+(?:\.\d+)?)GiB", _A
)
_CHUNKED_RE = re.compile(r"Chunked prefill is enabled with max_num_batched_tokens=(?P<n>\d+)\.", _A)
_INIT_TOOK_RE = re.compile(
    r"init engine \(profile, create kv cache, warmup model\) took (?P<s>\d+(?:\.\d+)?) s", _A
)
_OVERRIDE_RE = re.compile(
    r"Overriding num_gpu_blocks=(?P<old>\d+) with num_gpu_blocks_override=(?P<new>\d+)\b", _A
)
_MAX_MODEL_LEN_RE = re.compile(r"Using max model len (?P<n>\d+)\s*$", _A)
# the launch command pasted above a log: "[$ ][ENV=1 ]vllm serve MODEL --flag v …" or the module form
_COMMAND_RE = re.compile(
    r"^\s*(?:[$#>]\s+)?(?P<env>(?:[A-Z_][A-Z0-9_]*=\S*\s+)*)"
    r"(?:vllm\s+serve\b|python[\d.]*\s+-m\s+vllm\.entrypoints\.(?:openai\.api_server|api_server|cli\.main\s+serve)\b)"
    r"(?P<args>.*)$",
    _A,
)

# ----------------------------------------------------------------------------- errors
_OOM_RE = re.compile(r"(?P<dev>CUDA|HIP|XPU|MPS|NPU) out of memory", _A)
_SIZE = r"\d{1,12}(?:\.\d{1,6})? [KMGT]i?B"
_OOM_FIELDS = (
    ("tried_to_allocate", re.compile(r"Tried to allocate (" + _SIZE + r")", _A)),
    ("gpu", re.compile(r"\bGPU (\d+)(?: has|;)", _A)),
    (
        "total_capacity",
        re.compile(r"(" + _SIZE + r") total capacity|total capac?i?ty of (" + _SIZE + r")", _A),
    ),
    ("free", re.compile(r"of which (" + _SIZE + r") is free|(" + _SIZE + r") free;", _A)),
    (
        "process_in_use",
        re.compile(r"this process has (" + _SIZE + r") memory in use|has (" + _SIZE + r") memory in use", _A),
    ),
    (
        "allocated_by_pytorch",
        re.compile(r"(" + _SIZE + r") is allocated by PyTorch|(" + _SIZE + r") already allocated", _A),
    ),
    ("reserved_unallocated", re.compile(r"(" + _SIZE + r") is reserved by PyTorch but unallocated", _A)),
    ("reserved_by_pytorch", re.compile(r"(" + _SIZE + r") reserved in total by PyTorch", _A)),
)
_MAX_SEQ_KV_RE = re.compile(
    r"max seq len \((?P<len>\d+)\) is larger than the maximum number of tokens that can be stored in KV cache \((?P<kv>\d+)\)",
    _A,
)
_KV_NEEDED_RE = re.compile(
    r"To serve at least one request with the models?'s max seq len \((?P<len>\d+)\), \((?P<need>\d+(?:\.\d+)?) Gi?B KV cache "
    r"is needed, which is larger than the available KV cache memory \((?P<avail>-?\d+(?:\.\d+)?) Gi?B\)"
    r"(?:\. Based on the available memory, the estimated maximum model length is (?P<est>\d+)\.)?",
    _A,
)
_FREE_MEM_RE = re.compile(
    r"Free memory on device(?: (?P<dev>\S+))? \((?P<free>\d+(?:\.\d+)?)/(?P<total>\d+(?:\.\d+)?) GiB\) on startup is less than "
    r"desired GPU memory utilization \((?P<util>\d+(?:\.\d+)?), (?P<req>\d+(?:\.\d+)?) GiB\)",
    _A,
)
_WORKER_EXC_RE = re.compile(
    r"Exception in worker (?P<worker>\S+) while processing method (?P<method>\w+)", _A
)
_PROMPT_LIMIT_RE = re.compile(
    r"Input prompt \((?P<n>\d+) tokens\)(?: \+ lookahead slots \((?P<la>\d+)\))? is too long and exceeds (?:limit of (?P<lim>\d+)\b|the capacity of block_manager)",
    _A,
)
_CONTEXT_LEN_RE = re.compile(
    r"maximum context length is (?P<lim>\d+) tokens\. However, you requested (?P<n>\d+) tokens", _A
)
_MAX_POS_RE = re.compile(
    r"User-specified max_model_len \((?P<len>\d+)\) is greater than the derived max_model_len "
    r"\((?P<src>\w+)=(?P<derived>\d+(?:\.\d+)?)\b",
    _A,
)

_ERROR_TRIGGERS = (
    "out of memory",
    "max seq len",
    "No available memory for the cache blocks",
    "Free memory on device",
    "Engine core initialization failed",
    "EngineCore failed to start",
    "EngineCore hit an exception",
    "EngineDeadError",
    "output_handler failed",
    "Exception in worker",
    "WorkerProc hit an exception",
    "Input prompt (",
    "maximum context length is",
    "User-specified max_model_len",
)
# kinds reported once per traceback: the same failure re-logged line by line, or re-raised by
# the parent process, within this many physical lines counts once.
_DEDUP_KINDS = frozenset(
    {
        "oom",
        "max_seq_len_exceeds_kv",
        "kv_needed_exceeds_available",
        "no_available_memory",
        "free_memory_below_utilization",
        "engine_core_failed",
        "max_position_exceeded",
        "shutdown_noise",
    }
)
_DEDUP_WINDOW = 400
# logger file names that exist in only one engine's code tree (a weak hint, used only while the
# log has said nothing more explicit about the engine)
_V0_FILES = frozenset(
    {
        "model_runner.py",
        "multiproc_worker_utils.py",
        "worker.py",
        "gpu_executor.py",
        "distributed_gpu_executor.py",
        "client.py",
        "engine.py",
    }
)
_V1_FILES = frozenset(
    {
        "gpu_model_runner.py",
        "loggers.py",
        "kv_cache_utils.py",
        "gpu_worker.py",
        "core_client.py",
        "multiproc_executor.py",
    }
)
_MAX_JOINS = 3
_MAX_LITERAL = 200_000


def _gib(size: str | None) -> float | None:
    """'20.00 MiB' → GiB as float (binary units; PyTorch prints binary units)."""
    if not size:
        return None
    num, _, unit = size.partition(" ")
    try:
        v = float(num)
    except ValueError:
        return None
    scale = {"K": 2.0**-20, "M": 2.0**-10, "G": 1.0, "T": 1024.0}.get(unit[:1])
    return None if scale is None else round(v * scale, 6)


def _int(s: str) -> int:
    return int(s.replace(",", ""))


# ----------------------------------------------------------------------------- safe literals
_SPECIAL_RE = re.compile(r"[,'\"()\[\]{}<>\\]")


def _split_top(s: str) -> tuple[list[str], bool]:
    """Split a repr body on top-level ", " (outside brackets and quotes).

    Returns the pieces and whether the text ended balanced (no open bracket or quote). Only the
    special characters are visited (a regex finds them), so long config lines stay cheap."""
    parts: list[str] = []
    depth = 0
    quote = ""
    start = 0
    skip_to = -1
    for m in _SPECIAL_RE.finditer(s):
        i = m.start()
        if i < skip_to:
            continue
        c = s[i]
        if quote:
            if c == "\\":
                skip_to = i + 2
            elif c == quote:
                quote = ""
        elif c == "'" or c == '"':
            quote = c
        elif c in "([{<":
            depth += 1
        elif c in ")]}>":
            depth -= 1
        elif c == "," and depth == 0:
            parts.append(s[start:i].strip())
            start = i + 1
    tail = s[start:].strip()
    if tail:
        parts.append(tail)
    return parts, depth == 0 and not quote


def _literal(text: str) -> Any:
    """A Python/JSON literal from a log line — literal_eval only, never eval; else the raw text."""
    t = text.strip()
    if not t or len(t) > _MAX_LITERAL:
        return t
    if t in ("true", "false", "null"):
        return {"true": True, "false": False, "null": None}[t]
    if t[0] in "'\"[{(-0123456789" or t in ("None", "True", "False"):
        try:
            return ast.literal_eval(t)
        except Exception:
            pass
        if t[0] in "[{":
            try:
                return json.loads(t)
            except Exception:
                pass
    return t


def parse_dict_repr(text: str) -> dict[str, Any]:
    """``{'max_model_len': 2048, …}`` → dict, safely; a truncated repr yields its complete prefix."""
    t = text.strip()
    if not t.startswith("{") or len(t) > _MAX_LITERAL:
        return {}
    try:
        v = ast.literal_eval(t)
        return v if isinstance(v, dict) else {}
    except Exception:
        pass
    # cut at top-level ", '" boundaries from the end until what remains evaluates
    body = t[1:]
    if len(body) > _MAX_LITERAL // 4:
        return {}
    cuts = [m.start() for m in re.finditer(r", '", body)]
    for cut in reversed(cuts[-64:]):
        try:
            v = ast.literal_eval("{" + body[:cut] + "}")
        except Exception:
            continue
        if isinstance(v, dict):
            return v
    return {}


def parse_kv_repr(text: str, keys: frozenset[str] | tuple[str, ...] | None = None) -> dict[str, Any]:
    """``model='x', max_seq_len=2048, …`` (a config or Namespace repr) → dict of literal values.

    The last pair is dropped when the text looks cut short (a paste truncated mid-value), so a
    number is never read with digits missing."""
    t = text.rstrip()
    closed = False
    if t.endswith(")"):
        inner, ok = _split_top(t[:-1])
        if ok:  # "Namespace(…)" body or the old "…, seed=0)" config form: the ")" closes the repr
            t, closed = t[:-1], True
    parts, balanced = _split_top(t)
    ends_clean = closed or t.endswith((")", "}", "]", "'", '"', ",", ">"))
    if parts and (not balanced or not ends_clean):
        parts = parts[:-1]
    out: dict[str, Any] = {}
    for p in parts:
        k, sep, v = p.partition("=")
        k = k.strip()
        if not sep or not k.isidentifier() or (keys is not None and k not in keys):
            continue
        out[k] = _literal(v.strip())
    return out


_CONFIG_ORDER = (
    "model",
    "max_seq_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "quantization",
    "enforce_eager",
    "kv_cache_dtype",
    "enable_prefix_caching",
    "chunked_prefill_enabled",
    "dtype",
    "block_size",
    "speculative_config",
    "served_model_name",
    "device_config",
    "seed",
)
_CONFIG_KEYS = frozenset(_CONFIG_ORDER)


# ----------------------------------------------------------------------------- parser
@dataclass(slots=True)
class _Ctx:
    """What one logical line carried besides its message."""

    source: str
    lineno: int
    level: str | None = None
    mo: int = 0
    dd: int = 0
    hms: tuple[str, str, str] | None = None  # as printed; converted only when an event needs it
    outer_ts: datetime | None = None
    process: str | None = None
    pid: int | None = None
    logger_file: str | None = None
    logger_line: int | None = None
    repeat: int = 1
    ts: datetime | None = None  # set directly by JSON records
    year: int = DEFAULT_YEAR


class Parser:
    """Stateful, streaming, pure (no I/O). One Parser per source stream (file / rotated set)."""

    def __init__(self, *, year: int | None = None) -> None:
        self.lines = 0
        self.vllm_lines = 0
        self.events = 0
        self.parse_errors = 0  # lines whose text made the parser itself stumble (never raised)
        self.formats: set[str] = set()
        self.processes: set[str] = set()
        self._year = year if year is not None else DEFAULT_YEAR
        self._year_given = year is not None
        self._last_mo = 0
        self._pending: tuple[_Ctx, str, int, int] | None = None  # ctx, msg, n_clauses, joins
        self._recent: deque[tuple[int, tuple]] = deque()  # (lineno, key) of errors already reported
        self._shutdown = False
        self._engine: str | None = None
        self._stats_seen = False
        self._counted_line = -1
        self._last_stamp: tuple[int, int, int, tuple[str, str, str] | None] | None = None
        self._cur = 0  # physical line counter (what lineno means for dedup windows)

    # ------------------------------------------------------------------ public API
    def feed(self, line: LogLine) -> list[LogEvent]:
        """Parse one physical line; returns the events it completes (possibly of earlier lines)."""
        self.lines += 1
        self._cur += 1
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
        self.events += len(out)
        return out

    def flush(self) -> list[LogEvent]:
        """End of stream: emit (or drop, if incomplete) a record held back for re-joining."""
        out: list[LogEvent] = []
        try:
            self._finish_pending(out)
        except Exception:
            self.parse_errors += 1
        self.events += len(out)
        return out

    # ------------------------------------------------------------------ one logical line
    def _segment(
        self, seg: str, line: LogLine, out: list[LogEvent], outer_ts: datetime | None = None
    ) -> None:
        if (
            "\x1b" in seg
            or "\u2190" in seg
            or "[0m" in seg
            or "[0;" in seg
            or "[1;" in seg
            or "[3" in seg
            or "[9" in seg
        ):
            seg = _ANSI_RE.sub("", seg)
        if seg[:5] == "INFO:" and self._pending is None:  # fast path: uvicorn access lines dominate busy logs
            a = _ACCESS_RE.match(seg)
            if a is not None:
                self._count_vllm()
                env = Envelope(
                    source=line.source,
                    lineno=line.lineno,
                    outer_ts=outer_ts,
                    ts=outer_ts.replace(tzinfo=None) if outer_ts is not None else None,
                )
                out.append(AccessLog(env, a.group("method"), a.group("path"), int(a.group("status"))))
                return
        # outer wrappers
        if not seg.startswith(("(", "INFO ", "WARNING ", "ERROR ", "DEBUG ")):
            for _ in range(4):
                m = _WRAP_RE.match(seg)
                if m is None or m.end() == 0:
                    break
                ts_text = m.group("rfc") or m.group("brk")
                if ts_text:
                    outer_ts = _iso(ts_text) or outer_ts
                elif m.group("jd"):
                    outer_ts = self._journal_ts(m.group("jd")) or outer_ts
                seg = seg[m.end() :]
            if seg[:1] == "{" and ('"message"' in seg or '"log"' in seg or '"msg"' in seg):
                if self._json_record(seg, line, out, outer_ts):
                    return
        ctx = _Ctx(line.source, line.lineno, outer_ts=outer_ts)
        # process prefixes, possibly nested "(EngineCore pid=1) (RayWorkerProc pid=2) "
        has_prefix = False
        while seg[:1] == "(":
            m = _PROC_RE.match(seg)
            if m is None:
                break
            has_prefix = True
            name, _, dims, pid = m.groups()
            if name:
                if dims:
                    name = f"{name}_{dims}"
                self.processes.add(name)
                ctx.process = name
                if self._engine is None:
                    self._engine_hint_from_process(name, ctx, out)
            ctx.pid = int(pid)
            seg = seg[m.end() :]
        # the logger prefix
        m = _PREFIX_RE.match(seg)
        if m is None and (
            "INFO " in seg
            or "WARNING " in seg
            or "ERROR " in seg
            or "DEBUG " in seg
            or "CRITICAL " in seg
            or "WARN " in seg
        ):
            m = _PREFIX_RE.search(seg)  # VLLM_LOGGING_PREFIX or an unknown wrapper before the level
        if m is not None:
            has_prefix = True
            level, mo, dd, hh, mi, ss, lf, ln = m.groups()
            ctx.level = "WARNING" if level == "WARN" else level
            ctx.mo = int(mo)
            ctx.dd = int(dd)
            ctx.hms = (hh, mi, ss)
            ctx.logger_file = lf.rsplit("/", 1)[-1] if "/" in lf else lf
            ctx.logger_line = int(ln)
            self._roll_year(ctx)
            self._last_stamp = (ctx.year, ctx.mo, ctx.dd, ctx.hms)
            if self._engine is None:
                lf = ctx.logger_file
                if lf in _V1_FILES:
                    self._note_engine("v1", ctx, out)
                elif lf in _V0_FILES:
                    self._note_engine("v0", ctx, out)
            msg = seg[m.end() :]
        else:
            msg = seg
            if outer_ts is None and self._last_stamp is not None:
                # an unprefixed line (traceback, wrapper output): the best known time is the last stamp
                ctx.year, ctx.mo, ctx.dd, ctx.hms = self._last_stamp
        # a held-back incomplete stats record: does this line continue it?
        if self._pending is not None:
            if not has_prefix:
                if self._try_join(msg, out):
                    self._count_vllm()
                    return
            self._finish_pending(out)
        if has_prefix:
            self._count_vllm()
        # two records glued on one physical line: split at the second prefix
        if m is not None and ("INFO " in msg or "WARNING " in msg or "ERROR " in msg or "DEBUG " in msg):
            g = _GLUED_RE.search(msg)
            if g is not None and g.start() > 0:
                first, rest = msg[: g.start()], msg[g.start() :]
                self._message(first, ctx, out)
                self._segment(rest, line, out, outer_ts)
                return
        if m is None and msg[:5] in ("INFO:", "WARNI", "ERROR"):
            a = _ACCESS_RE.match(msg)
            if a is not None:
                self._count_vllm()
                out.append(
                    AccessLog(self._env(ctx), a.group("method"), a.group("path"), int(a.group("status")))
                )
                return
        if msg.endswith("across cluster]"):
            r = _RAY_REPEAT_RE.search(msg)
            if r is not None:
                ctx.repeat = max(1, int(r.group(1)))
                msg = msg[: r.start()]
        if m is None and msg.endswith(")"):
            s = _SUFFIX_LOC_RE.search(msg)
            if s is not None:
                ctx.logger_file = s.group("file")
                ctx.logger_line = int(s.group("ln"))
                msg = msg[: s.start()]
        self._message(msg, ctx, out)

    def _new_run(self) -> None:
        """A (re)start of the server: earlier shutdown and error context no longer applies."""
        self._shutdown = False
        self._recent.clear()

    def _count_vllm(self) -> None:
        if self._counted_line != self._cur:
            self._counted_line = self._cur
            self.vllm_lines += 1

    # ------------------------------------------------------------------ message dispatch
    def _message(self, msg: str, ctx: _Ctx, out: list[LogEvent]) -> None:
        n0 = len(out)
        if "Running: " in msg and self._stats(msg, ctx, out):
            pass
        elif "Speculative metrics:" in msg or "SpecDecoding metrics:" in msg:
            self._spec(msg, ctx, out)
        elif "Prefix cache hit rate: GPU:" in msg:
            p = _PREFIX_HIT_V0_RE.search(msg)
            if p is not None:
                out.append(PrefixCacheSample(self._env(ctx), float(p.group("gpu")), float(p.group("cpu"))))
        elif "preempted by" in msg:
            p = _PREEMPT_RE.search(msg)
            if p is not None:
                c = _CUMULATIVE_RE.search(msg, p.end())
                out.append(Preemption(self._env(ctx), p.group("mode"), int(c.group("n")) if c else None))
        else:
            self._startup(msg, ctx, out)
            self._errors(msg, ctx, out)
            if "[shutdown]" in msg or "Shutting down" in msg or "Waiting for application shutdown" in msg:
                self._shutdown = True
        if len(out) > n0:
            self._count_vllm()

    # ------------------------------------------------------------------ stats
    def _stats(self, msg: str, ctx: _Ctx, out: list[LogEvent]) -> bool:
        parsed = _parse_stats(msg)
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
        ctx, msg, n_clauses, joins = self._pending  # type: ignore[misc]
        cand = msg + cont
        parsed = _parse_stats(cand)
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
        parsed = _parse_stats(msg)
        if parsed is not None and parsed[0].get("_required"):
            self._emit_stats(parsed[0], ctx, out)

    def _emit_stats(self, f: dict[str, Any], ctx: _Ctx, out: list[LogEvent]) -> None:
        fmt = f["fmt"]
        self.formats.add("vllm-" + fmt)
        self._stats_seen = True
        self._note_engine(fmt, ctx, out)
        out.append(
            StatsSample(
                self._env(ctx),
                fmt,
                engine_index=f.get("engine_index"),
                prompt_tps=f.get("Avg prompt throughput"),
                generation_tps=f.get("Avg generation throughput"),
                throughput_tps=f.get("Throughput"),
                running=f.get("Running"),
                waiting=f.get("Waiting", f.get("Pending")),
                swapped=f.get("Swapped"),
                deferred=f.get("Deferred"),
                preemptions=f.get("Preemptions"),
                kv_usage_pct=f.get("kv_usage_pct"),
                kv_device=f.get("kv_device"),
                cpu_kv_usage_pct=f.get("cpu_kv_usage_pct"),
                prefix_hit_pct=f.get("Prefix cache hit rate"),
                external_prefix_hit_pct=f.get("External prefix cache hit rate"),
                mm_hit_pct=f.get("MM cache hit rate"),
                corrupted=f.get("Corrupted"),
            )
        )

    # ------------------------------------------------------------------ spec decode
    def _spec(self, msg: str, ctx: _Ctx, out: list[LogEvent]) -> None:
        v0_style = "Speculative metrics:" in msg
        vals: dict[str, Any] = {}
        for m in _SPEC_FIELD_RE.finditer(msg):
            key, val, unit = m.group("key"), m.group("val"), m.group("unit")
            if key == "Per-position acceptance rate":
                vals["k"] = len(val.split(", "))
                continue
            if "," in val or (
                unit.strip() == ""
                and m.end() == len(msg)
                and not msg[m.start("val") :].rstrip().endswith(".")
            ):
                continue  # a bare number at the very end of the line may have been cut short
            if key in ("Accepted", "Drafted") and unit != " tokens":
                continue  # "Accepted throughput: …" is a different clause
            vals[key] = (float(val), unit)
        if not vals:
            return

        def num(key: str) -> float | None:
            v = vals.get(key)
            return None if v is None else v[0]

        def count(*keys: str) -> int | None:
            for k in keys:
                v = vals.get(k)
                if v is not None and float(v[0]).is_integer():
                    return int(v[0])
            return None

        rate = vals.get("Avg Draft acceptance rate") or vals.get("Draft acceptance rate")
        rate_pct = None
        if rate is not None:
            rate_pct = rate[0] if rate[1] == "%" else round(rate[0] * 100.0, 4)
        k = vals.get("k")
        out.append(
            SpecDecodeSample(
                self._env(ctx),
                acceptance_rate_pct=rate_pct,
                mean_acceptance_length=num("Mean acceptance length"),
                accepted_tokens=count("Accepted", "Number of accepted tokens"),
                draft_tokens=count("Drafted", "Number of draft tokens", "Number of draft tokens tokens"),
                emitted_tokens=count("Number of emitted tokens", "Number of emitted tokens tokens"),
                num_speculative_tokens=count("Number of speculative tokens")
                if v0_style
                else (k if isinstance(k, int) else None),
                system_efficiency=num("System efficiency"),
            )
        )

    # ------------------------------------------------------------------ startup facts
    def _fact(self, ctx: _Ctx, out: list[LogEvent], name: str, value: Any) -> None:
        out.append(StartupFact(self._env(ctx), name, value))

    def _startup(self, msg: str, ctx: _Ctx, out: list[LogEvent]) -> None:
        if "version" in msg or "LLM engine" in msg:
            for rx in _VERSION_RES:
                v = rx.search(msg)
                if v is not None:
                    self._fact(ctx, out, "version", v.group("v"))
                    self._new_run()
                    break
            e = _ENGINE_INIT_RE.search(msg)
            if e is not None:
                self._shutdown = False
                eng = e.group("eng")
                if eng:
                    self._note_engine(eng.lower(), ctx, out)
                elif ctx.logger_file == "core.py":
                    self._note_engine("v1", ctx, out)  # early V1 (v1/engine/core.py) said "an LLM engine"
                else:
                    self._note_engine("v0", ctx, out)
                i = msg.find("with config: ")
                if i >= 0:
                    cfg = parse_kv_repr(msg[i + len("with config: ") :], _CONFIG_KEYS)
                    useful = {k: cfg[k] for k in _CONFIG_ORDER if k in cfg}
                    if useful:
                        self._fact(ctx, out, "config", useful)
        if "non-default args: " in msg:
            self._new_run()
            d = parse_dict_repr(msg[msg.find("non-default args: ") + len("non-default args: ") :])
            if d:
                self._fact(ctx, out, "flags", _flags(d))
        elif msg.startswith("args: Namespace(") or " args: Namespace(" in msg:
            body = msg[msg.find("Namespace(") + len("Namespace(") :]
            d = parse_kv_repr(body)
            if d:
                self._fact(ctx, out, "flags", _flags(d))
        if " blocks: " in msg:
            b = _BLOCKS_RE.search(msg)
            if b is not None:
                if (
                    b.group("cpu") is not None
                    or b.group("dev") != "CPU"
                    or msg.strip().startswith("# CPU blocks")
                ):
                    self._fact(ctx, out, "num_gpu_blocks", int(b.group("n")))
                if b.group("cpu") is not None:
                    self._fact(ctx, out, "num_cpu_blocks", int(b.group("cpu")))
        if "KV cache" in msg or "KV Cache is" in msg:
            k = _KV_SIZE_RE.search(msg)
            if k is not None:
                self._fact(ctx, out, "kv_cache_tokens", _int(k.group("n")))
            a = _AVAIL_KV_RE.search(msg) or _CPU_KV_SET_RE.search(msg)
            if a is not None:
                self._fact(ctx, out, "available_kv_gib", float(a.group("g")))
            p = _PROFILE_3L_KV_RE.search(msg)
            if p is not None:
                self._fact(ctx, out, "kv_cache_size_gib", float(p.group("g")))
        if "Maximum concurrency" in msg:
            c = _CONCURRENCY_RE.search(msg)
            if c is not None:
                self._fact(ctx, out, "max_concurrency", float(c.group("x")))
                self._fact(ctx, out, "max_concurrency_len", _int(c.group("len")))
        if " took " in msg:
            w = _WEIGHTS_RE.search(msg)
            if w is not None:
                self._fact(ctx, out, "weights_gib", float(w.group("g")))
                if w.group("s"):
                    self._fact(ctx, out, "model_load_seconds", float(w.group("s")))
            t = _INIT_TOOK_RE.search(msg)
            if t is not None:
                self._fact(ctx, out, "init_engine_seconds", float(t.group("s")))
        if "Memory profiling results" in msg:
            for p in _PROFILE_KV_RE.finditer(msg):
                key, unit = p.group("key"), p.group("u")
                if key == "gpu_memory_utilization":
                    if unit in (".", ",", " ") or p.end() == len(msg):
                        self._fact(ctx, out, "gpu_memory_utilization", float(p.group("v")))
                elif unit.startswith("Gi"):
                    name = "total_gpu_memory_gib" if key == "total_gpu_memory" else "kv_cache_size_gib"
                    self._fact(ctx, out, name, float(p.group("v")))
        elif "x gpu_memory_utilization (" in msg:
            p = _PROFILE_3L_TOTAL_RE.search(msg)
            if p is not None:
                self._fact(ctx, out, "total_gpu_memory_gib", float(p.group("t")))
                self._fact(ctx, out, "gpu_memory_utilization", float(p.group("u")))
        if "max_num_batched_tokens=" in msg and "Chunked prefill" in msg:
            c = _CHUNKED_RE.search(msg)
            if c is not None:
                self._fact(ctx, out, "max_num_batched_tokens", int(c.group("n")))
        if "num_gpu_blocks_override" in msg:
            o = _OVERRIDE_RE.search(msg)
            if o is not None:
                self._fact(ctx, out, "num_gpu_blocks_override", int(o.group("new")))
        if "Using max model len" in msg:
            u = _MAX_MODEL_LEN_RE.search(msg)
            if u is not None:
                self._fact(ctx, out, "max_model_len", int(u.group("n")))
        if "MQLLMEngine" in msg:
            self._note_engine("v0", ctx, out)
        if ctx.level is None and "vllm" in msg and ("serve" in msg or "vllm.entrypoints" in msg):
            c = _COMMAND_RE.match(msg)
            if c is not None:
                flags, env = _command_flags(c.group("args"), c.group("env"))
                if flags:
                    self._fact(ctx, out, "flags", flags)
                if env.get("VLLM_USE_V1") in ("0", "1"):
                    self._note_engine("v1" if env["VLLM_USE_V1"] == "1" else "v0", ctx, out)

    # ------------------------------------------------------------------ errors
    def _errors(self, msg: str, ctx: _Ctx, out: list[LogEvent]) -> None:
        for trig in _ERROR_TRIGGERS:
            if trig in msg:
                break
        else:
            return
        body = msg.lstrip()
        if body.startswith(("raise ", 'File "', "#")) or body.startswith(("self.", "return ")):
            return  # a traceback's source-code line quoting the message, not the error itself
        o = _OOM_RE.search(msg)
        if o is not None and (
            "OutOfMemoryError" in msg
            or "Tried to allocate" in msg
            or "occurred when" in msg
            or ctx.level in ("ERROR", "CRITICAL")
            or body.startswith(("RuntimeError", "torch."))
        ):
            d: dict[str, Any] = {"device": o.group("dev")}
            for name, rx in _OOM_FIELDS:
                fm = rx.search(msg)
                if fm is None:
                    continue
                val = next(g for g in fm.groups() if g is not None)
                if name == "gpu":
                    d["gpu"] = int(val)
                elif name == "total_capacity":
                    d["total_capacity_gib"] = _gib(val)
                elif name in ("tried_to_allocate", "free"):
                    d[name] = val
                    d[name + "_gib"] = _gib(val)
                else:
                    d[name + "_gib"] = _gib(val)
            if "warming up sampler" in msg:
                d["phase"] = "sampler_warmup"
            key = ("oom", d.get("gpu"), d.get("tried_to_allocate"), d.get("free"))
            self._error(ctx, out, "oom", msg, d, True, key)
            return
        k = _KV_NEEDED_RE.search(msg)
        if k is not None:
            est = k.group("est")
            d = {
                "max_model_len": int(k.group("len")),
                "kv_needed_gib": float(k.group("need")),
                "kv_available_gib": float(k.group("avail")),
                "estimated_max_model_len": int(est) if est else None,
            }
            self._error(
                ctx,
                out,
                "kv_needed_exceeds_available",
                msg,
                d,
                True,
                ("kvneed", d["max_model_len"], d["kv_needed_gib"]),
            )
            return
        k = _MAX_SEQ_KV_RE.search(msg)
        if k is not None:
            d = {"max_seq_len": int(k.group("len")), "kv_tokens": int(k.group("kv"))}
            self._error(
                ctx, out, "max_seq_len_exceeds_kv", msg, d, True, ("maxseq", d["max_seq_len"], d["kv_tokens"])
            )
            return
        if "No available memory for the cache blocks" in msg:
            self._error(ctx, out, "no_available_memory", msg, {}, True, ("noavail",))
            return
        k = _FREE_MEM_RE.search(msg) if "Free memory on device" in msg else None
        if k is not None:
            d = {
                "device": k.group("dev"),
                "free_gib": float(k.group("free")),
                "total_gib": float(k.group("total")),
                "gpu_memory_utilization": float(k.group("util")),
                "requested_gib": float(k.group("req")),
            }
            self._error(ctx, out, "free_memory_below_utilization", msg, d, True, ("freemem", d["free_gib"]))
            return
        k = _MAX_POS_RE.search(msg) if "User-specified max_model_len" in msg else None
        if k is not None:
            d = {
                "max_model_len": int(k.group("len")),
                "derived_max_model_len": int(float(k.group("derived"))),
                "derived_from": k.group("src"),
            }
            self._error(ctx, out, "max_position_exceeded", msg, d, True, ("maxpos", d["max_model_len"]))
            return
        if "Input prompt (" in msg:
            k = _PROMPT_LIMIT_RE.search(msg)
            if k is not None:
                d = {
                    "prompt_tokens": int(k.group("n")),
                    "limit": int(k.group("lim")) if k.group("lim") else None,
                }
                if k.group("lim") is None:
                    d["reason"] = "block_manager_capacity"
                self._error(ctx, out, "prompt_too_long", msg, d, False, None)
            return
        if "maximum context length is" in msg:
            k = _CONTEXT_LEN_RE.search(msg)
            if k is not None:
                d = {"prompt_tokens": int(k.group("n")), "limit": int(k.group("lim"))}
                self._error(ctx, out, "prompt_too_long", msg, d, False, None)
            return
        w = _WORKER_EXC_RE.search(msg) if "Exception in worker" in msg else None
        if w is not None:
            d = {"worker": w.group("worker"), "method": w.group("method")}
            self._error(ctx, out, "worker_exception", msg, d, True, ("worker", ctx.pid, d["method"]))
            return
        if "WorkerProc hit an exception" in msg:
            self._error(
                ctx, out, "worker_exception", msg, {"worker": ctx.process}, True, ("worker", ctx.pid, None)
            )
            return
        if "EngineDeadError" in msg or "output_handler failed" in msg:
            if self._shutdown:
                self._error(ctx, out, "shutdown_noise", msg, {}, False, ("shutdown",))
            else:
                d = {"phase": "runtime" if self._stats_seen else "startup"}
                self._error(ctx, out, "engine_core_failed", msg, d, True, ("enginecore",))
            return
        if (
            "Engine core initialization failed" in msg
            or "EngineCore failed to start" in msg
            or "EngineCore hit an exception" in msg
        ):
            d = {"phase": "runtime" if self._stats_seen else "startup"}
            self._error(ctx, out, "engine_core_failed", msg, d, True, ("enginecore",))

    def _error(
        self,
        ctx: _Ctx,
        out: list[LogEvent],
        kind: str,
        msg: str,
        details: dict[str, Any],
        fatal: bool,
        key: tuple | None,
    ) -> None:
        if kind in _DEDUP_KINDS and key is not None:
            recent = self._recent
            while recent and self._cur - recent[0][0] > _DEDUP_WINDOW:
                recent.popleft()
            for _, k in recent:
                if _same_failure(k, key):
                    return
            recent.append((self._cur, key))
        out.append(EngineError(self._env(ctx), kind, msg.strip()[:2000], details, fatal))

    # ------------------------------------------------------------------ engine, time, envelope
    def _engine_hint_from_process(self, name: str, ctx: _Ctx, out: list[LogEvent]) -> None:
        if self._engine is not None:
            return
        if name.startswith(("EngineCore", "Worker_", "VllmWorker_")) or name == "VllmWorker":
            self._note_engine("v1", ctx, out)
        elif name == "VllmWorkerProcess":
            self._note_engine("v0", ctx, out)

    def _note_engine(self, eng: str, ctx: _Ctx, out: list[LogEvent]) -> None:
        if eng != self._engine:
            self._engine = eng
            self._fact(ctx, out, "engine", eng)

    def _roll_year(self, ctx: _Ctx) -> None:
        """New Year inference: a month that goes backwards by more than half a year is January
        after December (roll forward); one that jumps forward that much is a late line from
        the previous year (interleaved processes) and gets the previous year."""
        mo = ctx.mo
        if mo == self._last_mo and ctx.outer_ts is None:
            ctx.year = self._year
            return
        if ctx.outer_ts is not None:
            # the wrapper knows the year; vLLM's clock may be hours off (local vs UTC)
            oy = ctx.outer_ts.year
            ctx.year = min((oy - 1, oy, oy + 1), key=lambda y: abs(_safe_delta(y, ctx, ctx.outer_ts)))
            if self._year_given is False or ctx.year > self._year:
                self._year, self._year_given, self._last_mo = ctx.year, True, mo
            return
        last = self._last_mo
        ctx.year = self._year
        if last and mo != last:
            if last - mo > 6:
                self._year += 1
                ctx.year = self._year
            elif mo - last > 6:
                ctx.year = self._year - 1  # an out-of-order line from before New Year
                return
        self._last_mo = mo

    def _journal_ts(self, text: str) -> datetime | None:
        try:
            return datetime.strptime(f"{self._year} {text}", "%Y %b %d %H:%M:%S")
        except ValueError:
            return None

    def _env(self, ctx: _Ctx) -> Envelope:
        ts = ctx.ts
        if ctx.hms is not None:
            try:
                ts = datetime(ctx.year, ctx.mo, ctx.dd, int(ctx.hms[0]), int(ctx.hms[1]), int(ctx.hms[2]))
            except ValueError:
                ts = None
        elif ts is None and ctx.outer_ts is not None:
            ts = ctx.outer_ts.replace(tzinfo=None)
        return Envelope(
            source=ctx.source,
            lineno=ctx.lineno,
            ts=ts,
            outer_ts=ctx.outer_ts,
            level=ctx.level,
            process=ctx.process,
            pid=ctx.pid,
            logger_file=ctx.logger_file,
            logger_line=ctx.logger_line,
            repeat=ctx.repeat,
        )

    # ------------------------------------------------------------------ JSON records
    def _json_record(self, seg: str, line: LogLine, out: list[LogEvent], outer_ts: datetime | None) -> bool:
        if len(seg) > _MAX_LITERAL:
            return False
        try:
            rec = json.loads(seg)
        except Exception:
            return False
        if not isinstance(rec, dict):
            return False
        t = rec.get("time") or rec.get("timestamp") or rec.get("asctime") or rec.get("@timestamp")
        rec_ts = _iso(t) if isinstance(t, str) else None
        inner = rec.get("log")
        if isinstance(inner, str):  # docker json-file / k8s: a whole vLLM line inside, stamped outside
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
        if _PREFIX_RE.search(msg) is not None or msg.startswith("("):
            self._segment(msg, line, out, outer_ts)
            return True
        # a JSON-formatted logging record: its time is the logger's own clock
        ctx = _Ctx(line.source, line.lineno, outer_ts=outer_ts)
        if rec_ts is not None:
            ctx.ts = rec_ts.replace(tzinfo=None)
        lvl = rec.get("levelname") or rec.get("level")
        if isinstance(lvl, str):
            ctx.level = lvl.upper()
        fn, ln = rec.get("filename"), rec.get("lineno")
        if isinstance(fn, str):
            ctx.logger_file = fn
        if isinstance(ln, int) and not isinstance(ln, bool):
            ctx.logger_line = ln
        pid = rec.get("process")
        if isinstance(pid, int) and not isinstance(pid, bool):
            ctx.pid = pid
        pname = rec.get("vllm_process_name")  # the JSON profile proposed upstream (#58171)
        if isinstance(pname, str) and pname:
            ctx.process = pname[:100]
            self.processes.add(ctx.process)
        name = rec.get("name") or rec.get("logger")
        if isinstance(name, str) and name.startswith("vllm"):
            self._count_vllm()
        if self._pending is not None:
            self._finish_pending(out)
        self._message(msg, ctx, out)
        return True


# ----------------------------------------------------------------------------- helpers
def _parse_stats(msg: str) -> tuple[dict[str, Any], bool, int] | None:
    """Read a stats record as a set of clauses → (fields, complete, number of clauses read)."""
    f: dict[str, Any] = {}
    body = msg
    h = _ENGINE_HEAD_RE.match(body)
    if h is None and "Engine" in body:
        h = _ENGINE_HEAD_RE.search(body)
    if h is not None:
        if h.group("idx") is not None:
            f["engine_index"] = int(h.group("idx"))
        else:
            f["engines_aggregated"] = int(h.group("agg"))
    n = 0
    last_end = 0
    devices: dict[str, float] = {}
    blen = len(body)
    for m in _STATS_CLAUSE_RE.finditer(body):
        key, val, unit = m.groups()
        want = _UNIT.get(key)
        if want is None:
            if unit != "%" or not key.endswith(" KV cache usage"):
                continue  # an unknown clause: ignored
            devices[key[:-15].rsplit(" ", 1)[-1]] = float(val)
        else:
            if unit != want:
                continue
            if unit == " reqs" or key == "Preemptions":
                if "." in val:
                    continue
                end = m.end()
                if key == "Preemptions" and (end >= blen or body[end] != ","):
                    continue  # always followed by ", GPU KV cache usage"; at the very end it may be cut
                f[key] = int(val)
            else:
                f[key] = float(val)
        n += 1
        last_end = m.end()
    if "Running" not in f and n == 0:
        return None
    v0 = "Swapped" in f or "Pending" in f or "Throughput" in f or ("CPU" in devices and len(devices) > 1)
    if v0:
        f["fmt"] = "v0"
        gpu_dev = next((d for d in devices if d != "CPU"), None)
        if gpu_dev is not None:
            f["kv_usage_pct"] = devices[gpu_dev]
            f["kv_device"] = gpu_dev
        if "CPU" in devices:
            f["cpu_kv_usage_pct"] = devices["CPU"]
        required = (
            "Running" in f and "Swapped" in f and "Pending" in f and gpu_dev is not None and "CPU" in devices
        )
    else:
        f["fmt"] = "v1"
        if devices:
            dev = next(iter(devices))
            f["kv_usage_pct"] = devices[dev]
            f["kv_device"] = dev
        required = "Running" in f and "Waiting" in f and (bool(devices) or "KV cache usage" not in body)
    f["_required"] = required
    tail = body[last_end:].strip()
    tail_ok = tail in ("", ".")
    if not tail_ok:
        t = _TAIL_CLAUSE_RE.match(tail)
        if t is not None:
            key = t.group("key")
            tail_ok = key not in _KNOWN_KEYS and not key.endswith("KV cache usage")
    return f, bool(required and tail_ok), n


def _same_failure(a: tuple, b: tuple) -> bool:
    """Two error keys name the same failure: same kind, and every detail known on both sides equal
    (a detail-less vLLM OOM hint matches the PyTorch OOM it wraps)."""
    if a[0] != b[0] or len(a) != len(b):
        return False
    return all(x is None or y is None or x == y for x, y in zip(a[1:], b[1:]))


def _flags(d: dict[str, Any]) -> dict[str, Any]:
    """CLI args dict → {"--max-model-len": 2048}; vllm serve's positional model_tag is --model."""
    out: dict[str, Any] = {}
    for k, v in d.items():
        if not isinstance(k, str):
            continue
        if k == "model_tag":
            out.setdefault("--model", v)
            continue
        out["--" + k.replace("_", "-")] = v
    return out


def _command_flags(args: str, env_text: str) -> tuple[dict[str, Any], dict[str, str]]:
    """``MODEL --max-model-len 2048 --enforce-eager`` → {"--model": …, "--max-model-len": 2048, …}.

    Only tokenised (shlex), never run; ``--no-x`` becomes ``--x: False``, ``--a_b`` becomes ``--a-b``."""
    import shlex

    env = dict(kv.split("=", 1) for kv in env_text.split() if "=" in kv)
    text = args.strip().rstrip("\\").strip()
    if len(text) > _MAX_LITERAL:
        return {}, env
    try:
        toks = shlex.split(text, comments=True)
    except ValueError:
        toks = text.split()
    flags: dict[str, Any] = {}
    i = 0
    while i < len(toks):
        t = toks[i]
        if t.startswith("--") and len(t) > 2:
            name, eq, val = t.partition("=")
            name = "--" + name[2:].replace("_", "-")
            if eq:
                flags[name] = _cli_value(val)
            elif i + 1 < len(toks) and not toks[i + 1].startswith("--"):
                flags[name] = _cli_value(toks[i + 1])
                i += 1
            elif name.startswith("--no-"):
                flags["--" + name[5:]] = False
            else:
                flags[name] = True
        elif t in ("|", ">", ">>", "2>&1", "&", "&&", ";"):
            break
        elif "--model" not in flags and not t.startswith("-"):
            flags["--model"] = t
        i += 1
    return flags, env


def _cli_value(v: str) -> Any:
    for conv in (int, float):
        try:
            return conv(v)
        except ValueError:
            pass
    if v[:1] in "{[":
        try:
            return json.loads(v)
        except Exception:
            return v
    return {"true": True, "false": False, "True": True, "False": False}.get(v, v)


def _iso(text: str) -> datetime | None:
    t = text.strip().replace(",", ".")
    if "." in t:  # fromisoformat takes at most microseconds: cut nanoseconds
        head, _, frac = t.partition(".")
        digits = len(frac) - len(frac.lstrip("0123456789"))
        frac = frac[:digits][:6] + frac[digits:]
        t = head + "." + frac
    if t.endswith("Z"):
        t = t[:-1] + "+00:00"
    try:
        return datetime.fromisoformat(t)
    except ValueError:
        return None


def _safe_delta(year: int, ctx: _Ctx, outer: datetime) -> float:
    try:
        h = ctx.hms or ("0", "0", "0")
        inner = datetime(year, ctx.mo, ctx.dd, int(h[0]), int(h[1]), int(h[2]))
    except ValueError:
        return float("inf")
    o = outer.astimezone(UTC).replace(tzinfo=None) if outer.tzinfo else outer
    return (inner - o).total_seconds()


def parse_text(text: str, source: str = "<text>", *, year: int | None = None) -> list[LogEvent]:
    """Convenience: feed every line of text through a new Parser and flush."""
    p = Parser(year=year)
    out: list[LogEvent] = []
    for i, t in enumerate(text.split("\n"), 1):
        out.extend(p.feed(LogLine(source, i, t)))
    out.extend(p.flush())
    return out
