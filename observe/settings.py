"""One settings object: every threshold and SLO observe judges a vLLM server by.

The detectors, the diagnosis summary, the HTML plots, the generated Prometheus rules and the
sidecar all read these same numbers (the kubernetes-mixin ``_config`` idea), so changing one here
changes the finding, the dashed line on the plot and the alert together. Each field carries a note
on what it means and when to change it; ``observe config show`` prints them, and
``--config observe.yaml`` (flat ``name: value`` pairs, names as below) overrides any of them.

Pure: parsing a YAML text is here, reading the file is the CLI's job.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

import yaml

from observe.errors import ConfigError
from observe.metrics import promql

__all__ = ["ITL_BUCKETS", "TTFT_BUCKETS", "Settings", "from_mapping", "from_yaml"]

# Bucket bounds vLLM has used for its latency histograms (V0 and V1): an SLO threshold must be one
# of them, or "requests faster than T" cannot be read off the buckets. vllm/engine/metrics.py @ v0.6.3
# stops at 10 s (TTFT) and 2.5 s (ITL); vllm/v1/metrics/loggers.py @ v0.8.5 and v0.10.1.1 and
# vllm/v1/metrics/buckets.py @ v0.32.0 and v0.34.0 go on to 2,560 s and 80 s.
TTFT_BUCKETS = (
    *(0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0),
    *(20.0, 40.0, 80.0, 160.0, 640.0, 2560.0),
)
ITL_BUCKETS = (
    *(0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5),
    *(5.0, 7.5, 10.0, 20.0, 40.0, 80.0),
)
# The published runbooks: docs/runbooks.md in the repository whose owner publishes the sidecar image
# (deploy/kubernetes/image/image.yaml, .github/workflows/release.yml; a test keeps the two in step).
PUBLISHED_RUNBOOKS = "https://github.com/observe-vllm/observe/blob/main/docs/runbooks.md"
_LABEL = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


def _f(default: Any, note: str, section: str) -> Any:
    return field(default=default, metadata={"note": note, "section": section})


@dataclass(frozen=True)
class Settings:
    """Every knob; defaults are what observe ships with. Percentages are 0-100, ratios 0-1."""

    # ---------------------------------------------------------------- KV cache
    kv_high_pct: float = _f(
        90.0,
        "KV-cache usage counted as high (warning; the first dashed line on the KV plot). Lower it for "
        "servers that must absorb bursts without queueing.",
        "kv",
    )
    kv_full_pct: float = _f(
        95.0,
        "KV-cache usage counted as full: past it vLLM queues new requests and preempts running ones. "
        "Also the threshold of the VLLMKVCacheSaturated alert.",
        "kv",
    )
    kv_saturated_share: float = _f(
        0.25,
        "Share of stats samples at or above kv_full_pct that, with requests waiting, makes a saturated cache "
        "call for the KV plan (more KV capacity or fewer sequences). Saturation stays a warning.",
        "kv",
    )
    kv_queue_full_pct: float = _f(
        75.0,
        "A queue that waits while KV usage is at or above this is memory-bound; below it the queue is "
        "bound by --max-num-seqs or prefill.",
        "kv",
    )
    seq_cap_kv_pct: float = _f(
        25.0, "KV % under which requests waiting at a held Running read as the seq cap (cap unknown)", "kv"
    )
    low_concurrency: float = _f(
        2.0,
        "Fewer full-length (--max-model-len) requests than this fitting the KV cache is a finding.",
        "kv",
    )
    high_gpu_util: float = _f(
        0.97,
        "--gpu-memory-utilization at or above this leaves too little for activations and CUDA graphs.",
        "kv",
    )
    max_model_len_slack: float = _f(
        4.0,
        "--max-model-len more than this many times the longest request seen is reported as unused.",
        "kv",
    )
    # ---------------------------------------------------------------- engine behaviour
    stall_factor: float = _f(
        6.0,
        "A gap between stats lines this many times the normal interval, with requests running, is a stall.",
        "engine",
    )
    stuck_after_s: float = _f(
        180.0,
        "Seconds with requests running or waiting while the token counters do not move before the "
        "engine counts as stuck (engine_stuck, the sidecar's /healthz, top's STUCK, VLLMEngineStuck). "
        "Raise it for models whose single prefill can take minutes.",
        "engine",
    )
    low_prefix_hit_pct: float = _f(
        10.0,
        "Mean prefix-cache hit rate below this (with prefix caching on) is reported as rarely hitting.",
        "engine",
    )
    low_prefix_min_prompt_tps: float = _f(
        100.0,
        "Mean prompt throughput (tokens/s) of the stats lines below which their prefix-cache hit rate is not "
        "judged: a handful of short prompts, no evidence of how prompts share prefixes.",
        "engine",
    )
    collapse_ratio: float = _f(
        0.5,
        "Generation throughput below this share of its peak, with as many requests running, is a collapse.",
        "engine",
    )
    preemption_storm: int = _f(
        50,
        "Preemptions in a log or its /metrics that make a storm: the preemptions finding, and a full KV "
        "cache beside it, are critical from here (each preemption recomputes a request's whole KV cache).",
        "kv",
    )
    preemption_pattern: int = _f(
        2,
        "Preemptions in a log or its /metrics that call for a KV lever: fewer are noted, with no flag change "
        "(one preemption recomputes one request: slow, not a pattern to resize the engine for).",
        "kv",
    )
    silent_preemption_kv_pct: float = _f(
        98.0,
        "KV usage at or above which Running falling while Waiting rises by the same count (no prefill) "
        "is read as requests preempted without a warning (V0 prints only every 50th).",
        "kv",
    )
    swap_full_pct: float = _f(
        90.0,
        "V0 CPU KV-cache (swap space) usage at or above which swap space counts as exhausted.",
        "kv",
    )
    oom_fragmentation_gib: float = _f(
        0.5,
        "An OOM whose PyTorch reserved-but-unallocated memory is at least this (and at least the failed "
        "allocation) points to fragmentation (PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True).",
        "engine",
    )
    long_context_len: int = _f(
        32768,
        "A start-up cut off after the weights loaded, with no --max-model-len, of a model whose name states a "
        "longer context (-1048k, -1M): --max-model-len this as a first step (vLLM took the model's own length).",
        "engine",
    )
    max_gpu_util: float = _f(
        0.95,
        "The most --gpu-memory-utilization the advisor suggests: the KV plan raises it to this, a cache "
        "that does not fit is grown at most to it; an out-of-memory at or above it is the finding "
        "gpu_memory_utilization_too_high. Above it activation peaks and CUDA graphs have no room left.",
        "kv",
    )
    seq_step_min_factor: float = _f(
        2.0,
        "The smallest --max-num-seqs step the advisor proposes, as a factor of the cap in force: a "
        "smaller one is lost in the noise of a measured run (never 4 → 5).",
        "kv",
    )
    seq_step_max_factor: float = _f(
        4.0,
        "The largest --max-num-seqs step the advisor proposes at once, as a factor of the cap in force, "
        "where the demand (running + waiting in one stats sample) or the KV room per request is not "
        "measured; where both are, the step is the demand, bounded by what the KV cache holds.",
        "kv",
    )
    advice_confirm: int = _f(
        3,
        "The sidecar shows a new tuning recommendation once this many diagnoses in a row propose it.",
        "engine",
    )
    advice_dwell_s: float = _f(
        3600.0,
        "Seconds the sidecar keeps a tuning recommendation before it may change it (at most one change "
        "per this long under steady load).",
        "engine",
    )
    advice_margin: float = _f(
        1.5, "A tuning recommendation changes only to a value more than this many times apart.", "engine"
    )
    seq_bound_kv_share: float = _f(
        0.9,
        "When requests wait for a --max-num-seqs slot while the KV cache has room, the advisor raises "
        "--max-num-seqs at most to the requests this share of the KV cache holds (at the request length "
        "seen), keeping the rest for longer requests.",
        "kv",
    )
    low_spec_acceptance_pct: float = _f(
        30.0,
        "Speculative-decoding draft acceptance below this means the draft costs more than it saves.",
        "engine",
    )
    # ---------------------------------------------------------------- latency SLOs
    ttft_slo_seconds: float = _f(
        1.0,
        "Time-to-first-token SLO threshold (a vLLM histogram bucket bound). Set it to your product's "
        "promise; chat usually 0.5-1 s, batch jobs much more.",
        "slo",
    )
    ttft_slo_target: float = _f(
        0.99, "Share of requests that must meet the TTFT SLO (burn-rate alerts).", "slo"
    )
    itl_slo_seconds: float = _f(
        0.1,
        "Inter-token latency SLO threshold (a vLLM bucket bound): the ITL finding and the ITL burn-rate "
        "alerts use this one number. 0.1 s is 10 tokens/s per stream, faster than people read.",
        "slo",
    )
    itl_slo_target: float = _f(0.99, "Share of tokens that must meet the ITL SLO (burn-rate alerts).", "slo")
    ttft_spike_ratio: float = _f(
        5.0, "TTFT p99 this many times its p50 within one interval is a spike (bursts, long prefills).", "slo"
    )
    ttft_spike_min_s: float = _f(1.0, "A TTFT spike must also have p99 above this many seconds.", "slo")
    # ---------------------------------------------------------------- observe tune
    tune_max_error_share: float = _f(
        0.05,
        "`observe tune`: a trial whose benchmark requests failed in a larger share than this is a failed "
        "trial, however fast the rest were.",
        "tune",
    )
    tune_min_gain: float = _f(
        0.03,
        "`observe tune`: the least objective gain (a ratio) a change must show to be kept, even when the "
        "measured run-to-run spread is smaller; the gain must also exceed the spread.",
        "tune",
    )
    tune_e2el_slo_seconds: float | None = _f(
        None,
        "`observe tune --objective goodput`: an end-to-end latency SLO in seconds, besides the TTFT and ITL "
        "ones (None: none).",
        "tune",
    )
    # ---------------------------------------------------------------- alert rules
    selector: str = _f(
        "",
        'Matchers every rule adds, e.g. namespace="llm" (a mixin\'s _config selector). Empty: no '
        "job-name assumption; vLLM's series are told by their names, `up` by target_lookback.",
        "alerts",
    )
    vllm_selector: str | None = _f(
        None, "Matchers of the vLLM targets instead of `selector`; set, it picks `up` itself.", "alerts"
    )
    observe_selector: str | None = _f(None, "Matchers of the sidecars instead of `selector`.", "alerts")
    target_lookback: str = _f(
        "6h", "Unselected `up`: targets that exposed vLLM's (the sidecar's) series this recently.", "alerts"
    )
    vllm_job: str = _f("vllm", "Job label observe's scrape configs give vLLM.", "alerts")
    observe_job: str = _f("observe", "Job label observe's scrape configs give the sidecars.", "alerts")
    rule_by: tuple[str, ...] = _f(
        ("cluster", "namespace", "pod", "job", "instance", "model_name"),
        "Labels every recording rule aggregates by and every alert joins on, so the labels a cluster "
        "routes on (namespace, pod, cluster) reach Alertmanager. A label a target lacks is harmless. "
        "HTTP and sidecar rules use these without model_name; per-model SLO rules without pod, "
        "instance and job.",
        "alerts",
    )
    rule_labels: tuple[tuple[str, str], ...] = _f(
        (("release", "kube-prometheus-stack"),),
        "Labels on the PrometheusRule, as a mapping: kube-prometheus-stack loads only rules labelled "
        "release: <its Helm release name>.",
        "alerts",
    )
    namespace: str | None = _f(
        None,
        "Namespace of the PrometheusRule manifest; empty = the namespace kubectl applies it to.",
        "alerts",
    )
    min_request_rate: float = _f(
        0.1,
        "Traffic floor (requests/s over the burn-rate pair's short window, or rate_window for the error "
        "ratio) below which SLO and error-ratio alerts "
        "stay quiet: a handful of requests is no evidence of a rate.",
        "alerts",
    )
    group_interval: str | None = _f(
        None, "Evaluation interval of the rule group; empty = Prometheus' global interval.", "alerts"
    )
    rate_window: str = _f(
        "5m", "Window of rate() in recording rules; at least 4x the scrape interval.", "alerts"
    )
    gpu_idle_util_pct: float = _f(
        5.0, "GPU utilisation (%) at or below which a vLLM pod's GPU with no request is idle.", "alerts"
    )
    runbook_base: str = _f(
        PUBLISHED_RUNBOOKS,
        "Where docs/runbooks.md is published; each alert links to its section (#<alert name in "
        "lower case>, GitHub's anchors). The default is the repository's copy on GitHub, which "
        "resolves from anywhere; every observe sidecar also serves it at /runbooks "
        "(http://127.0.0.1:9400/runbooks under compose); set your wiki or fork here.",
        "alerts",
    )
    down_for: str = _f("2m", "How long vLLM must be down / unscraped before VLLMDown fires.", "alerts")
    kv_for: str = _f("10m", "How long KV usage must stay above kv_full_pct before the alert fires.", "alerts")
    preemptions_per_s: float = _f(
        0.05, "Preemptions per second (over rate_window) that count as sustained preemption.", "alerts"
    )
    preemptions_for: str = _f(
        "15m", "How long preemptions must be sustained before the alert fires.", "alerts"
    )
    max_num_seqs: int | None = _f(
        None,
        "The instance's --max-num-seqs: the queue-backlog threshold is one full batch. Empty = unknown "
        "(vLLM's default depends on the release and the GPU): the queue alert then reads it from the "
        "sidecar, else takes queue_batch_share of the largest batch vLLM defaults to on a GPU.",
        "alerts",
    )
    waiting_requests: float | None = _f(
        None, "Queue-backlog threshold in waiting requests; empty = one full batch (max_num_seqs).", "alerts"
    )
    queue_batch_share: float = _f(
        0.25,
        "Queue-backlog threshold as a share of the server's own --max-num-seqs (the sidecar exports it "
        "from the launch's flags): more waiting than this share of a full batch is an overload (24 "
        "concurrent on 16 slots: 8 waiting, 50%). Where no sidecar reports it: one full batch of "
        "max_num_seqs, else this share of the largest batch vLLM defaults to on a GPU.",
        "alerts",
    )
    queue_for: str = _f(
        "5m",
        "How long the backlog must last before the alert fires (during the overload, not after).",
        "alerts",
    )
    burn_windows: tuple[tuple[str, str, float, str, str], ...] = _f(
        (
            ("20m", "2m", 14.4, "1m", "critical"),
            ("6h", "30m", 6.0, "5m", "critical"),
            ("1d", "2h", 3.0, "1h", "warning"),
            ("3d", "6h", 1.0, "3h", "warning"),
        ),
        "Burn-rate window pairs (long window, short window, burn factor, for, severity), after the SRE "
        "workbook's four: critical pages (alert ...SLOBurnFast), warning is a ticket (...SLOBurnSlow). "
        "The fast pair is 20m/2m (not 1h/5m) so that a 5-10 minute incident pages while it lasts "
        "(all requests bad: 14.4x of a 1% budget over 20m after ~3 min, +1m for:), and short windows "
        "and for: are short so that a page resolves minutes after the incident, not half an hour.",
        "alerts",
    )
    error_ratio: float = _f(0.05, "Share of requests failing (HTTP 5xx / aborted) that alerts.", "alerts")
    errors_for: str = _f("5m", "How long the error ratio must hold before the alert fires.", "alerts")
    engine_error_window: str = _f(
        "5m",
        "How far back an alert on an engine error seen in the logs (OOM, crash) looks: it fires on an "
        "increase within this window, so it resolves this long after the last one (long enough for "
        "Prometheus to see a crash whose engine restarts within seconds).",
        "alerts",
    )
    stuck_flat_window: str = _f(
        "2m",
        "Window over which VLLMEngineStuck reads vLLM's token counters as flat (at least 4 scrapes; "
        "stuck_after_s when that is shorter); its for: is stuck_after_s minus the window, so it fires "
        "stuck_after_s after the last token.",
        "alerts",
    )
    kv_smooth_window: str = _f(
        "5m",
        "Window of quantile_over_time(0.9, KV usage) behind VLLMKVCacheSaturated: a saturated cache "
        "swings (0.5 <-> 1.0 as requests finish and are admitted), so the raw gauge never stays above "
        "the line; its 90th percentile over this window does.",
        "alerts",
    )
    sidecar_down_for: str = _f("5m", "How long a sidecar may be unscraped before its alert fires.", "alerts")
    unreachable_for: str = _f(
        "5m", "How long the sidecar may fail to reach vLLM before its alert fires.", "alerts"
    )
    recommendation_for: str = _f(
        "30m", "How long a recommendation may stay pending before its (info) alert fires.", "alerts"
    )

    max_line_bytes: int = _f(
        64 * 1024,
        "A log line longer than this many bytes is cut here, the rest up to its newline skipped and the "
        "cut counted (diagnose, sidecar, top): one runaway line costs neither memory nor time. vLLM's "
        "longest lines (the engine config) are a few KB.",
        "input",
    )
    pod_retention_s: float = _f(
        600.0,
        "Seconds a pod's series stay on a node's sidecar (`observe sidecar --pods`) after its log files "
        "went (the pod was deleted): then its instance, window and series are dropped. Longer than a "
        "scrape interval so that a pod's last findings are recorded.",
        "input",
    )

    def __post_init__(self) -> None:
        if not isinstance(self.max_line_bytes, int) or self.max_line_bytes < 256:
            raise ConfigError(f"max_line_bytes must be a whole number >= 256, got {self.max_line_bytes!r}")
        for f in dataclasses.fields(self):
            if f.name.endswith("_for") or f.name in (
                "rate_window",
                "engine_error_window",
                "stuck_flat_window",
                "kv_smooth_window",
                "target_lookback",
            ):
                _check_duration(f.name, getattr(self, f.name))
        if self.group_interval is not None:
            _check_duration("group_interval", self.group_interval)
        if not self.burn_windows:
            raise ConfigError("burn_windows needs at least one (long, short, factor, for, severity) entry")
        for burn in self.burn_windows:
            if len(burn) != 5 or burn[4] not in ("critical", "warning"):
                raise ConfigError(
                    "a burn-rate pair has 5 fields (long, short, factor, for, severity critical|warning), "
                    f"got {burn!r}"
                )
            for d in (burn[0], burn[1], burn[3]):
                _check_duration("burn window", d)
        for name, interval in _INTERVALS.items():
            _check_interval(name, getattr(self, name), *interval)
        if self.kv_high_pct > self.kv_full_pct:
            raise ConfigError(
                f"kv_high_pct ({self.kv_high_pct}) must not be above kv_full_pct ({self.kv_full_pct})"
            )
        if float(self.ttft_slo_seconds) not in TTFT_BUCKETS:
            raise ConfigError(
                f"ttft_slo_seconds must be a vLLM bucket bound {TTFT_BUCKETS}, got {self.ttft_slo_seconds}"
            )
        if float(self.itl_slo_seconds) not in ITL_BUCKETS:
            raise ConfigError(
                f"itl_slo_seconds must be a vLLM bucket bound {ITL_BUCKETS}, got {self.itl_slo_seconds}"
            )
        if not 0 <= self.tune_max_error_share < 1 or not 0 <= self.tune_min_gain < 1:
            raise ConfigError("tune_max_error_share and tune_min_gain must be in [0, 1)")
        if self.tune_e2el_slo_seconds is not None and not self.tune_e2el_slo_seconds > 0:
            raise ConfigError(f"tune_e2el_slo_seconds must be positive, got {self.tune_e2el_slo_seconds}")
        if self.max_num_seqs is not None and self.max_num_seqs < 1:
            raise ConfigError(f"max_num_seqs must be >= 1, got {self.max_num_seqs}")
        for name in ("selector", "vllm_selector", "observe_selector"):
            sel = getattr(self, name)
            if sel is None or (name == "selector" and isinstance(sel, str) and not sel.strip()):
                continue
            try:
                if not promql.parse_selector(sel):
                    raise ConfigError("empty")
            except ConfigError:
                raise ConfigError(f'{name} must be label matchers like job=~".*/vllm", got {sel!r}') from None
        if not self.rule_by or len(set(self.rule_by)) != len(self.rule_by):
            raise ConfigError(f"rule_by must name distinct labels, got {self.rule_by!r}")
        for label in self.rule_by:
            if not isinstance(label, str) or not _LABEL.match(label) or label.startswith("__"):
                raise ConfigError(f"rule_by: {label!r} is not a Prometheus label name")
        if "instance" not in self.rule_by:
            raise ConfigError("rule_by must keep instance (the sidecar's series join vLLM's on it)")
        for k, v in self.rule_labels:
            if not re.match(r"^[A-Za-z_][A-Za-z0-9_./-]*$", k) or not isinstance(v, str):
                raise ConfigError(f"rule_labels: bad label {k!r}: {v!r}")
        if not isinstance(self.advice_confirm, int) or self.advice_confirm < 1 or self.advice_dwell_s < 0:
            raise ConfigError("advice_confirm must be an integer >= 1 and advice_dwell_s >= 0")
        if not self.advice_margin > 1:
            raise ConfigError(f"advice_margin must be > 1, got {self.advice_margin}")
        if not 1 < self.seq_step_min_factor <= self.seq_step_max_factor:
            raise ConfigError("seq_step_min_factor must be > 1 and <= seq_step_max_factor")
        if self.error_ratio <= 0 or self.preemptions_per_s < 0:
            raise ConfigError("error_ratio must be > 0 and preemptions_per_s >= 0")

    @property
    def kv_usage_ratio(self) -> float:
        """kv_full_pct as the 0-1 ratio vLLM's gauge reports (the alert threshold)."""
        return self.kv_full_pct / 100.0

    @property
    def vllm_matchers(self) -> str:
        """The label matchers (no braces) of the vLLM targets; empty: all (no job-name assumption)."""
        return promql.unbraced(self.vllm_selector) or promql.unbraced(self.selector)

    @property
    def observe_matchers(self) -> str:
        """The label matchers (no braces) of the observe sidecars."""
        return promql.unbraced(self.observe_selector) or promql.unbraced(self.selector)

    @property
    def waiting_threshold(self) -> float | None:
        """Queue-backlog threshold: explicit, else one full batch (--max-num-seqs); None: unknown (vLLM's
        default batch depends on the release and the GPU, which Settings does not know)."""
        if self.waiting_requests is not None:
            return float(self.waiting_requests)
        return float(self.max_num_seqs) if self.max_num_seqs else None

    def replace(self, **changes: Any) -> Settings:
        return from_mapping(changes, base=self)

    @classmethod
    def for_instance(cls, engine: Any, base: Settings | None = None, **overrides: Any) -> Settings:
        """Settings derived from what is known of one instance (an EngineConfig; unknowns keep ``base``).

        - ``--max-num-seqs`` sets the queue-backlog threshold (more waiting than one full batch);
        - KV capacity: the cache counts as full when one more ``max_model_len`` request would not
          fit, i.e. usage > 1 - max_model_len / kv_cache_tokens (kept within 50-98 %).
        Explicit ``overrides`` win.
        """
        derived: dict[str, Any] = {}
        if getattr(engine, "max_num_seqs", None):
            derived["max_num_seqs"] = int(engine.max_num_seqs)
        tokens, mml = getattr(engine, "kv_cache_tokens", None), getattr(engine, "max_model_len", None)
        if tokens and mml and tokens > 0:
            headroom = 1.0 - mml / tokens
            derived["kv_full_pct"] = round(100 * min(0.98, max(0.5, headroom)), 1)
            b = base or cls()
            if derived["kv_full_pct"] < b.kv_high_pct:
                derived["kv_high_pct"] = derived["kv_full_pct"]
        derived.update(overrides)
        return from_mapping(derived, base=base)


#: the fields that must lie in an interval: (low, high, low excluded, high excluded); None: unbounded
_INTERVALS: dict[str, tuple[float, float | None, bool, bool]] = {
    **dict.fromkeys(
        ("kv_high_pct", "kv_full_pct", "kv_queue_full_pct", "low_prefix_hit_pct", "low_spec_acceptance_pct"),
        (0, 100, True, False),
    ),
    **dict.fromkeys(("queue_batch_share", "max_gpu_util", "seq_bound_kv_share"), (0, 1, True, False)),
    **dict.fromkeys(
        ("ttft_slo_target", "itl_slo_target", "kv_saturated_share", "collapse_ratio"), (0, 1, True, True)
    ),
    "gpu_idle_util_pct": (0, 100, False, False),
    "seq_cap_kv_pct": (0, 100, True, False),
    "min_request_rate": (0, None, False, False),
    "low_prefix_min_prompt_tps": (0, None, False, False),
    **dict.fromkeys(
        ("stall_factor", "stuck_after_s", "pod_retention_s", "max_model_len_slack", "ttft_spike_ratio")
        + ("ttft_spike_min_s", "low_concurrency"),
        (0, None, True, False),
    ),
}


def _check_interval(name: str, v: Any, lo: float, hi: float | None, lo_open: bool, hi_open: bool) -> None:
    above = v > lo if lo_open else v >= lo
    below = hi is None or (v < hi if hi_open else v <= hi)
    if not (above and below):
        close = "∞)" if hi is None else f"{hi}{')' if hi_open else ']'}"
        span = f"{'(' if lo_open else '['}{lo}, {close}"
        raise ConfigError(f"{name} must be in {span}, got {v}")


def _check_duration(name: str, value: Any) -> None:
    if not isinstance(value, str) or promql.duration_seconds(value, strict=True) is None:
        raise ConfigError(f"{name} must be a Prometheus duration like 5m, got {value!r}")


_FIELDS = {f.name: f for f in dataclasses.fields(Settings)}


def from_mapping(
    values: dict[str, Any], *, base: Settings | None = None, source: str = "settings"
) -> Settings:
    """A Settings with ``values`` over ``base`` (or the defaults); unknown names are one clear error."""
    unknown = sorted(set(values) - set(_FIELDS))
    if unknown:
        raise ConfigError(
            f"{source}: unknown setting(s) {', '.join(unknown)} (known: `observe config show` lists them)"
        )
    typed: dict[str, Any] = {}
    for k, v in values.items():
        default = _FIELDS[k].default
        if v is None or default is None:
            typed[k] = v
        elif isinstance(default, tuple) and isinstance(v, dict):
            typed[k] = tuple((str(a), str(b)) for a, b in v.items())  # rule_labels
        elif isinstance(default, tuple) and default and isinstance(default[0], tuple):
            if not isinstance(v, (list, tuple)):
                raise ConfigError(f"{source}: {k} must be a list, got {v!r}")
            typed[k] = tuple(tuple(x) if isinstance(x, (list, tuple)) else x for x in v)
        elif isinstance(default, tuple):
            typed[k] = tuple(v) if isinstance(v, (list, tuple)) else v
        elif isinstance(default, bool) or isinstance(default, str):
            typed[k] = v
        elif isinstance(default, (int, float)):
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise ConfigError(f"{source}: {k} must be a number, got {v!r}")
            typed[k] = type(default)(v) if isinstance(default, float) else v
        else:
            typed[k] = v
    return dataclasses.replace(base or Settings(), **typed)


def from_yaml(text: str, *, source: str = "config") -> Settings:
    """Settings from a YAML text of flat ``name: value`` pairs (an empty file gives the defaults)."""
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ConfigError(f"{source}: not valid YAML ({str(e).splitlines()[0]})") from None
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of setting names to values")
    return from_mapping(data, source=source)
