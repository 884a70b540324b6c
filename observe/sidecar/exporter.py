"""Edge: the sidecar's own /metrics — one prometheus_client Collector over a state snapshot — and
the small HTTP server that serves it with /healthz and /api/diagnosis.

The collector follows client_python's custom-collector pattern (`docs/.../collector/custom.md`):
each scrape calls `collect()`, which asks for a fresh `ExportState` and builds new metric
families from it, so no metric object carries state between scrapes and there is no global
registry (the caller passes one). Metric names and help texts come from `names.OBSERVE_METRICS`.

Label values that come from log lines (file names, error kinds, versions, flag values) go out only
through prometheus_client's exposition, which escapes them; the JSON endpoints go through
`json.dumps`. The one HTML page, /runbooks (docs/runbooks.md, shipped in the package, which the
alerts' default runbook_url points at), is escaped text under anchored headings. /api/diagnosis answers by `diagnosis_access` (see
`config.SidecarSettings.diagnosis_access`): open, behind a bearer token (compared in constant
time), closed (403) or off (404); /metrics, /healthz and /readyz/vllm are always open.

/healthz is what Kubernetes probes (liveness and readiness of observe): it depends on observe's own
process only — 200 while its loops run, 503 when one died — and says in its body what it sees of
vLLM. /readyz/vllm is the explicit opt-in for gating vLLM's readiness on progress: 503 while vLLM is
unreachable or its engine stuck (docs/kubernetes.md says when to use it, and never for liveness).
"""

from __future__ import annotations

import hmac
import html
import json
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest

from observe.metrics.names import OBSERVE_METRICS

__all__ = [
    "CUDA_GRAPH_GAUGES",
    "ExportState",
    "KV_FETCH_STAGES",
    "ObserveCollector",
    "STATS_GAUGES",
    "make_registry",
    "Server",
]

# the stages of the stats line's "KV fetch:" clause, named as vllm:num_requests_kv_fetch_by_stage's
KV_FETCH_STAGES = ("waiting_to_start", "in_progress", "completed_waiting")
# CUDA-graph startup facts (observe.parse.startup) → (exported gauge, scale to apply)
CUDA_GRAPH_GAUGES: dict[str, tuple[str, float]] = {
    "cuda_graph_gib": ("observe_vllm_cuda_graph_memory_bytes", 2.0**30),
    "cuda_graph_estimated_gib": ("observe_vllm_cuda_graph_estimated_memory_bytes", 2.0**30),
    "cuda_graph_capture_seconds": ("observe_vllm_cuda_graph_capture_seconds", 1.0),
}

# stats-line field (model.StatsSample attribute) → (exported gauge, scale to apply)
STATS_GAUGES: dict[str, tuple[str, float]] = {
    "prompt_tps": ("observe_vllm_prompt_throughput_tokens_per_second", 1.0),
    "generation_tps": ("observe_vllm_generation_throughput_tokens_per_second", 1.0),
    "throughput_tps": ("observe_vllm_throughput_tokens_per_second", 1.0),
    "running": ("observe_vllm_running_requests", 1.0),
    "waiting": ("observe_vllm_waiting_requests", 1.0),
    "swapped": ("observe_vllm_swapped_requests", 1.0),
    "deferred": ("observe_vllm_deferred_requests", 1.0),
    "kv_usage_pct": ("observe_vllm_kv_usage_ratio", 0.01),
    "cpu_kv_usage_pct": ("observe_vllm_cpu_kv_usage_ratio", 0.01),
    "prefix_hit_pct": ("observe_vllm_prefix_cache_hit_ratio", 0.01),
    "external_prefix_hit_pct": ("observe_vllm_external_prefix_cache_hit_ratio", 0.01),
    "mm_hit_pct": ("observe_vllm_mm_cache_hit_ratio", 0.01),
}


@dataclass
class ExportState:
    """Everything the sidecar exports, as plain values copied under the sidecar's lock."""

    up: bool | None = None  # None: no vLLM URL given, or not scraped yet
    scrapes: int = 0
    scrape_errors: int = 0
    scrape_duration: float | None = None
    last_scrape_error: str | None = None
    log_lines: dict[str, int] = field(default_factory=dict)
    log_rotations: int = 0
    log_truncations: int = 0
    log_deletions: int = 0
    log_errors: int = 0
    log_invalid_utf8: int = 0
    log_long_lines: int = 0
    parse_errors: int = 0
    analysis_errors: int = 0
    analysis_duration: float | None = None
    window_events: int = 0
    window_scrapes: int = 0
    # log-only facts
    stats: dict[str, dict[str, float]] = field(default_factory=dict)  # engine label → field → value
    stats_lines: int = 0
    last_stats_time: float | None = None  # epoch seconds the last stats line was read
    interval_preemptions: int = 0  # V1 `Preemptions: N` summed
    preemption_warnings: int = 0
    cumulative_preemptions: int | None = None
    kv_cache_tokens: int | None = None
    max_concurrency: float | None = None
    max_num_seqs: int | None = None  # the launch's --max-num-seqs (from its flags), the queue alert's batch
    engine_errors: dict[str, int] = field(default_factory=dict)
    info: dict[str, str] | None = None  # version, engine, model
    engine_crashes: dict[str, int] = field(default_factory=dict)  # cause → unexpected exits
    startup_failure: tuple[str, str, str] | None = None  # (kind, reason, fix) of the latest launch
    engine_stuck: bool | None = None  # None: vLLM not scraped (yet)
    # 0.32+ stats lines' "KV fetch:" clause, per engine label, once one was seen (absent later: 0s)
    kv_fetch: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    cuda_graph: dict[str, float] = field(default_factory=dict)  # startup fact name -> value
    findings: list[tuple[str, str]] = field(default_factory=list)  # (id, severity)
    recommendations: list[tuple[str, str, str]] = field(default_factory=list)  # (flag, current, suggested)


def _help(name: str) -> str:
    return OBSERVE_METRICS.get(name, name)


Labelled = list[tuple[dict[str, str], ExportState]]


class ObserveCollector:
    """A prometheus_client Collector: `collect()` builds fresh families from `get_state()` — one
    state, or several with their labels (a node's sidecar: one per pod, labelled `namespace` and
    `pod`). One state without labels gives exactly what a single state gives."""

    def __init__(self, get_state: Callable[[], ExportState] | Callable[[], Labelled]) -> None:
        self._get_state = get_state

    def collect(self) -> Iterator[Metric]:
        got = self._get_state()
        states: Labelled = [({}, got)] if isinstance(got, ExportState) else got
        if len(states) == 1 and not states[0][0]:
            yield from _families(states[0][1])
            return
        merged: dict[str, Metric] = {}
        for labels, s in states:
            for fam in _families(s):
                out = merged.get(fam.name)
                if out is None:
                    out = merged[fam.name] = Metric(fam.name, fam.documentation, fam.type, fam.unit)
                for smp in fam.samples:
                    out.samples.append(smp._replace(labels={**labels, **smp.labels}))
        yield from merged.values()


def _families(s: ExportState) -> Iterator[Metric]:
    yield from _self_metrics(s)
    yield from _log_facts(s)
    yield from _analysis(s)


def _gauge(name: str, value: float | None, labels: dict[str, str] | None = None) -> GaugeMetricFamily:
    g = GaugeMetricFamily(name, _help(name), labels=list(labels or {}))
    if value is not None:
        g.add_metric(list((labels or {}).values()), float(value))
    return g


def _counter(name: str, value: float) -> CounterMetricFamily:
    base = name[: -len("_total")] if name.endswith("_total") else name
    return CounterMetricFamily(base, _help(name), value=float(value))


def _self_metrics(s: ExportState) -> Iterator[Metric]:
    if s.up is not None:
        yield _gauge("observe_up", 1.0 if s.up else 0.0)
    yield _counter("observe_scrapes_total", s.scrapes)
    yield _counter("observe_scrape_errors_total", s.scrape_errors)
    yield _gauge("observe_scrape_duration_seconds", s.scrape_duration)
    lines = CounterMetricFamily("observe_log_lines", _help("observe_log_lines_total"), labels=["file"])
    for f, n in sorted(s.log_lines.items()):
        lines.add_metric([f], float(n))
    yield lines
    yield _counter("observe_log_rotations_total", s.log_rotations)
    yield _counter("observe_log_truncations_total", s.log_truncations)
    yield _counter("observe_log_deletions_total", s.log_deletions)
    yield _counter("observe_log_errors_total", s.log_errors)
    yield _counter("observe_log_invalid_utf8_lines_total", s.log_invalid_utf8)
    yield _counter("observe_log_long_lines_total", s.log_long_lines)
    yield _counter("observe_parse_errors_total", s.parse_errors)
    yield _counter("observe_analysis_errors_total", s.analysis_errors)
    yield _gauge("observe_analysis_duration_seconds", s.analysis_duration)
    yield _gauge("observe_window_events", s.window_events)
    yield _gauge("observe_window_scrapes", s.window_scrapes)


def _log_facts(s: ExportState) -> Iterator[Metric]:
    fams: dict[str, GaugeMetricFamily] = {}
    for engine, fields in sorted(s.stats.items()):
        for attr, v in sorted(fields.items()):
            name, scale = STATS_GAUGES[attr]
            fam = fams.get(name) or fams.setdefault(
                name, GaugeMetricFamily(name, _help(name), labels=["engine"])
            )
            fam.add_metric([engine], v * scale)
    yield from fams.values()
    if s.kv_fetch:
        fetch = GaugeMetricFamily(
            "observe_vllm_kv_fetch_requests",
            _help("observe_vllm_kv_fetch_requests"),
            labels=["engine", "stage"],
        )
        for engine, counts in sorted(s.kv_fetch.items()):
            for stage, n in zip(KV_FETCH_STAGES, counts, strict=True):
                fetch.add_metric([engine, stage], float(n))
        yield fetch
    for fact, (name, scale) in CUDA_GRAPH_GAUGES.items():
        if fact in s.cuda_graph:
            yield _gauge(name, s.cuda_graph[fact] * scale)
    yield _counter("observe_vllm_stats_lines_total", s.stats_lines)
    yield _gauge("observe_vllm_last_stats_timestamp_seconds", s.last_stats_time)
    yield _counter("observe_vllm_preemptions_total", s.interval_preemptions)
    yield _counter("observe_vllm_preemption_warnings_total", s.preemption_warnings)
    yield _gauge("observe_vllm_cumulative_preemptions", s.cumulative_preemptions)
    yield _gauge("observe_vllm_kv_cache_tokens", s.kv_cache_tokens)
    yield _gauge("observe_vllm_max_concurrency", s.max_concurrency)
    yield _gauge("observe_vllm_max_num_seqs", s.max_num_seqs)
    errs = CounterMetricFamily(
        "observe_vllm_engine_errors", _help("observe_vllm_engine_errors_total"), labels=["kind"]
    )
    for kind, n in sorted(s.engine_errors.items()):
        errs.add_metric([kind], float(n))
    yield errs
    crashes = CounterMetricFamily(
        "observe_engine_crashes", _help("observe_engine_crashes_total"), labels=["cause"]
    )
    for cause, n in sorted(s.engine_crashes.items()):
        crashes.add_metric([cause], float(n))
    yield crashes
    failed = GaugeMetricFamily(
        "observe_engine_startup_failure_info",
        _help("observe_engine_startup_failure_info"),
        labels=["kind", "reason", "fix"],
    )
    if s.startup_failure is not None:
        failed.add_metric(list(s.startup_failure), 1.0)
    yield failed
    if s.engine_stuck is not None:
        yield _gauge("observe_engine_stuck", 1.0 if s.engine_stuck else 0.0)
    if s.info is not None:
        info = GaugeMetricFamily(
            "observe_vllm_info", _help("observe_vllm_info"), labels=["version", "engine", "model"]
        )
        info.add_metric(
            [s.info.get("version") or "", s.info.get("engine") or "", s.info.get("model") or ""], 1.0
        )
        yield info


def _analysis(s: ExportState) -> Iterator[Metric]:
    f = GaugeMetricFamily("observe_finding", _help("observe_finding"), labels=["id", "severity"])
    for fid, sev in sorted(set(s.findings)):
        f.add_metric([fid, sev], 1.0)
    yield f
    r = GaugeMetricFamily(
        "observe_recommendation_info",
        _help("observe_recommendation_info"),
        labels=["flag", "current", "suggested"],
    )
    for flag, cur, sug in sorted(set(s.recommendations)):
        r.add_metric([flag, cur, sug], 1.0)
    yield r


def runbooks_html(text: str) -> bytes:
    """The runbooks (markdown) as one page: each heading gets GitHub's anchor (``## VLLMDown`` →
    ``#vllmdown``, what an alert's runbook_url names); every other line is escaped text."""
    out = ['<!doctype html><meta charset="utf-8"><title>observe runbooks</title><body>']
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append('<pre style="white-space:pre-wrap">' + html.escape("\n".join(para)) + "</pre>")
            para.clear()

    for line in text.splitlines():
        m = re.match(r"^(#{1,3}) (.+)$", line)
        if not m:
            para.append(line)
            continue
        flush()
        title, level = m[2].strip(), len(m[1])
        anchor = re.sub(r"[^a-z0-9 _-]", "", title.lower()).replace(" ", "-")
        out.append(f'<h{level} id="{html.escape(anchor)}">{html.escape(title)}</h{level}>')
    flush()
    return "\n".join(out).encode("utf-8")


def _runbooks() -> bytes:
    return runbooks_html(resources.files("observe").joinpath("data/runbooks.md").read_text("utf-8"))


def make_registry(get_state: Callable[[], ExportState] | Callable[[], Labelled]) -> CollectorRegistry:
    """A fresh registry holding only the observe collector (no process/gc collectors)."""
    reg = CollectorRegistry(auto_describe=False)
    reg.register(ObserveCollector(get_state))
    return reg


class Server:
    """HTTP on `host:port` (default loopback): /metrics, /healthz, /readyz/vllm, /api/diagnosis,
    /runbooks; port 0 = free. `health` is observe's own (its probes); `vllm_ready` the opt-in
    gate on vLLM's progress."""

    def __init__(
        self,
        registry: CollectorRegistry,
        *,
        host: str = "127.0.0.1",
        port: int = 9400,
        health: Callable[[], tuple[bool, dict[str, Any]]] = lambda: (True, {}),
        vllm_ready: Callable[[], tuple[bool, dict[str, Any]]] = lambda: (True, {}),
        diagnosis: Callable[[], dict[str, Any] | None] = lambda: None,
        diagnosis_access: str = "open",
        token: str | None = None,
    ) -> None:
        reg, get_health, get_ready, get_diag = registry, health, vllm_ready, diagnosis
        if diagnosis_access == "token" and not token:
            raise ValueError("diagnosis_access 'token' needs a token")
        want = (token or "").encode("utf-8")

        class Handler(BaseHTTPRequestHandler):
            server_version = "observe-sidecar"

            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                path = self.path.split("?", 1)[0].rstrip("/") or "/"
                try:
                    if path == "/metrics":
                        self._send(200, generate_latest(reg), CONTENT_TYPE_LATEST)
                    elif path == "/healthz":
                        ok, body = get_health()
                        self._json(200 if ok else 503, {"status": "ok" if ok else "degraded", **body})
                    elif path == "/readyz/vllm":
                        ok, body = get_ready()
                        self._json(200 if ok else 503, {"status": "ready" if ok else "not ready", **body})
                    elif path == "/api/diagnosis":
                        if self._refused():
                            return
                        d = get_diag()
                        if d is None:
                            self._json(503, {"error": "no diagnosis yet: the first analysis has not run"})
                        else:
                            self._json(200, d)
                    elif path == "/runbooks":
                        self._send(
                            200,
                            _runbooks(),
                            "text/html; charset=utf-8",
                            {"Content-Security-Policy": "default-src 'none'; style-src 'unsafe-inline'"},
                        )
                    elif path == "/":
                        self._send(
                            200,
                            b"observe sidecar: /metrics /healthz /readyz/vllm /api/diagnosis /runbooks\n",
                            "text/plain; charset=utf-8",
                        )
                    else:
                        self._json(404, {"error": "not found"})
                except (BrokenPipeError, ConnectionResetError):
                    pass
                except Exception as e:
                    self._json(500, {"error": type(e).__name__})

            def _refused(self) -> bool:
                """Answer and return True when this request may not read the diagnosis."""
                if diagnosis_access == "off":
                    self._json(404, {"error": "/api/diagnosis is turned off (--api-diagnosis off)"})
                elif diagnosis_access == "closed":
                    self._json(
                        403,
                        {
                            "error": "/api/diagnosis is closed beyond loopback without a token: "
                            "start the sidecar with --api-token-file (or --api-diagnosis public)"
                        },
                    )
                elif diagnosis_access == "token":
                    scheme, _, given = (self.headers.get("Authorization") or "").partition(" ")
                    if scheme.lower() == "bearer" and hmac.compare_digest(
                        given.strip().encode("utf-8"), want
                    ):
                        return False
                    self._json(401, {"error": "a bearer token is required"}, {"WWW-Authenticate": "Bearer"})
                else:
                    return False
                return True

            def _json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                self._send(
                    code,
                    json.dumps(obj, sort_keys=True, default=str).encode("utf-8"),
                    "application/json",
                    headers,
                )

            def _send(
                self, code: int, body: bytes, ctype: str, headers: dict[str, str] | None = None
            ) -> None:
                self.send_response(code)
                for k, v in (headers or {}).items():
                    self.send_header(k, v)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

        self._httpd = ThreadingHTTPServer((host, port), Handler)
        self._httpd.daemon_threads = True
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="observe-http", daemon=True)

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._httpd.server_address[:2]
        return str(host), int(port)

    @property
    def url(self) -> str:
        host, port = self.address
        return f"http://{'[' + host + ']' if ':' in host else host}:{port}"

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(timeout=5)
