"""Edge: vLLM's history from a Prometheus HTTP API (Prometheus, Thanos Query, Mimir) as Scrapes.

`observe diagnose --prometheus URL` reads the same vLLM series a `/metrics` snapshot holds, but
from the server's history: one query per metric the diagnosis reads, every exposed alias of it
(old and new vLLM names), narrowed by the user's label selector. The answer is regrouped into one
list of `model.Scrape` per instance (a pod, or a job/instance pair), samples renamed to canonical
names exactly as `scrape.parse_text` does — so the timeline, the detectors and the summary run
unchanged.

Raw samples, not evaluation steps: for a range up to `RAW_MAX_SPAN_S` (and no ``--step``) each
query is an instant query of a range selector, ``{…}[<range>s]`` at the range's end, which returns
every sample Prometheus stored in the range at its own scrape time — one Scrape per scrape. So
a counter's increase runs from the first to the last sample in the range (a reset counts from zero,
as Prometheus' ``increase`` does), and a gauge is seen at the scrape resolution: a KV cache that
was full between two 15 s evaluation steps is not missed, and a range shorter than a step is not
one point. A longer range (or ``--step``) is read with ``/api/v1/query_range`` at the step.

Bounded: the raw range is capped (`RAW_MAX_SPAN_S`; beyond `MAX_SAMPLES` samples the range is
read at a step instead), the step is chosen from the range (at most `MAX_POINTS` points per
series), each query has a timeout and a series cap, and a Prometheus that is down, slow or
answers an error gives one `TargetError` naming the URL and the reason. Credentials come from the
environment only
(`OBSERVE_PROMETHEUS_TOKEN`, or `OBSERVE_PROMETHEUS_USER` + `OBSERVE_PROMETHEUS_PASSWORD`;
`OBSERVE_PROMETHEUS_ORG_ID` sets Mimir's ``X-Scope-OrgID``).
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Any

from observe.errors import ConfigError, ObserveError, TargetError
from observe.metrics import names, promql
from observe.metrics.scrape import _canonical as canonical_sample_name
from observe.model import Sample, Scrape

if TYPE_CHECKING:  # requests is imported where a Prometheus is read: `diagnose` without one never pays for it
    import requests

__all__ = [
    "MAX_POINTS",
    "MAX_SAMPLES",
    "MAX_SERIES",
    "RAW_MAX_SPAN_S",
    "METRICS",
    "History",
    "choose_step",
    "from_options",
    "parse_duration",
    "parse_selector",
    "parse_time",
    "read_history",
    "to_instances",
]

MAX_POINTS = 1000  # points per series per query (Prometheus itself refuses more than 11,000)
MIN_STEP_S = 15.0  # Prometheus' default scrape interval: a finer step only repeats samples
MAX_SERIES = 5000  # per query; more means the selector matches a fleet, not an instance
RAW_MAX_SPAN_S = 6 * 3600.0  # ranges up to this are read as raw samples (the default --since)
MAX_SAMPLES = 1_500_000  # raw samples over all queries (~150 MB as Samples); more: read at a step
TIMEOUT_S = 30.0

# Canonical metrics the diagnosis reads from a scrape (timeline.scrape_frame, metricmath.window_summary,
# metricmath.running_config, the request-length estimate in detect).
_GAUGES = (
    names.KV_CACHE_USAGE_PERC,
    names.NUM_REQUESTS_RUNNING,
    names.NUM_REQUESTS_WAITING,
    names.CACHE_CONFIG_INFO,
)
_COUNTERS = (
    names.NUM_PREEMPTIONS_TOTAL,
    names.GENERATION_TOKENS_TOTAL,
    names.PROMPT_TOKENS_TOTAL,
    names.REQUEST_SUCCESS_TOTAL,
    names.PREFIX_CACHE_HITS_TOTAL,
    names.PREFIX_CACHE_QUERIES_TOTAL,
)
_HISTOGRAMS = (
    *names.LATENCY_HISTOGRAMS.values(),
    names.REQUEST_PROMPT_TOKENS,
    names.REQUEST_GENERATION_TOKENS,
)
METRICS = (*_GAUGES, *_COUNTERS, *_HISTOGRAMS)

# Labels that say which target a series came from; the rest (engine, model_name, le, ...) stay.
_TARGET_LABELS = ("job", "instance", "namespace", "pod", "container", "endpoint", "service")
# Labels HA pairs and Thanos add per replica: series differing only by these are one series.
_REPLICA_LABELS = ("prometheus_replica", "replica", "__replica__", "prometheus", "cluster")


def from_options(
    url: str | None,
    *,
    since: str | None = None,
    start: str | None = None,
    end: str | None = None,
    selector: str | None = None,
    step: str | None = None,
    now: datetime,
) -> dict[str, list[Scrape]] | None:
    """`diagnose --prometheus URL` with its range options → each instance's Scrapes (None without
    a URL; the range options without one are one ObserveError)."""
    if not url:
        if since or start or end or selector or step:
            raise ObserveError("--since, --start, --end, --selector and --step go with --prometheus URL")
        return None
    t0, t1 = parse_time("--start", start), parse_time("--end", end)
    return read_history(url, start=t0, end=t1, since=since, selector=selector, step=step, now=now).instances


def parse_time(flag: str, text: str | None) -> datetime | None:
    """``--start``/``--end``: an ISO 8601 time (``Z`` or an offset; none means UTC), or None."""
    if text is None:
        return None
    try:
        t = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ObserveError(f"{flag} needs an ISO 8601 time like 2026-11-29T19:00:00Z, not {text!r}") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


def parse_duration(text: str) -> float:
    """``6h``, ``90m``, ``1h30m`` → seconds (`promql.parse_duration`; a bare number is refused:
    ``--since 6`` is more likely a forgotten unit than six seconds); anything else is one ConfigError."""
    return promql.parse_duration(text)


def parse_selector(text: str | None) -> str:
    """A label selector as typed (``namespace="llm",model_name="llama"``, braces optional),
    checked and returned without braces (`promql.selector_text`); a malformed one is one ConfigError."""
    return promql.selector_text(text)


def choose_step(seconds: float, min_step: float = MIN_STEP_S) -> float:
    """The evaluation step for a range: at most MAX_POINTS points, never finer than ``min_step``,
    rounded up to whole seconds."""
    return float(max(min_step, math.ceil(seconds / MAX_POINTS)))


def _query_expr(canonical: str, selector: str) -> str:
    suffix = "(_bucket|_sum|_count)?" if canonical in _HISTOGRAMS else ""
    matchers = f'__name__=~"{promql.name_regex(canonical, suffix)}"'
    return "{" + matchers + ("," + selector if selector else "") + "}"


@dataclass
class History:
    """What was asked and what came back: instance name → its Scrapes, oldest first."""

    url: str
    start: datetime
    end: datetime
    step: float  # the query_range step; 0 when raw samples were read
    selector: str
    instances: dict[str, list[Scrape]] = field(default_factory=dict)
    series: int = 0
    raw: bool = False  # every stored sample in the range, at its scrape time (see the module doc)
    samples: int = 0


def _auth(env: Mapping[str, str]) -> tuple[dict[str, str], tuple[str, str] | None]:
    headers = {"Accept": "application/json"}
    token = env.get("OBSERVE_PROMETHEUS_TOKEN")
    if token:
        headers["Authorization"] = f"Bearer {token.strip()}"
    org = env.get("OBSERVE_PROMETHEUS_ORG_ID")
    if org:
        headers["X-Scope-OrgID"] = org.strip()
    user = env.get("OBSERVE_PROMETHEUS_USER")
    basic = (user, env.get("OBSERVE_PROMETHEUS_PASSWORD", "")) if user and not token else None
    return headers, basic


def _get(
    session: requests.Session, url: str, params: dict[str, str], timeout: float, env: Mapping[str, str]
) -> Any:
    """One API call; every failure is one TargetError (down, slow, HTTP error, not Prometheus)."""
    import requests

    headers, basic = _auth(env)
    where = url.split("?", 1)[0]
    try:
        r = session.get(url, params=params, headers=headers, auth=basic, timeout=timeout)
    except requests.Timeout:
        raise TargetError(f"Prometheus at {where} did not answer within {timeout:g}s") from None
    except requests.ConnectionError:
        raise TargetError(
            f"cannot connect to Prometheus at {where} (is the URL right and is it up?)"
        ) from None
    except requests.RequestException as e:
        raise TargetError(f"Prometheus at {where}: {str(e)[:160]}") from None
    if r.status_code in (401, 403):
        raise TargetError(
            f"Prometheus at {where} refused the query (HTTP {r.status_code}): set OBSERVE_PROMETHEUS_TOKEN, "
            "or OBSERVE_PROMETHEUS_USER and OBSERVE_PROMETHEUS_PASSWORD"
        )
    try:
        body = r.json()
    except ValueError:
        raise TargetError(
            f"{where} answered HTTP {r.status_code} without Prometheus JSON: is this the Prometheus "
            "(or Thanos Query / Mimir /prometheus) base URL?"
        ) from None
    if not isinstance(body, dict) or body.get("status") != "success":
        err = body.get("error") if isinstance(body, dict) else None
        raise TargetError(
            f"Prometheus at {where} answered an error (HTTP {r.status_code}): {err or body!r}"[:300]
        )
    return body.get("data")


def _instance_key(labels: Mapping[str, str]) -> str:
    if labels.get("pod"):
        return f"{labels['namespace']}/{labels['pod']}" if labels.get("namespace") else labels["pod"]
    return labels.get("instance") or labels.get("job") or "prometheus"


def to_instances(results: Sequence[Mapping[str, Any]]) -> tuple[dict[str, list[Scrape]], dict[str, dict]]:
    """Range-query matrices → instance name → Scrapes (one per timestamp, oldest first), and each
    instance's target labels. Pure: the part of this module that tests feed recorded answers."""
    points: dict[str, dict[float, list[Sample]]] = {}
    seen: dict[str, set] = {}
    targets: dict[str, dict] = {}
    for series in results:
        metric = dict(series.get("metric") or {})
        raw = metric.pop("__name__", "")
        if not raw:
            continue
        key = _instance_key(metric)
        targets.setdefault(key, {k: metric[k] for k in _TARGET_LABELS if k in metric})
        labels = {k: v for k, v in metric.items() if k not in _TARGET_LABELS and k not in _REPLICA_LABELS}
        ident = (raw, tuple(sorted(labels.items())))
        if ident in seen.setdefault(key, set()):
            continue  # the same series from another replica
        seen[key].add(ident)
        name = canonical_sample_name(raw, raw)
        at_points = points.setdefault(key, {})
        for t, v in series.get("values") or ():
            try:
                value = float(v)
            except (TypeError, ValueError):
                continue
            at_points.setdefault(float(t), []).append(
                Sample(name=name, labels=labels, value=value, raw_name=raw)
            )
    out: dict[str, list[Scrape]] = {}
    for key in sorted(points):
        out[key] = [
            Scrape(at=datetime.fromtimestamp(t, UTC), samples=samples, source=f"prometheus:{key}")
            for t, samples in sorted(points[key].items())
        ]
    return out, targets


def read_history(
    url: str,
    *,
    start: datetime | None = None,
    end: datetime | None = None,
    since: str | None = None,
    selector: str | None = None,
    step: str | None = None,
    now: datetime,
    env: Mapping[str, str] | None = None,
    timeout: float = TIMEOUT_S,
    session: requests.Session | None = None,
) -> History:
    """Every instance's history between ``start`` and ``end`` (or the last ``since``, default 6h)."""
    env = os.environ if env is None else env
    if "://" not in url:
        url = "http://" + url
    base = url.rstrip("/")
    if base.endswith("/api/v1"):
        base = base[: -len("/api/v1")]
    if end is None:
        end = now
    if start is None:
        start = end - timedelta(seconds=parse_duration(since or "6h"))
    elif since:
        raise ConfigError("give --since or --start, not both")
    if start.tzinfo is None:
        start = start.replace(tzinfo=UTC)
    if end.tzinfo is None:
        end = end.replace(tzinfo=UTC)
    if end <= start:
        raise ConfigError(f"--end ({end.isoformat()}) must be after --start ({start.isoformat()})")
    span = (end - start).total_seconds()
    sel = parse_selector(selector)
    import requests

    session = session or requests.Session()
    if step is None and span <= RAW_MAX_SPAN_S:
        window = max(1, math.ceil(span))
        hist = History(
            url=base, start=end - timedelta(seconds=window), end=end, step=0.0, selector=sel, raw=True
        )
        try:
            results = _read_all(
                session, base, hist, {"time": f"{end.timestamp():.3f}"}, f"[{window}s]", timeout, env
            )
        except _TooMany:  # a fleet or a busy target: read it at a step instead
            results = None
        if results is not None:
            return _finish(hist, results)
    step_s = parse_duration(step) if step else choose_step(span)
    if span / step_s > 11_000:
        raise ConfigError(f"step {step} over {span:g}s is more than the 11,000 points Prometheus allows")
    # The last point falls on `end` exactly (the newest samples count); the first at or after `start`.
    start = end - timedelta(seconds=math.floor(span / step_s) * step_s)
    hist = History(url=base, start=start, end=end, step=step_s, selector=sel)
    params = {"start": f"{start.timestamp():.3f}", "end": f"{end.timestamp():.3f}", "step": f"{step_s:g}"}
    return _finish(hist, _read_all(session, base, hist, params, "", timeout, env))


class _TooMany(Exception):
    """More raw samples than MAX_SAMPLES."""


def _read_all(
    session: requests.Session,
    base: str,
    hist: History,
    params: dict[str, str],
    window: str,
    timeout: float,
    env: Mapping[str, str],
) -> list[dict]:
    """One query per metric: raw samples (``window`` given: an instant query of ``expr[window]``)
    or a range query at the step (``params`` has start, end and step)."""
    path = "/api/v1/query" if hist.raw else "/api/v1/query_range"
    results: list[dict] = []
    for canonical in METRICS:
        query = {
            "query": _query_expr(canonical, hist.selector) + window,
            **params,
            "timeout": f"{timeout:g}s",
        }
        data = _get(session, base + path, query, timeout, env)
        if not isinstance(data, dict) or data.get("resultType") != "matrix":
            raise TargetError(f"Prometheus at {base} answered a range query without a matrix")
        res = data.get("result") or []
        if len(res) > MAX_SERIES:
            raise TargetError(
                f"{canonical} has {len(res)} series in Prometheus at {base}: narrow --selector "
                '(e.g. namespace="llm",pod="vllm-0")'
            )
        hist.samples += sum(len(r.get("values") or ()) for r in res)
        if hist.raw and hist.samples > MAX_SAMPLES:
            raise _TooMany
        results.extend(res)
    return results


def _finish(hist: History, results: list[dict]) -> History:
    base, sel, start, end = hist.url, hist.selector, hist.start, hist.end
    hist.series = len(results)
    hist.instances, _ = to_instances(results)
    if not hist.instances:
        raise TargetError(
            f"no vLLM series in Prometheus at {base} between {start.isoformat()} and {end.isoformat()}"
            + (f" matching {{{sel}}}" if sel else "")
            + " (is vLLM scraped there? check --selector and the time range)"
        )
    return hist
