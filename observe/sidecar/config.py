"""The sidecar's settings (what to follow, what to scrape, how often, how far back) — not the
thresholds `--config` reads (observe.settings).

Plain dataclasses with validated constructors; `SidecarSettings.from_cli` turns the command-line
strings (`127.0.0.1:9400`, `1h`, `15s`) into typed values and raises `ConfigError` with one clear
sentence for anything that makes no sense. Pure: the token file is read at the edge
(observe.sidecar.tokenfile), which hands its text to `parse_api_token`.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Mapping
from dataclasses import dataclass, field

from observe.errors import ConfigError
from observe.metrics import promql
from observe.settings import Settings

__all__ = [
    "API_DIAGNOSIS_MODES",
    "SidecarSettings",
    "api_token_from_env",
    "check_url",
    "parse_api_token",
    "parse_duration",
    "parse_listen",
]

#: who may read /api/diagnosis: auto — open on loopback, beyond it only with a token;
#: public — anyone who can reach the port; off — nobody (404). A token, when set, is always required.
API_DIAGNOSIS_MODES = ("auto", "public", "off")
API_TOKEN_ENV = "OBSERVE_API_TOKEN"


def parse_duration(text: str | float | int, *, what: str = "duration") -> float:
    """`1h`, `30m`, `1h30m`, `90s`, `500ms`, `2d` or a plain number of seconds → seconds (> 0):
    `promql.parse_duration`, the one duration grammar."""
    return promql.parse_duration(text, what=what, numbers=True)


def check_url(url: str, *, what: str = "--vllm-url") -> str:
    """An http(s) URL with a host, returned unchanged; anything else is a ConfigError.

    A bare `host:port` is refused rather than guessed at: `localhost:8000` parses as a URL whose
    scheme is `localhost`, and a typo there should be told, not silently scraped as something else.
    """
    if not url.startswith(("http://", "https://")):
        hint = f" (did you mean http://{url}?)" if "://" not in url else ""
        raise ConfigError(f"{what} {url!r} is not an http(s) URL: it needs http:// or https://{hint}")
    if not re.fullmatch(r"https?://[\w.\-\[\]:]+(/\S*)?", url):
        raise ConfigError(f"{what} {url!r} is not an http(s) URL")
    return url


def parse_listen(text: str) -> tuple[str, int]:
    """`127.0.0.1:9400`, `:9400` (loopback), `[::1]:9400` or `9400` → (host, port)."""
    s = text.strip()
    host, port = "127.0.0.1", s
    if s.startswith("["):
        end = s.find("]")
        if end < 0 or not s[end + 1 :].startswith(":"):
            raise ConfigError(f"--listen {text!r}: expected [IPv6]:PORT")
        host, port = s[1:end], s[end + 2 :]
    elif ":" in s:
        host, port = s.rsplit(":", 1)
        host = host or "127.0.0.1"
    try:
        p = int(port)
    except ValueError:
        raise ConfigError(f"--listen {text!r}: port {port!r} is not a number") from None
    if not 0 <= p <= 65535:
        raise ConfigError(f"--listen {text!r}: port {p} is out of range")
    return host, p


@dataclass
class SidecarSettings:
    """How one sidecar runs beside one vLLM instance. Durations in seconds."""

    logs: list[str] = field(default_factory=list)  # glob patterns of vLLM log files
    vllm_url: str | None = None  # base URL of vLLM (its /metrics and /v1/models); None = logs only
    listen_host: str = "127.0.0.1"
    listen_port: int = 9400  # 0 = any free port (tests)
    scrape_interval: float = 15.0
    scrape_timeout: float = 5.0
    window: float = 3600.0  # how far back the analysis looks
    analyze_interval: float = 30.0
    from_start: bool = False  # read the logs' history instead of starting at their end
    poll_interval: float = 0.25  # follower wake-up when inotify is missing
    use_watchdog: bool = True
    # hard caps on the window whatever its duration (~750 B per event): 20,000 stats lines are
    # 55 h of one engine's 10 s stats; the caps only bite on floods of errors or access lines
    max_events: int = 20_000
    max_access_events: int = 5_000  # separate cap for uvicorn access-log lines
    max_line_bytes: int = 64 * 1024  # Settings.max_line_bytes (from_cli takes it from the thresholds)
    name: str | None = None  # instance name in the diagnosis (default: the vLLM URL or first log)
    warn_every: float = 300.0  # a warning that lasts is repeated this often (seconds)
    thresholds: Settings = field(default_factory=Settings)  # what the window is judged by
    api_diagnosis: str = "auto"  # one of API_DIAGNOSIS_MODES
    api_token: str | None = field(default=None, repr=False)  # bearer token for /api/diagnosis
    # where read positions and the counters alerts read survive a restart (observe.sidecar.tailstate);
    # None: a restart starts at the logs' end and the counters at 0
    state_dir: str | None = None

    def __post_init__(self) -> None:
        if self.api_diagnosis not in API_DIAGNOSIS_MODES:
            raise ConfigError(
                f"--api-diagnosis {self.api_diagnosis!r}: expected one of {', '.join(API_DIAGNOSIS_MODES)}"
            )
        if self.api_token is not None and not self.api_token:
            raise ConfigError("the /api/diagnosis token is empty")
        if not self.logs and not self.vllm_url:
            raise ConfigError("nothing to watch: give --log GLOB and/or --vllm-url URL")
        for attr in (
            "scrape_interval",
            "scrape_timeout",
            "window",
            "analyze_interval",
            "poll_interval",
            "warn_every",
        ):
            if not getattr(self, attr) > 0:
                raise ConfigError(f"{attr.replace('_', '-')} must be positive, got {getattr(self, attr)!r}")
        if self.max_events < 1 or self.max_access_events < 1 or self.max_line_bytes < 256:
            raise ConfigError("max_events and max_access_events must be >= 1, max_line_bytes >= 256")
        if not 0 <= self.listen_port <= 65535:
            raise ConfigError(f"listen port {self.listen_port} is out of range")
        if self.vllm_url is not None:
            check_url(self.vllm_url)

    @property
    def page_backstop_s(self) -> float:
        """How long a refused start's page waits for the analysis that names its fix before it goes
        out without one (a hung analysis must not silence it): 10 analysis intervals, at least 2 min."""
        return max(10 * self.analyze_interval, 120.0)

    @property
    def loopback(self) -> bool:
        """Whether the listener is reachable only from this host."""
        host = self.listen_host.strip("[]")
        if host == "localhost":
            return True
        try:
            return ipaddress.ip_address(host).is_loopback
        except ValueError:
            return False  # a host name: assume it resolves beyond loopback

    @property
    def diagnosis_access(self) -> str:
        """How /api/diagnosis answers: "off" (404), "token" (bearer token), "open", "closed" (403)."""
        if self.api_diagnosis == "off":
            return "off"
        if self.api_token:
            return "token"
        if self.api_diagnosis == "public" or self.loopback:
            return "open"
        return "closed"

    @property
    def api_warning(self) -> str | None:
        """One sentence for the operator when /api/diagnosis is not what a default would make it."""
        where = f"{self.listen_host}:{self.listen_port}"
        access = self.diagnosis_access
        if access == "closed":
            return (
                f"/api/diagnosis is closed: the sidecar listens on {where}, beyond loopback, without a "
                f"token; give --api-token-file (or {API_TOKEN_ENV}), or --api-diagnosis public or off"
            )
        if access == "open" and not self.loopback:
            return f"/api/diagnosis is open to anyone who can reach {where} (--api-diagnosis public)"
        return None

    @property
    def instance_name(self) -> str:
        return self.name or self.vllm_url or (self.logs[0] if self.logs else "vllm")

    @classmethod
    def from_cli(
        cls,
        *,
        logs: list[str],
        vllm_url: str | None,
        listen: str = "127.0.0.1:9400",
        scrape_interval: str = "15s",
        window: str = "1h",
        analyze_interval: str = "30s",
        from_start: bool = False,
        poll_interval: str = "0.25",
        use_watchdog: bool = True,
        name: str | None = None,
        thresholds: Settings | None = None,
        warn_every: str = "5m",
        api_diagnosis: str = "auto",
        api_token: str | None = None,
        state_dir: str | None = None,
    ) -> SidecarSettings:
        host, port = parse_listen(listen)
        thresholds = thresholds or Settings()
        return cls(
            logs=list(logs),
            vllm_url=vllm_url,
            listen_host=host,
            listen_port=port,
            scrape_interval=parse_duration(scrape_interval, what="--scrape-interval"),
            scrape_timeout=min(5.0, parse_duration(scrape_interval, what="--scrape-interval")),
            window=parse_duration(window, what="--window"),
            analyze_interval=parse_duration(analyze_interval, what="--analyze-interval"),
            from_start=from_start,
            poll_interval=parse_duration(poll_interval, what="--poll-interval"),
            use_watchdog=use_watchdog,
            name=name,
            thresholds=thresholds,
            max_line_bytes=thresholds.max_line_bytes,  # one bound for diagnose, sidecar and top
            warn_every=parse_duration(warn_every, what="--warn-every"),
            api_diagnosis=api_diagnosis,
            api_token=api_token,
            state_dir=state_dir or None,
        )


def parse_api_token(text: str, *, source: str) -> str:
    """The /api/diagnosis bearer token a token file holds: its first non-empty line. `source` names
    the file in the ConfigError when it holds none."""
    token = next((ln.strip() for ln in text.splitlines() if ln.strip()), "")
    if not token:
        raise ConfigError(f"{source} is empty")
    return token


def api_token_from_env(environ: Mapping[str, str]) -> str | None:
    """The /api/diagnosis bearer token from $OBSERVE_API_TOKEN; None when unset or blank."""
    token = environ.get(API_TOKEN_ENV, "").strip()
    return token or None
