"""The data types that flow through observe (see docs/architecture.md) and the order of severities.

LogLine ──parse──► LogEvent (StatsSample | PrefixCacheSample | SpecDecodeSample | Preemption |
StartupFact | EngineError | AccessLog) ──timeline──► DataFrame ──rules──► Finding ──advise──►
Recommendation (+ AdviceNote where no flag helps). EngineConfig is what we know about how the engine was launched.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

SEVERITIES = ("info", "warning", "critical")  # a Finding's severity, least to most severe


def severity_rank(severity: str) -> int:
    """Where `severity` stands in SEVERITIES: higher is worse; -1 (below info) for an unknown one."""
    return SEVERITIES.index(severity) if severity in SEVERITIES else -1


@dataclass(frozen=True, slots=True)
class LogLine:
    """One physical line as read from a file (already decoded, without its newline)."""

    source: str  # file path (or any stream name)
    lineno: int  # 1-based line number within source
    text: str
    arrival: float | None = None  # wall-clock time it was read (sidecar); None offline


@dataclass(frozen=True, slots=True)
class Envelope:
    """Where an event came from: file position, process prefix and timestamps."""

    source: str = ""
    lineno: int = 0
    ts: datetime | None = None  # best known time (vLLM's own, year inferred) — naive local time
    outer_ts: datetime | None = None  # a wrapper's timestamp (docker -t, CI collector), if any
    level: str | None = None  # INFO / WARNING / ERROR / DEBUG / CRITICAL
    process: str | None = None  # "APIServer", "EngineCore_DP0", "VllmWorkerProcess", ...
    pid: int | None = None
    logger_file: str | None = None  # "loggers.py"
    logger_line: int | None = None  # 236
    repeat: int = 1  # Ray "[repeated Nx across cluster]" counts as N occurrences


@dataclass(frozen=True, slots=True)
class StatsSample:
    """The periodic engine stats line (V0 `metrics.py`, V1 `loggers.py`)."""

    env: Envelope
    fmt: str  # "v0" or "v1"
    engine_index: int | None = None  # V1 "Engine 000:" → 0
    prompt_tps: float | None = None
    generation_tps: float | None = None
    throughput_tps: float | None = None  # v0.1.0–0.1.2 single "Throughput:" field
    running: int | None = None
    waiting: int | None = None  # V0 "Pending" is reported here
    swapped: int | None = None  # V0 only
    deferred: int | None = None  # V1 ≥ 2026-04
    preemptions: int | None = None  # V1 ≥ 0.11.1 per-interval field (only when > 0)
    kv_usage_pct: float | None = None  # "GPU/CPU/XPU/TPU KV cache usage" of the device
    kv_device: str | None = None  # "GPU", "CPU", "XPU", ...
    cpu_kv_usage_pct: float | None = None  # V0 swap space usage
    prefix_hit_pct: float | None = None
    external_prefix_hit_pct: float | None = None
    mm_hit_pct: float | None = None
    corrupted: int | None = None
    # 0.32+ "KV fetch:" clause (requests whose KV a connector fetches): waiting to start, in progress,
    # completed and waiting to be scheduled
    kv_fetch: tuple[int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class PrefixCacheSample:
    """V0 companion line `Prefix cache hit rate: GPU: x%, CPU: y%`."""

    env: Envelope
    gpu_pct: float | None
    cpu_pct: float | None


@dataclass(frozen=True, slots=True)
class SpecDecodeSample:
    """Speculative-decoding metrics line (V0 `Speculative metrics:` or V1 `SpecDecoding metrics:`)."""

    env: Envelope
    acceptance_rate_pct: float | None = None
    mean_acceptance_length: float | None = None
    accepted_tokens: int | None = None
    draft_tokens: int | None = None
    emitted_tokens: int | None = None
    num_speculative_tokens: int | None = None
    system_efficiency: float | None = None


@dataclass(frozen=True, slots=True)
class Preemption:
    """V0 scheduler warning (sampled: printed every 50th preemption)."""

    env: Envelope
    mode: str | None  # "RECOMPUTE" / "SWAP"
    cumulative: int | None  # total_num_cumulative_preemption


@dataclass(frozen=True, slots=True)
class StartupFact:
    """One fact the engine printed at startup, e.g. name="kv_cache_tokens", value=42656.

    Known names: version, engine ("v0"/"v1"), flags (dict of CLI flags as `--name` → value),
    config (dict from the engine-init repr), num_gpu_blocks, num_cpu_blocks, kv_cache_tokens,
    max_concurrency (value) with max_concurrency_len, available_kv_gib, weights_gib,
    model_load_seconds, max_num_batched_tokens (chunked prefill), init_engine_seconds,
    kv_cache_size_gib, total_gpu_memory_gib, gpu_memory_utilization, num_gpu_blocks_override,
    block_size (the size the attention backend picks), kv_extended_gib (0.34's extensible KV cache,
    as extended after warmup),
    hint (dict: flag, direction "up"/"down"/"set", value or None, text — a change vLLM itself
    suggests), phase ("loading_weights" / "profiling" / "kv_cache_init" / "cuda_graph_capture" /
    "warmup": the startup step a line or traceback frame shows the engine in).
    """

    env: Envelope
    name: str
    value: Any


@dataclass(frozen=True, slots=True)
class EngineError:
    """A failure the log reports.

    kind: a ``observe.failures.kinds.FailureKind`` (the table says what each means, the finding it feeds
    and the alert that pages on it); ``fatal``: the engine does not survive this one.
    """

    env: Envelope
    kind: str
    message: str
    details: dict[str, Any] = field(default_factory=dict)
    fatal: bool = False  # ends the engine (startup failure, crash)


@dataclass(frozen=True, slots=True)
class AccessLog:
    """uvicorn access line `INFO:     1.2.3.4:5678 - "POST /v1/completions HTTP/1.1" 200 OK`."""

    env: Envelope
    method: str
    path: str
    status: int


LogEvent = (
    StatsSample | PrefixCacheSample | SpecDecodeSample | Preemption | StartupFact | EngineError | AccessLog
)


@dataclass(slots=True)
class Sample:
    """One Prometheus sample after name normalisation."""

    name: str  # canonical name (see names.py), or the raw name when unknown
    labels: dict[str, str]
    value: float
    raw_name: str = ""


@dataclass(slots=True)
class Scrape:
    """One `/metrics` read: every sample, the time it was taken, and the text's origin."""

    at: datetime | None
    samples: list[Sample]
    source: str = ""
    ok: bool = True
    error: str | None = None
    note: str | None = None  # what a pasted dump held that was not read (a curl line, cut samples)


@dataclass(slots=True)
class EngineConfig:
    """What we know of how an engine was launched. Unknown values are None, never guessed."""

    version: str | None = None
    engine: str | None = None  # "v0" | "v1"
    flags: dict[str, Any] = field(default_factory=dict)  # "--max-num-seqs" → 256 (as read)
    # the flags vLLM itself printed among its parsed arguments ("non-default args:", "args: Namespace(…)"): the
    # release has them, whatever its version (flags.known.supported)
    release_flags: set[str] = field(default_factory=set)
    model: str | None = None
    kv_cache_tokens: int | None = None
    num_gpu_blocks: int | None = None
    block_size: int | None = None
    max_concurrency: float | None = None
    max_concurrency_len: int | None = None  # the request length max_concurrency is given for
    max_model_len: int | None = None
    available_kv_gib: float | None = None
    # the size vLLM 0.34's extensible KV cache was extended to after warmup ("Extended KV cache to N
    # blocks (X GiB)."): the log's proof that the cache is extensible
    kv_extended_gib: float | None = None
    weights_gib: float | None = None
    total_gpu_memory_gib: float | None = None  # from V0 memory-profiling lines, when printed
    gpu_memory_utilization: float | None = None
    max_num_seqs: int | None = None
    max_num_batched_tokens: int | None = None
    tensor_parallel_size: int | None = None
    pipeline_parallel_size: int | None = None
    kv_cache_dtype: str | None = None
    enable_prefix_caching: bool | None = None
    device: str | None = None  # "GPU" / "CPU" (from the stats line's KV word)
    # the "non-default args" line was cut or wrapped beyond repair: a flag missing from `flags` is
    # unknown, never vLLM's default
    flags_damaged: bool = False
    # "api_server": the log's pasted command launched `python -m vllm.entrypoints.(openai.)api_server`
    launcher: str | None = None
    # vLLM's memory-changing environment variables the pasted command set (cmdline.MEMORY_ENV)
    memory_env: dict[str, str] = field(default_factory=dict)
    # the releases the log can come from (versions.VersionRange): exact with a banner, else bounded
    # by the line shapes; ask versions.available(cfg.version_range, since, until) about a flag
    version_range: Any = None


@dataclass(frozen=True, slots=True)
class Finding:
    id: str  # stable: a FindingId (observe/findingids.py)
    severity: str  # "info" | "warning" | "critical"
    title: str
    evidence: str  # human sentence with the numbers
    start: datetime | None = None
    end: datetime | None = None
    where: str | None = None  # "file:line-line"
    data: dict[str, Any] = field(default_factory=dict)  # machine-readable evidence values

    def __post_init__(self) -> None:
        object.__setattr__(self, "id", str(self.id))  # a plain str, also when built from a FindingId


@dataclass(frozen=True, slots=True)
class Recommendation:
    """One flag change of the plan. `alternatives` are other single changes any one of which has
    the same effect (e.g. each makes the engine start); the plan applies this one, the least
    disruptive, and never several of them at once. `coupled` are the changes vLLM would refuse this
    one without (its limits tie two flags): the only case where one recommendation moves two flags."""

    flag: str  # "--max-num-seqs"
    current: Any  # value in force; None = unknown (never "the default": see current_is_default)
    suggested: Any  # value to set (True for a bare switch)
    reason: str
    finding_ids: tuple[str, ...] = ()
    expected_effect: str | None = None
    alternatives: tuple[Recommendation, ...] = ()
    current_is_default: bool = False  # `current` is vLLM's default for this version and hardware
    # changes vLLM refuses this one without: applied with it, in the same launch; each one's
    # `reason` says why they are coupled (never an alternative: both are needed)
    coupled: tuple[Recommendation, ...] = ()


@dataclass(frozen=True, slots=True)
class AdviceNote:
    """What to do about findings no flag change answers (or whose numbers are unknown): one
    sentence saying why, and what to do instead (more GPUs, replicas, an upgrade, ...)."""

    finding_ids: tuple[str, ...]
    text: str
