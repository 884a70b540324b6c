"""`observe upgrade`'s inputs: a deployment's flags and release from a log, a command line or a running
server, and the metrics observe's own rules and dashboards read; the plan is observe.advise.upgrade's."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from observe.advise import upgrade
from observe.errors import ConfigError
from observe.flags import vllmflags
from observe.metrics import names

_METRIC = re.compile(r"\bvllm:[a-z0-9_]+")
# vllm:cache_config_info's labels that are flags of vllm serve
_INFO_FLAGS = (
    "gpu_memory_utilization",
    "block_size",
    "enable_prefix_caching",
    "cache_dtype",
    "kv_cache_memory_bytes",
)


def used_metrics() -> dict[str, list[str]]:
    """vLLM metric → the alert rules and dashboard panels of observe that read it."""
    from observe.monitoring import alerts, dashboards

    out: dict[str, list[str]] = {}
    for doc in alerts.rule_files().values():
        for group in doc.get("groups", []):
            for rule in group.get("rules", []):
                kind = "alert" if "alert" in rule else "recording rule"
                for m in set(_METRIC.findall(str(rule.get("expr", "")))):
                    out.setdefault(m, []).append(f"{kind} {rule.get('alert') or rule.get('record')}")
    from observe.monitoring.recording_rules import recording_rules
    from observe.settings import Settings

    for rule in recording_rules(Settings()):
        for m in set(_METRIC.findall(str(rule.get("expr", "")))):
            out.setdefault(m, []).append(f"recording rule {rule.get('record')}")
    for uid, model in sorted(dashboards.build().items()):
        for title, expr in dashboards.panel_queries(model):
            for m in set(_METRIC.findall(expr)):
                out.setdefault(m, []).append(f"dashboard {uid}: {title}")
    return {k: sorted(set(v)) for k, v in out.items()}


def from_log(path: Path) -> tuple[str | None, dict[str, Any], dict[str, str]]:
    """(release, flags, flag → "log FILE line N") of the last launch the log shows."""
    from observe.model import StartupFact
    from observe.parse.parser import parse_text

    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError as e:
        raise ConfigError(f"cannot read {path}: {e.strerror or e}") from e
    version: str | None = None
    flags: dict[str, Any] = {}
    where: dict[str, str] = {}
    for ev in parse_text(text, str(path)):
        if isinstance(ev, StartupFact) and ev.name == "version":
            version = str(ev.value)  # the engine repeats it after the flags: it ends no launch
        elif isinstance(ev, StartupFact) and ev.name == "flags" and isinstance(ev.value, dict):
            flags = dict(ev.value)  # a later launch's flags replace the earlier one's
            where = dict.fromkeys(ev.value, f"{path.name} line {ev.env.lineno} (non-default args)")
    if version is None and not flags:
        raise ConfigError(f"{path}: no vLLM startup lines (version, non-default args) in this log")
    return version, flags, where


def from_command(argv: Sequence[str]) -> tuple[dict[str, Any], dict[str, str]]:
    from observe.manage.spec import parse_command

    spec = parse_command(list(argv))
    flags = dict(spec.flags)
    return flags, dict.fromkeys(flags, "the command line")


def from_server(
    url: str, given: str | None = None, device: str = "GPU", timeout: float = 5.0
) -> tuple[str | None, dict[str, Any], dict[str, str]]:
    """(release: `given`, else /version's; flags from vllm:cache_config_info; where). A label equal to
    the release's own default is taken as unset: /metrics does not say which values were passed."""
    import requests

    from observe.metrics import metricmath, scrape

    base = scrape.base_url(url)
    version = given
    if version is None:
        try:
            got = requests.get(base + "/version", timeout=timeout)
            version = got.json().get("version") if got.status_code == 200 else None
        except (requests.RequestException, ValueError, AttributeError):
            version = None
    sc = scrape.fetch(url, timeout=timeout)
    if not sc.ok:
        raise ConfigError("no vLLM /metrics answered at the --url given")
    cfg = metricmath.running_config(sc)
    flags: dict[str, Any] = {}
    for key in _INFO_FLAGS:
        flag = "--" + key.replace("_", "-").replace("cache-dtype", "kv-cache-dtype")
        unset = vllmflags.default(flag, version, device=device, fallback=True)
        if cfg.get(key) is not None and cfg[key] != unset:
            flags[flag] = cfg[key]
    return version, flags, dict.fromkeys(flags, f"/metrics {names.CACHE_CONFIG_INFO}")


def run(
    *,
    to: str,
    log: Path | None,
    command: Sequence[str],
    url: str | None,
    from_version: str | None,
    device: str,
) -> upgrade.Upgrade:
    """The upgrade plan for exactly one of log, command and url; ConfigError for anything else."""
    if sum(bool(x) for x in (log, command, url)) != 1:
        raise ConfigError("give exactly one of --log FILE, --url URL or -- vllm serve MODEL [FLAGS]")
    if device not in ("GPU", "CPU"):
        raise ConfigError(f"--device must be GPU or CPU, not {device!r}")
    version: str | None = None
    if log:
        version, flags, where = from_log(log)
        source = "log"
    elif url:
        version, flags, where = from_server(url, from_version, device)
        source = "server"
    else:
        flags, where = from_command(command)
        source = "command"
    try:
        return upgrade.plan(
            flags,
            from_version or version,
            to,
            source=source,
            device=device,
            where=where,
            used_metrics=used_metrics(),
        )
    except ValueError as e:
        raise ConfigError(str(e)) from None
