"""`observe tune --workload-from`: read what a vLLM recorded of its own traffic — a run folder
(`observe run`'s `NNN/vllm.log` and `NNN/metrics-K.txt`) or a live server (two /metrics reads
`--traffic-window` seconds apart) — and hand it to `observe.trafficfit` (pure), which turns it into
the workload's figures."""

from __future__ import annotations

import gzip
import re
import time
from collections.abc import Callable, Collection, Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from observe import trafficfit
from observe.errors import ConfigError, InputError, TargetError
from observe.metrics import scrape
from observe.model import Scrape
from observe.pipeline import in_time_order
from observe.trafficfit import Traffic, TrafficError

__all__ = ["Traffic", "TrafficError", "fill", "read", "from_folder", "from_url", "launch_folder"]

_LAUNCH = re.compile(r"\d{3}")


def fill(
    workload: dict[str, Any],
    source: str,
    *,
    given: Collection[str] = (),
    window: float = 60.0,
    notify: Callable[[str], None] = lambda _: None,
) -> dict[str, Any]:
    """`workload` (Workload's fields, as options gave them) with the figures of `source`'s traffic,
    except those named in `given` (options set explicitly win), and `source` recording where they
    came from (the derived figures and which of them an option overrode)."""
    seen = read(source, window=window, notify=notify)
    derived = seen.workload()
    out = {**workload, **{k: v for k, v in derived.items() if k not in given}}
    kept = sorted(set(given) & set(derived))
    out["source"] = {**seen.to_dict(), "overridden": kept}
    won = f"; given explicitly: {', '.join('--' + k.replace('_', '-') for k in kept)}" if kept else ""
    notify(f"workload from {seen.source}: {seen.summary()}; {out.get('num_prompts')} prompts per run{won}")
    return out


def read(
    source: str,
    *,
    window: float = 60.0,
    notify: Callable[[str], None] = lambda _: None,
    sleep: Callable[[float], None] = time.sleep,
) -> Traffic:
    """`source` is a URL (http:// or https://) or a folder; the traffic it shows, or one line of
    error: TargetError (the server does not answer), InputError / TrafficError (too little)."""
    if source.startswith(("http://", "https://")):
        return from_url(source, window=window, notify=notify, sleep=sleep)
    return from_folder(Path(source))


def from_url(
    url: str,
    *,
    window: float = 60.0,
    notify: Callable[[str], None] = lambda _: None,
    sleep: Callable[[float], None] = time.sleep,
    clock: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> Traffic:
    """Two reads of `url`/metrics `window` seconds apart, each stamped by `clock` when it was read."""
    if window <= 0:
        raise ConfigError(f"--traffic-window must be more than 0 seconds, got {window:g}")
    first = _fetch(url, clock())
    notify(f"reading {scrape.metrics_url(url)} again in {window:g} s to measure its traffic")
    sleep(window)
    return trafficfit.derive(first, _fetch(url, clock()), source=url)


def _fetch(url: str, now: datetime) -> Scrape:
    sc = scrape.fetch(url, now=now)
    if not sc.ok:
        raise TargetError(f"cannot read the traffic of {url}: {sc.error}")
    return sc


def launch_folder(path: Path) -> Path:
    """The folder whose snapshots to read: `path` itself when it holds `metrics-*.txt`, else the
    last of its launch folders (`NNN/`, as `observe run` writes them) that holds some."""
    if not path.exists():
        raise InputError(f"--workload-from: no such folder: {path} (a live server is http://HOST:PORT)")
    if not path.is_dir():
        raise InputError(f"--workload-from takes a run folder or a URL, not a file: {path}")
    candidates = [path, *sorted(p for p in path.iterdir() if p.is_dir() and _LAUNCH.fullmatch(p.name))]
    with_snaps = [p for p in candidates if any(p.glob("metrics-*.txt"))]
    if not with_snaps:
        raise InputError(
            f"{path}: no /metrics snapshots (metrics-K.txt, as `observe run` saves them) in it or in "
            "its launch folders: the traffic needs two reads of /metrics"
        )
    return with_snaps[-1]


def from_folder(path: Path) -> Traffic:
    """The first and the last snapshot of the launch folder (`launch_folder`), in time order, and
    the `Received request` lines of its vllm.log (and rotated parts)."""
    folder = launch_folder(path)
    snaps = in_time_order(sorted(folder.glob("metrics-*.txt")))
    if len(snaps) < 2:
        raise TrafficError(
            f"{folder}: one /metrics read only ({len(snaps)} snapshot at distinct times): the traffic "
            "needs two, taken while the server was serving"
        )
    logs = sorted(folder.glob("vllm.log*"))
    arrivals = trafficfit.arrival_seconds(_lines(logs))
    where = ", ".join(p.name for p in logs) if logs else ""
    return trafficfit.derive(snaps[0], snaps[-1], source=str(folder), arrivals=arrivals, arrivals_from=where)


def _lines(paths: list[Path]) -> Iterator[str]:
    """The lines of each log part that can hold a request line (others are not decoded)."""
    needle = trafficfit.RECEIVED.encode()
    for p in paths:
        try:
            f = gzip.open(p, "rb") if p.suffix == ".gz" else open(p, "rb")
            with f:
                for raw in f:
                    if needle in raw:
                        yield raw.decode("utf-8", "replace")
        except (OSError, EOFError) as e:
            raise InputError(f"cannot read {p}: {getattr(e, 'strerror', None) or e}") from None
