"""`observe top`: the live terminal view of vLLM servers (observe.top)."""

from __future__ import annotations

import typer

from observe.cli.common import user_errors


# fmt: off
@user_errors
def top(
    urls: list[str] = typer.Argument(..., metavar="URL...", help="Base URLs of vLLM servers (their /metrics)."),
    sidecar_url: list[str] = typer.Option([], "--sidecar", metavar="URL", help="A running sidecar per server, in the servers' order (its findings)."),
    log: list[str] = typer.Option([], "--log", metavar="GLOB", help="Log files of the (single) server: findings from them and its /metrics."),
    interval: str = typer.Option("2s", "--interval", help="How often to read the servers (e.g. 1s, 5s)."),
    once: bool = typer.Option(False, "--once", help="Read each server twice, a second apart (throughput is a rate), print the screen and exit."),
) -> None:
    """A live view of vLLM servers: KV usage, queue, throughput, preemptions, TTFT/ITL, findings (q quits)."""
    from observe import top as top_mod
    from observe.sidecarconfig import parse_duration

    targets = top_mod.targets(urls, sidecar_url, log)
    secs = parse_duration(interval, what="--interval")
    top_mod.run(targets, interval=secs, timeout=min(5.0, max(1.0, secs)), once=once)
# fmt: on
