"""`observe top`: the live terminal view of vLLM servers (observe.top.view)."""

from __future__ import annotations

import typer

from observe.cli.common import user_errors


@user_errors
def top(
    urls: list[str] = typer.Argument(..., metavar="URL..."),
    sidecar_url: list[str] = typer.Option([], "--sidecar", metavar="URL"),
    log: list[str] = typer.Option([], "--log", metavar="GLOB"),
    interval: str = typer.Option("2s", "--interval"),
    once: bool = typer.Option(False, "--once"),
) -> None:
    """A live view of vLLM servers: KV usage, queue, throughput, preemptions, TTFT/ITL, findings (q quits)."""
    from observe.sidecar.config import parse_duration
    from observe.top import view as top_mod

    targets = top_mod.targets(urls, sidecar_url, log)
    secs = parse_duration(interval, what="--interval")
    top_mod.run(targets, interval=secs, timeout=min(5.0, max(1.0, secs)), once=once)
