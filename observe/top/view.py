"""Edge: `observe top` — a live terminal view of one or more vLLM servers (rich).

Each server's `/metrics` is read every `interval` seconds (all servers at once, each read bounded
by a timeout, so one server that hangs does not freeze the others) and folded into a pure
`topstate.TopState`; the screen is drawn from that state with rich's `Live` on the alternate
screen, redrawn in place (no clearing, no flicker). Findings and the recommendation come from a
running sidecar (`--sidecar URL`: its `/api/diagnosis`) or, with `--log`, from an in-process
sidecar that follows the logs and analyses them with the scrapes, as `observe sidecar` does.
`q` quits (exit 0), Ctrl-C too (exit 130); `--once` reads twice, a second apart (rates need two
reads), prints one screen, and exits 3 when a server is down. A server that does not answer is
shown as down with the reason.

`render(state)` builds the screen (tests render it to text); `run(...)` is the loop.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import os
import select
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import requests
from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from observe.errors import ObserveError, TargetError
from observe.metrics import recentview, scrape
from observe.model import Scrape
from observe.report import style
from observe.top.state import ServerView, TopState, sparkline

__all__ = ["Target", "render", "run", "targets"]

ONCE_GAP_S = 1.0  # `--once`: the seconds between its two reads (at most `interval`)


@dataclass
class Target:
    """One server to watch: its base URL, and where its findings come from (if anywhere)."""

    url: str
    sidecar_url: str | None = None
    logs: tuple[str, ...] = ()


def targets(urls: Sequence[str], sidecar_urls: Sequence[str] = (), logs: Sequence[str] = ()) -> list[Target]:
    """The servers to watch: each URL checked, the sidecars in the servers' order (at most one
    each), the logs only with a single server; one-line ObserveError otherwise."""
    from observe.sidecar.config import check_url

    for u in [*urls, *sidecar_urls]:
        check_url(u, what="URL")
    if len(sidecar_urls) > len(urls):
        raise ObserveError(
            f"{len(sidecar_urls)} --sidecar for {len(urls)} server(s): give at most one per server"
        )
    if logs and len(urls) != 1:
        raise ObserveError("--log goes with exactly one server URL")
    return [
        Target(
            url=u,
            sidecar_url=sidecar_urls[i] if i < len(sidecar_urls) else None,
            logs=tuple(logs) if i == 0 else (),
        )
        for i, u in enumerate(urls)
    ]


# ---------------------------------------------------------------- drawing
def _num(v: float | None, fmt: str = "{:,.1f}", unit: str = "") -> str:
    return "—" if v is None else fmt.format(v) + unit


def _secs(v: float | None) -> str:
    if v is None:
        return "—"
    return f"{v * 1000:,.0f} ms" if v < 1 else f"{v:,.2f} s"


def _server_panel(v: ServerView, width: int, recent: list[tuple[str, str]] | None = None) -> Panel:
    spark_w = max(8, min(40, width - 60))
    t = Table.grid(padding=(0, 2))
    t.add_column(style="bold", no_wrap=True)
    t.add_column(no_wrap=True)
    t.add_column(no_wrap=True, style="green")
    parts: list[Any] = []
    if v.up is False:
        seen = v.kv_usage_pct is not None or v.running is not None
        parts.append(Text(f"DOWN: {v.error}" + (" (last numbers below)" if seen else ""), style="bold red"))
    if v.up and v.stuck is not None:
        parts.append(
            Text(
                f"STUCK: {v.stuck.running:,.0f} running, {v.stuck.waiting:,.0f} waiting, no token produced "
                f"for {v.stuck.seconds:,.0f} s (since {v.stuck.since:%H:%M:%S})",
                style="bold red",
            )
        )
    if v.up is not None and (v.up or v.kv_usage_pct is not None or v.running is not None):
        kv = v.kv_usage_pct
        t.add_row(
            "KV cache",
            Text(_num(kv, unit=" %"), style="bold red" if kv is not None and kv >= 90 else ""),
            sparkline(list(v.history["kv_usage_pct"]), spark_w),
        )
        t.add_row("running / waiting", f"{_num(v.running, '{:,.0f}')} / {_num(v.waiting, '{:,.0f}')}", "")
        t.add_row(
            "throughput",
            f"gen {_num(v.generation_tps, unit=' tok/s')}   prompt {_num(v.prompt_tps, unit=' tok/s')}",
            "",
        )
        t.add_row(
            "preemptions",
            f"{_num(v.preemptions_per_s, '{:,.2f}', ' /s')}   ({_num(v.preemptions_total, '{:,.0f}')} total)",
            "",
        )
        since = " (since start)" if v.latency_since_start else ""
        for key, label in (("ttft", "TTFT"), ("itl", "ITL")):
            p50, p99 = getattr(v, f"{key}_p50_s"), getattr(v, f"{key}_p99_s")
            t.add_row(f"{label} p50", _secs(p50) + since, sparkline(list(v.history[f"{key}_p50_s"]), spark_w))
            t.add_row(f"{label} p99", _secs(p99) + since, sparkline(list(v.history[f"{key}_p99_s"]), spark_w))
        for label, text in recent or []:  # 0.30+ features the server exposes (recentview)
            t.add_row(label, text, "")
    parts.append(t)
    if v.findings_source is None:
        parts.append(Text("findings: give --sidecar URL or --log GLOB", style="dim"))
    elif v.findings_error:
        parts.append(Text(f"findings ({v.findings_source}): {v.findings_error}", style="yellow"))
    else:
        if not v.findings:
            parts.append(Text(f"findings ({v.findings_source}): none", style="green"))
        for sev, fid, what in v.findings[:5]:
            parts.append(Text.assemble((f"[{sev}] ", style.TERMINAL.get(sev, "")), f"{fid}: {what}"))
        if v.recommendation:
            parts.append(Text.assemble(("recommendation: ", "bold"), v.recommendation))
    status = (
        ("waiting for the first read", "dim")
        if v.up is None
        else (f"STUCK {v.stuck.seconds:,.0f} s", "bold red")
        if v.up and v.stuck is not None
        else ("UP", "bold green")
        if v.up
        else ("DOWN", "bold red")
    )
    title = Text.assemble((v.name, "bold"), "  ", status, f"  {v.model}" if v.model else "")
    return Panel(Group(*parts), title=title, title_align="left")


def render(
    state: TopState,
    *,
    width: int = 100,
    clock: str | None = None,
    recent: dict[str, list[tuple[str, str]]] | None = None,
) -> Group:
    """The whole screen: a header line and one panel per server (with `recent`: each server's
    rows for the recent vLLM features its last read showed, `recentview.rows`)."""
    head = Text.assemble(
        ("observe top", "bold"),
        f"  {len(state.servers)} server(s)",
        f"  {clock}" if clock else "",
        "   q quits",
    )
    return Group(head, *(_server_panel(v, width, (recent or {}).get(v.name)) for v in state.servers.values()))


# ---------------------------------------------------------------- feeding
class _Feed:
    """Reads one target: /metrics, and its findings (remote sidecar or in-process one over logs)."""

    def __init__(
        self,
        target: Target,
        timeout: float,
        analyze_every: float,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.target = target
        self.timeout = timeout
        self.analyze_every = analyze_every
        self._clock = clock  # when the logs were last analysed (a test passes its own)
        self._last_analysis: float | None = None
        self._car = None
        if target.logs:
            from observe.sidecar.config import SidecarSettings
            from observe.sidecar.service import Sidecar

            self._car = Sidecar(
                SidecarSettings(
                    logs=list(target.logs), vllm_url=target.url, from_start=True, use_watchdog=False
                )
            )
            # the logs' history now, before the first screen: reads and findings run side by side,
            # and a first analysis over nothing would show "none" for an existing log
            self._car.poll_logs_once()

    def read(self) -> Scrape:
        if self._car is not None:
            self._car.poll_logs_once()
            return self._car.scrape_once()
        return scrape.fetch(self.target.url, timeout=self.timeout, now=datetime.now(UTC))

    def findings(self) -> tuple[dict | None, str | None, str | None]:
        """(diagnosis document, source, error) — source None when there is none."""
        if self.target.sidecar_url:
            url = scrape.base_url(self.target.sidecar_url) + "/api/diagnosis"
            try:
                r = requests.get(url, timeout=self.timeout)
                if r.status_code == 503:
                    return None, self.target.sidecar_url, "no analysis yet"
                if r.status_code != 200:
                    return None, self.target.sidecar_url, f"HTTP {r.status_code} from {url}"
                return r.json(), self.target.sidecar_url, None
            except (requests.RequestException, ValueError) as e:
                return None, self.target.sidecar_url, f"cannot read {url}: {type(e).__name__}"
        if self._car is not None:
            now = self._clock()
            if self._last_analysis is None or now - self._last_analysis >= self.analyze_every:
                self._last_analysis = now
                self._car.analyze_once()
            doc = self._car.diagnosis_dict()
            return doc, "logs", None if doc is not None else "no analysis yet"
        return None, None, None

    def close(self) -> None:
        if self._car is not None:
            self._car.stop()


def _poll(
    state: TopState,
    feeds: dict[str, _Feed],
    lock: threading.Lock,
    pool,
    recent: dict[str, list[tuple[str, str]]] | None = None,
) -> None:
    """One read of every server at once, then their findings at once: an analysis over logs
    (`--log`) sees the read just made, so the first screen's findings are of the logs and it."""
    futures = {pool.submit(f.read): n for n, f in feeds.items()}
    for fut, name in futures.items():
        try:
            sc = fut.result()
        except Exception as e:  # a feed must never take the screen down
            sc = Scrape(at=None, samples=[], ok=False, error=f"{type(e).__name__}: {e}")
        with lock:
            state.observe(name, sc)
            if recent is not None and sc.ok:
                recent[name] = recentview.rows(sc)
    finds = {pool.submit(f.findings): n for n, f in feeds.items()}
    for fut, name in finds.items():
        try:
            doc, source, err = fut.result()
        except Exception as e:
            doc, source, err = None, "findings", f"{type(e).__name__}: {e}"
        if source is not None:
            with lock:
                state.findings(name, doc, source=source, error=err)


def _no_key(timeout: float) -> None:
    """No terminal: wait the timeout, no key."""
    time.sleep(timeout)


@contextlib.contextmanager
def _keys() -> Iterator[Any]:
    """stdin in cbreak mode (keys without Enter, no echo) when it is a terminal; yields a reader."""
    if not sys.stdin.isatty():
        yield _no_key
        return
    import termios
    import tty

    fd = sys.stdin.fileno()
    old = termios.tcgetattr(fd)
    tty.setcbreak(fd)

    def read(timeout: float) -> str | None:
        ready, _, _ = select.select([fd], [], [], timeout)
        return os.read(fd, 32).decode(errors="replace") if ready else None

    try:
        yield read
    finally:
        termios.tcsetattr(fd, termios.TCSADRAIN, old)


def run(
    targets: list[Target],
    *,
    interval: float = 2.0,
    timeout: float = 5.0,
    analyze_every: float = 10.0,
    once: bool = False,
    console: Console | None = None,
    clock: Callable[[], float] = time.monotonic,
) -> None:
    """Show the servers until `q` (or Ctrl-C); `once`: read each server once, print, return.
    `clock` paces the analyses of `--log` (every `analyze_every` seconds of it)."""
    from rich.live import Live

    console = console or Console()
    names = [t.url for t in targets]
    state = TopState(names)
    feeds = {t.url: _Feed(t, timeout, analyze_every, clock) for t in targets}
    lock = threading.Lock()
    recent: dict[str, list[tuple[str, str]]] = {}
    stop = threading.Event()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=2 * len(feeds), thread_name_prefix="observe-top")

    def screen() -> Group:
        with lock:
            return render(
                state, width=console.width, clock=datetime.now().strftime("%H:%M:%S"), recent=recent
            )

    try:
        if once:  # two reads a moment apart: throughput is a rate, one read has none
            _poll(state, feeds, lock, pool, recent)
            if any(v.up for v in state.servers.values()):
                time.sleep(min(interval, ONCE_GAP_S))
                _poll(state, feeds, lock, pool, recent)
            console.print(screen())
            down = [v for v in state.servers.values() if v.up is False]
            if down:  # the README's exit 3: a server that is down is an answer a script must see
                raise TargetError("; ".join(f"{v.name} is down: {v.error}" for v in down))
            return

        def loop() -> None:
            while not stop.is_set():
                t0 = time.monotonic()
                try:
                    _poll(state, feeds, lock, pool, recent)
                except RuntimeError:  # q or Ctrl-C shut the pool while a read was in flight
                    if stop.is_set():
                        return
                    raise
                stop.wait(max(0.0, interval - (time.monotonic() - t0)))

        poller = threading.Thread(target=loop, name="observe-top-poll", daemon=True)
        poller.start()
        with (
            _keys() as read_key,
            Live(screen(), console=console, screen=True, auto_refresh=False, redirect_stderr=False) as live,
        ):
            while True:
                key = read_key(0.25)
                if key and ("q" in key or "Q" in key):
                    break
                live.update(screen(), refresh=True)
    finally:  # Ctrl-C goes on up to the CLI: exit 130, as the README's table says (q is exit 0)
        stop.set()
        pool.shutdown(wait=False, cancel_futures=True)
        for f in feeds.values():
            f.close()
