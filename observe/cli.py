"""The `observe` command line. typer lives here and nowhere else; nothing below this module prints.

Each command is a thin shell: parse options, call one function of the core or an edge module,
print or write what it returns. ObserveError becomes one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import functools
import os
import signal
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from enum import Enum
from pathlib import Path
from typing import Any

import typer
import typer.core

from observe import __version__, errors, podlogs
from observe.errors import ConfigError, InputError, ObserveError, TargetError

ENVVAR_PREFIX = "OBSERVE"  # every option OPT of command CMD is also read from OBSERVE_CMD_OPT

app = typer.Typer(
    name="observe",
    help=f"Observability stack and tuning advisor for vLLM servers (observe {__version__}).",
    epilog="Every option can also be set as OBSERVE_<COMMAND>_<OPTION> (e.g. OBSERVE_SIDECAR_VLLM_URL). "
    "Exit codes: " + "; ".join(f"{c} {short}" for c, _, short, _ in errors.EXIT_CODES) + ".",
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)
generate_app = typer.Typer(
    help="Write dashboards/*.json or alerts/*.yml from the generators.", no_args_is_help=True
)
app.add_typer(generate_app, name="generate")
config_app = typer.Typer(help="The thresholds and SLOs observe judges a server by.", no_args_is_help=True)
app.add_typer(config_app, name="config")

CONFIG_HELP = "YAML file of settings (thresholds, SLOs, alert knobs); `observe config show` lists them."


def _settings(config: Path | None):
    """The settings: defaults, overridden by --config FILE when given."""
    from observe import settings as settings_mod

    if config is None:
        return settings_mod.Settings()
    try:
        text = config.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise ObserveError(f"cannot read --config {config}: {getattr(e, 'strerror', None) or e}")
    return settings_mod.from_yaml(text, source=str(config))


def _version(value: bool) -> None:
    if value:
        typer.echo(f"observe {__version__}")
        raise typer.Exit(0)


@app.callback()
def _root(
    version: bool = typer.Option(
        False, "--version", "-V", callback=_version, is_eager=True, help="Print the version and exit."
    ),
) -> None:
    """Observability stack and tuning advisor for vLLM servers."""


def _err(msg: str, code: int = errors.EXIT_USAGE) -> typer.Exit:
    typer.echo(f"observe: error: {msg}", err=True)
    return typer.Exit(code)


def user_errors(fn: Callable) -> Callable:
    """Turn ObserveError (and OSError from user paths) into one line on stderr, no traceback."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        try:
            return fn(*args, **kwargs)
        except ObserveError as e:
            raise _err(str(e), e.exit_code)
        except KeyboardInterrupt:
            raise _err("interrupted", errors.EXIT_INTERRUPTED)
        except BrokenPipeError:
            raise typer.Exit(0)

    return wrapper


def _emit(text: str, output: Path | None) -> None:
    if output is None:
        sys.stdout.write(text)
        if not text.endswith("\n"):
            sys.stdout.write("\n")
    else:
        try:
            output.write_text(text, encoding="utf-8")
        except OSError as e:
            raise ObserveError(f"cannot write {output}: {e.strerror or e}")


class Fmt(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    html = "html"


class TextOrJson(str, Enum):
    """For commands whose output is a short table: text for people, json for programs."""

    text = "text"
    json = "json"


class FailOn(str, Enum):
    info = "info"
    warning = "warning"
    critical = "critical"


# ---------------------------------------------------------------- diagnose
@app.command()
@user_errors
def diagnose(
    paths: list[Path] = typer.Argument(
        None,
        metavar="PATH...",
        help="Log files (plain or .gz) or folders of vLLM logs; `-` reads standard input.",
    ),
    metrics: list[Path] = typer.Option([], "--metrics", help="Saved /metrics snapshots (text exposition)."),
    prometheus: str | None = typer.Option(
        None,
        "--prometheus",
        help="Read vLLM's history from this Prometheus (or Thanos Query / Mimir) URL. Credentials from "
        "OBSERVE_PROMETHEUS_TOKEN or OBSERVE_PROMETHEUS_USER/_PASSWORD.",
    ),
    since: str | None = typer.Option(
        None, "--since", help="With --prometheus: the last DURATION (default 6h)."
    ),
    start: str | None = typer.Option(None, "--start", help="With --prometheus: ISO 8601 start time."),
    end: str | None = typer.Option(None, "--end", help="With --prometheus: ISO 8601 end time (default now)."),
    selector: str | None = typer.Option(
        None, "--selector", help='With --prometheus: label selector, e.g. namespace="llm",model_name="m".'
    ),
    step: str | None = typer.Option(
        None,
        "--step",
        help="With --prometheus: query step (default: raw samples up to 6h, else a step from the range).",
    ),
    fmt: Fmt = typer.Option(Fmt.text, "--format", help="Report format."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the report here instead of stdout."
    ),
    fail_on: FailOn | None = typer.Option(
        None, "--fail-on", help="Exit 1 when a finding of this severity or worse is found."
    ),
    progress: bool = typer.Option(
        True, "--progress/--no-progress", help="Progress bar on stderr for large inputs."
    ),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    partial_ok: bool = typer.Option(
        False,
        "--partial-ok",
        help="Exit 0 even when a file could be read only in part (a truncated .gz) or not at all.",
    ),
) -> None:
    """Read vLLM logs (any version), say what is wrong and which flags to change."""
    from observe import pipeline, report

    if not paths and not prometheus:
        raise ConfigError(
            "give at least one log file or folder (or `-` for standard input, or --prometheus URL)"
        )
    settings = _settings(config)
    history = None
    if prometheus:
        from observe import promhistory

        history = promhistory.read_history(
            prometheus,
            start=_iso_time("--start", start),
            end=_iso_time("--end", end),
            since=since,
            selector=selector,
            step=step,
            now=datetime.now(UTC),
        ).instances
    elif since or start or end or selector or step:
        raise ObserveError("--since, --start, --end, --selector and --step go with --prometheus URL")
    bar = _ProgressBar() if progress and sys.stderr.isatty() else None
    try:
        diag = pipeline.diagnose_paths(paths or [], metrics, progress=bar, settings=settings, history=history)
    finally:
        if bar is not None:
            bar.close()
    if fmt == Fmt.text and output is None:
        report.print_rich(diag)
    else:
        _emit(report.render(diag, fmt.value, settings=settings), output)
    partial = [u for u in diag.unreadable if u.get("kind") in pipeline.NOT_READ]
    if partial and not partial_ok:
        raise InputError(
            "; ".join(f"{u['path']}: {u['reason']}" for u in partial[:3])
            + " (the report above is of the rest; --partial-ok accepts this)"
        )
    if fail_on is not None and report.worst_at_least(diag, fail_on.value):
        raise typer.Exit(errors.EXIT_FOUND)


def _iso_time(flag: str, text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        t = datetime.fromisoformat(text.strip().replace("Z", "+00:00"))
    except ValueError:
        raise ObserveError(f"{flag} needs an ISO 8601 time like 2026-11-29T19:00:00Z, not {text!r}") from None
    return t if t.tzinfo else t.replace(tzinfo=UTC)


class _ProgressBar:
    """A rich progress bar on stderr, one task per file, shown once a file is large enough to matter."""

    def __init__(self) -> None:
        self._p = None
        self._tasks: dict[str, int] = {}

    def __call__(self, name: str, done: int, total: int) -> None:
        if self._p is None:
            from rich.console import Console
            from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

            self._p = Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                transient=True,
                console=Console(stderr=True),
            )
            self._p.start()
        tid = self._tasks.get(name)
        if tid is None:
            tid = self._tasks[name] = self._p.add_task(Path(name).name, total=total or None)
        self._p.update(tid, completed=done)

    def close(self) -> None:
        if self._p is not None:
            self._p.stop()


# ---------------------------------------------------------------- capacity
def _cap_num(flag: str, text: str | None, integer: bool = True):
    """Numbers are parsed here, not by typer, so a bad value is one line, not a usage panel."""
    if text is None:
        return None
    try:
        v = float(text)
    except ValueError:
        raise ObserveError(f"{flag} needs a number, not {text!r}") from None
    if integer:
        if v != v or v in (float("inf"), float("-inf")) or v != int(v):
            raise ObserveError(f"{flag} needs a whole number, not {text!r}")
        return int(v)
    return v


@app.command()
@user_errors
def capacity(
    model: str | None = typer.Option(
        None,
        "--model",
        help="Model name (built-in table) or path of a Hugging Face config.json (or its folder).",
    ),
    gpu: str | None = typer.Option(
        None, "--gpu", help="GPU name from the built-in table (H100, A100-80GB, L4, RTX-4090, ...)."
    ),
    gpu_memory_gib: str | None = typer.Option(
        None,
        "--gpu-memory-gib",
        metavar="GIB",
        help="Total GPU memory as torch reports it (overrides --gpu's figure).",
    ),
    vllm_version: str | None = typer.Option(
        None, "--vllm-version", help="vLLM version; decides V0/V1 accounting and defaults (default: newest)."
    ),
    tp: str = typer.Option("1", "--tp", "--tensor-parallel-size", metavar="N", help="Tensor parallel size."),
    pp: str = typer.Option(
        "1", "--pp", "--pipeline-parallel-size", metavar="N", help="Pipeline parallel size."
    ),
    utilization: str = typer.Option(
        "0.9", "--gpu-memory-utilization", metavar="U", help="Fraction of total GPU memory vLLM may use."
    ),
    max_model_len: str | None = typer.Option(
        None, "--max-model-len", metavar="L", help="Default: the model's max_position_embeddings."
    ),
    kv_cache_dtype: str = typer.Option(
        "auto", "--kv-cache-dtype", help="auto (model dtype) or fp8 (fp8_e4m3, fp8_e5m2)."
    ),
    block_size: str = typer.Option("16", "--block-size", metavar="B", help="KV-cache block size in tokens."),
    max_num_batched_tokens: str | None = typer.Option(
        None, "--max-num-batched-tokens", metavar="N", help="Default: vLLM's for this GPU and version."
    ),
    max_num_seqs: str | None = typer.Option(
        None, "--max-num-seqs", metavar="N", help="Default: vLLM's for this GPU and version."
    ),
    weights_gib: str | None = typer.Option(
        None,
        "--weights-gib",
        metavar="GIB",
        help="Weights per GPU if known (e.g. from 'Loading model weights took').",
    ),
    quantization: str | None = typer.Option(
        None, "--quantization", help="fp8, awq, gptq or mxfp4: size the weights in that checkpoint format."
    ),
    gpu_free_gib: str | None = typer.Option(
        None,
        "--gpu-free-gib",
        metavar="GIB[,GIB...]",
        help="Free memory of each GPU before vLLM starts (one figure or one per GPU): vLLM's least-free rule.",
    ),
    concurrency: str | None = typer.Option(
        None, "--concurrency", metavar="C", help="Concurrent requests to size for (with --context)."
    ),
    context: str | None = typer.Option(
        None, "--context", metavar="T", help="Tokens per request (prompt + output)."
    ),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    output: Path | None = typer.Option(
        None, "--output", "-o", help="Write the answer here instead of stdout."
    ),
) -> None:
    """KV-cache capacity: bytes/token, blocks, tokens, concurrency, and whether --max-model-len fits.
    Exits 1 when vLLM would refuse to start with it."""
    from observe.capacity.answer import answer

    a = answer(
        model,
        gpu=gpu,
        gpu_memory_gib=_cap_num("--gpu-memory-gib", gpu_memory_gib, integer=False),
        kv_cache_dtype=kv_cache_dtype,
        fmt=fmt,
        tp=_cap_num("--tp", tp),
        pp=_cap_num("--pp", pp),
        gpu_memory_utilization=_cap_num("--gpu-memory-utilization", utilization, integer=False),
        max_model_len=_cap_num("--max-model-len", max_model_len),
        block_size=_cap_num("--block-size", block_size),
        max_num_batched_tokens=_cap_num("--max-num-batched-tokens", max_num_batched_tokens),
        max_num_seqs=_cap_num("--max-num-seqs", max_num_seqs),
        vllm_version=vllm_version,
        context=_cap_num("--context", context),
        concurrency=_cap_num("--concurrency", concurrency),
        weights_gib=_cap_num("--weights-gib", weights_gib, integer=False),
        quantization=quantization,
        gpu_free_gib=[_cap_num("--gpu-free-gib", x, integer=False) for x in gpu_free_gib.split(",")]
        if gpu_free_gib
        else None,
    )
    _emit(a.text, output)
    if a.refuses:
        raise typer.Exit(errors.EXIT_FOUND)


# ---------------------------------------------------------------- sidecar
def _pod_selectors(texts: list[str], container: str) -> list[podlogs.Selector]:
    try:
        return [podlogs.parse_selector(t, container) for t in texts]
    except ValueError as e:
        raise ConfigError(f"--pods: {e}") from None


@app.command()
@user_errors
def sidecar(
    log: list[str] = typer.Option([], "--log", help="Glob of vLLM log files to follow (repeatable)."),
    pods: list[str] = typer.Option(
        [],
        "--pods",
        help="NAMESPACE/POD shell patterns: follow those pods' CRI logs under --pods-root (a DaemonSet).",
    ),
    pods_root: str = typer.Option("/var/log/pods", "--pods-root", help="The kubelet's pod log folder."),
    container: str = typer.Option("vllm", "--container", help="The container of --pods whose log is read."),
    vllm_url: str | None = typer.Option(
        None, "--vllm-url", help="Base URL of vLLM (its /metrics is scraped)."
    ),
    listen: str = typer.Option(
        "127.0.0.1:9400", "--listen", help="HOST:PORT for the sidecar's /metrics, /healthz, /api/diagnosis."
    ),
    scrape_interval: str = typer.Option(
        "15s", "--scrape-interval", help="How often to scrape vLLM's /metrics (e.g. 5s)."
    ),
    window: str = typer.Option("1h", "--window", help="How far back the analysis looks (e.g. 30m, 1h)."),
    analyze_interval: str = typer.Option(
        "30s", "--analyze-interval", help="How often to re-run detection and advice."
    ),
    from_start: bool = typer.Option(
        False, "--from-start", help="Read the logs' history instead of starting at their end."
    ),
    polling: bool = typer.Option(False, "--polling", help="Poll files instead of inotify/watchdog events."),
    name: str | None = typer.Option(None, "--name", help="Instance name in the diagnosis."),
    warn_every: str = typer.Option(
        "5m", "--warn-every", help="Repeat a lasting warning (vLLM unreachable, no log file) this often."
    ),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    api_diagnosis: str = typer.Option(
        "auto",
        "--api-diagnosis",
        help="Who may read /api/diagnosis: auto (loopback only, unless a token is set), public, off.",
    ),
    api_token_file: Path | None = typer.Option(
        None,
        "--api-token-file",
        help="File whose first line is the bearer token /api/diagnosis requires (else $OBSERVE_API_TOKEN).",
    ),
) -> None:
    """Run beside one vLLM: follow its logs, scrape /metrics, export findings and advice."""
    from observe.config import SidecarSettings, read_api_token
    from observe.sidecar import Sidecar

    settings = SidecarSettings.from_cli(
        logs=[*log, *podlogs.patterns(_pod_selectors(pods, container), pods_root)],
        vllm_url=vllm_url,
        listen=listen,
        scrape_interval=scrape_interval,
        window=window,
        analyze_interval=analyze_interval,
        from_start=from_start,
        use_watchdog=not polling,
        name=name,
        thresholds=_settings(config),
        warn_every=warn_every,
        api_diagnosis=api_diagnosis,
        api_token=read_api_token(api_token_file, os.environ),
    )
    try:
        car = Sidecar(settings, warn=lambda msg: typer.echo(f"observe sidecar: {msg}", err=True))
        car.stop_on_signals()  # before it serves: a signal that comes once /healthz answers must stop it cleanly
        car.start()
    except OSError as e:
        raise ObserveError(f"cannot listen on {listen}: {e.strerror or e}")
    typer.echo(f"observe sidecar: serving {car.listen_url}/metrics", err=True)
    if settings.api_warning:
        typer.echo(f"observe sidecar: {settings.api_warning}", err=True)
    car.wait()
    if car.stopped_by == signal.SIGINT:
        raise _err("interrupted", errors.EXIT_INTERRUPTED)


# ---------------------------------------------------------------- top
@app.command()
@user_errors
def top(
    urls: list[str] = typer.Argument(
        ..., metavar="URL...", help="Base URLs of vLLM servers (their /metrics)."
    ),
    sidecar_url: list[str] = typer.Option(
        [],
        "--sidecar",
        metavar="URL",
        help="A running sidecar per server, in the servers' order (its findings).",
    ),
    log: list[str] = typer.Option(
        [],
        "--log",
        metavar="GLOB",
        help="Log files of the (single) server: findings from them and its /metrics.",
    ),
    interval: str = typer.Option("2s", "--interval", help="How often to read the servers (e.g. 1s, 5s)."),
    once: bool = typer.Option(False, "--once", help="Read each server once, print the screen and exit."),
) -> None:
    """A live view of vLLM servers: KV usage, queue, throughput, preemptions, TTFT/ITL, findings (q quits)."""
    from observe import top as top_mod
    from observe.config import check_url, parse_duration

    for u in [*urls, *sidecar_url]:
        check_url(u, what="URL")
    if len(sidecar_url) > len(urls):
        raise ObserveError(
            f"{len(sidecar_url)} --sidecar for {len(urls)} server(s): give at most one per server"
        )
    if log and len(urls) != 1:
        raise ObserveError("--log goes with exactly one server URL")
    targets = [
        top_mod.Target(
            url=u,
            sidecar_url=sidecar_url[i] if i < len(sidecar_url) else None,
            logs=tuple(log) if i == 0 else (),
        )
        for i, u in enumerate(urls)
    ]
    secs = parse_duration(interval, what="--interval")
    top_mod.run(targets, interval=secs, timeout=min(5.0, max(1.0, secs)), once=once)


# ---------------------------------------------------------------- generate
class AlertFormat(str, Enum):
    prometheus = "prometheus"
    prometheus_operator = "prometheus-operator"


@generate_app.command("dashboards")
@user_errors
def generate_dashboards(
    out: Path = typer.Option(Path("dashboards"), "--out", help="Folder for the dashboard JSON files."),
) -> None:
    """Write the Grafana dashboards (Overview, Tuning, KV cache, Instances, GPU, spec decode & KV transfer) as JSON."""
    from observe import dashboards

    for path in dashboards.write_dashboards(out):
        typer.echo(str(path))


@generate_app.command("alerts")
@user_errors
def generate_alerts(
    out: Path | None = typer.Option(
        None, "--out", help="Folder for the rule files (default: alerts; required with prometheus-operator)."
    ),
    fmt: AlertFormat = typer.Option(
        AlertFormat.prometheus,
        "--format",
        help="prometheus: rule files; prometheus-operator: a PrometheusRule manifest (not into alerts/).",
    ),
    max_num_seqs: int | None = typer.Option(
        None, "--max-num-seqs", help="The instance's --max-num-seqs (queue-backlog threshold)."
    ),
    kv_usage: float | None = typer.Option(
        None,
        "--kv-usage-threshold",
        help="KV-cache usage ratio (0-1) that counts as full (kv_full_pct / 100).",
    ),
    ttft_slo: float | None = typer.Option(
        None, "--ttft-slo", help="TTFT SLO threshold in seconds (a vLLM bucket bound, e.g. 1.0)."
    ),
    itl_slo: float | None = typer.Option(
        None, "--itl-slo", help="Inter-token latency SLO threshold in seconds (e.g. 0.1)."
    ),
    runbook_base: str | None = typer.Option(
        None,
        "--runbook-base",
        metavar="URL",
        help="Where docs/runbooks.md is published (each alert links to its section).",
    ),
    vllm_selector: str | None = typer.Option(
        None, "--vllm-selector", help='Label matchers of the vLLM targets, e.g. job=~".*/vllm".'
    ),
    rule_label: list[str] = typer.Option(
        [], "--rule-label", help="KEY=VALUE label on the PrometheusRule (repeatable), e.g. release=prom."
    ),
    namespace: str | None = typer.Option(None, "--namespace", help="Namespace of the PrometheusRule."),
    min_request_rate: float | None = typer.Option(
        None, "--min-request-rate", help="Traffic floor (requests/s) of the SLO and error alerts."
    ),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
) -> None:
    """Write the Prometheus recording and alerting rules (alerts/*.yml) from one settings object."""
    from observe import alerts

    labels = {}
    for item in rule_label:
        key, eq, value = item.partition("=")
        if not eq or not key.strip():
            raise ObserveError(f"--rule-label needs KEY=VALUE, not {item!r}")
        labels[key.strip()] = value.strip()

    if runbook_base is not None and not runbook_base.startswith(("http://", "https://")):
        raise ObserveError(f"--runbook-base must be an http(s) URL, not {runbook_base!r}")
    overrides = {
        k: v
        for k, v in {
            "max_num_seqs": max_num_seqs,
            "kv_full_pct": kv_usage * 100 if kv_usage is not None else None,
            "ttft_slo_seconds": ttft_slo,
            "itl_slo_seconds": itl_slo,
            "runbook_base": runbook_base,
            "vllm_selector": vllm_selector,
            "rule_labels": labels or None,
            "namespace": namespace,
            "min_request_rate": min_request_rate,
        }.items()
        if v is not None
    }
    base = _settings(config)
    if "kv_full_pct" in overrides and overrides["kv_full_pct"] < base.kv_high_pct:
        overrides["kv_high_pct"] = overrides["kv_full_pct"]
    settings = base.replace(**overrides)
    out = (
        _operator_out(out, alerts.RULES_FILE)
        if fmt is AlertFormat.prometheus_operator
        else out or Path("alerts")
    )
    for path in alerts.write_alerts(out, fmt.value, settings):
        typer.echo(str(path))


def _operator_out(out: Path | None, rules_file: str) -> Path:
    """Where --format prometheus-operator may write: never alerts/, whose every file compose's
    Prometheus loads as a rule file; `observe generate kubernetes` is the way to deploy/."""
    if out is None or (out / rules_file).exists() or out.resolve() == Path("alerts").resolve():
        raise ObserveError(
            "the PrometheusRule is a Kubernetes object: `observe generate kubernetes` writes it under "
            "deploy/kubernetes/base/generated/ (Settings from --config); to write only the manifest, "
            "give --out a folder that holds no Prometheus rule files (not alerts/)"
        )
    return out


@generate_app.command("kubernetes")
@user_errors
def generate_kubernetes(
    out: Path = typer.Option(
        Path("deploy/kubernetes/base/generated"), "--out", help="Folder for the generated manifests."
    ),
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
) -> None:
    """Write the PrometheusRule and the Grafana dashboard ConfigMaps of deploy/kubernetes/."""
    from observe import kubernetes

    for path in kubernetes.write_manifests(out, _settings(config)):
        typer.echo(str(path))


@config_app.command("show")
@user_errors
def config_show(
    config: Path | None = typer.Option(None, "--config", help=CONFIG_HELP),
    fmt: str = typer.Option("yaml", "--format", help="yaml (commented, what --config reads) or json."),
) -> None:
    """Print every threshold and SLO with its value and a note on when to change it."""
    import json

    from observe import settings as settings_mod

    s = _settings(config)
    if fmt == "json":
        typer.echo(json.dumps(settings_mod.describe(s), indent=2, default=list))
    elif fmt == "yaml":
        typer.echo(settings_mod.to_yaml(s), nl=False)
    else:
        raise ObserveError(f"--format must be yaml or json, not {fmt!r}")


# ---------------------------------------------------------------- run / recommend / compare
def _show_proposal(prop, *, title: str) -> None:
    """Findings, the checked flag diff and the new command line, on stdout."""
    typer.echo(f"observe: {title}")
    for f in prop.findings:
        typer.echo(f"  [{f.severity}] {f.id}: {f.evidence}")
    if not prop.accepted and not prop.rejected:
        typer.echo("  no flag changes recommended")
    from observe.report.text import current_text

    for r in prop.accepted:
        typer.echo(f"  {r.flag}: {current_text(r)} → {r.suggested}  # {r.reason}")
    for r, why in prop.rejected:
        typer.echo(f"  not suggested: {r.flag} {r.suggested} ({why})")
    if prop.accepted:
        typer.echo("new command:")
        typer.echo("  " + prop.after.command())


@app.command("run", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@user_errors
def run_cmd(
    ctx: typer.Context,
    run_dir: Path = typer.Option(
        Path("observe-runs"),
        "--run-dir",
        help="Each launch gets DIR/NNN/ (vllm.log, metrics-K.txt); DIR/history.jsonl records every step.",
    ),
    sidecar: bool = typer.Option(
        True, "--sidecar/--no-sidecar", help="Run the sidecar against the launched vLLM."
    ),
    listen: str = typer.Option("127.0.0.1:9400", "--listen", help="The sidecar's address."),
    snapshot_every: float = typer.Option(
        30.0, "--snapshot-every", help="Save /metrics every S seconds (0: never)."
    ),
    recommend_after: float = typer.Option(
        0.0,
        "--recommend-after",
        help="Diagnose each launch after S seconds and print the recommended flags (0: never; SIGUSR1 asks at any time).",
    ),
    apply_: bool = typer.Option(
        False, "--apply", help="Offer to restart vLLM with the recommended flags (asks first)."
    ),
    yes: bool = typer.Option(False, "--yes", "-y", help="With --apply: restart without asking."),
    max_changes: int = typer.Option(1, "--max-changes", help="Apply at most N changes in this run."),
    quiet: bool = typer.Option(
        False, "--quiet", help="Do not echo vLLM's output (it still goes to the log)."
    ),
    startup_timeout: float = typer.Option(900.0, "--startup-timeout", help="Seconds to wait for /health."),
    log_max_bytes: int = typer.Option(10 * 2**20, "--log-max-bytes", help="Rotate vllm.log at this size."),
    log_backups: int = typer.Option(5, "--log-backups", help="Rotated parts to keep."),
) -> None:
    """Launch vLLM (`observe run [OPTIONS] -- vllm serve MODEL [FLAGS]`), log it, watch it, advise, apply on request."""
    import signal as _signal
    import threading

    from observe import manage

    argv = list(ctx.args)
    if argv and argv[0] == "--":
        argv = argv[1:]
    spec = manage.parse_command(argv)
    flags = manage.installed_flags(spec.python)
    if flags is not None:
        spec = manage.parse_command(argv, flags=flags)
        flags.check_argv(spec.argv[len(spec.program) :])

    def sidecar_factory(sp, log_path):
        from observe.config import SidecarSettings
        from observe.sidecar import Sidecar

        return Sidecar(
            SidecarSettings.from_cli(logs=[str(log_path)], vllm_url=sp.url, listen=listen, from_start=True)
        )

    launcher = manage.Launcher(
        spec,
        run_dir,
        echo=None if quiet else sys.stdout,
        log_max_bytes=log_max_bytes,
        log_backups=log_backups,
        sidecar_factory=sidecar_factory if sidecar else None,
    )
    stop, trigger = threading.Event(), threading.Event()
    _signal.signal(_signal.SIGTERM, lambda *_: stop.set())
    _signal.signal(_signal.SIGUSR1, lambda *_: trigger.set())

    def decide(prop) -> bool:
        _show_proposal(prop, title=f"diagnosis of {prop.folder}")
        if not apply_ or not prop.accepted:
            return False
        if yes:
            return True
        return typer.confirm("Restart vLLM with the new command?", default=False)

    try:
        launcher.start(timeout=startup_timeout)
        typer.echo(f"observe: vLLM ready at {spec.url}; log {launcher.log_path}", err=True)
        if launcher.sidecar_error:
            typer.echo(f"observe: {launcher.sidecar_error}", err=True)
        manage.supervise(
            launcher,
            stop=stop,
            notify=lambda m: typer.echo(f"observe: {m}", err=True),
            decide=decide,
            flags=flags,
            snapshot_every=snapshot_every,
            recommend_after=recommend_after,
            max_changes=max_changes,
            trigger=trigger,
        )
    except KeyboardInterrupt:
        pass
    finally:
        launcher.stop()


@app.command("tune", context_settings={"allow_extra_args": True, "ignore_unknown_options": True})
@user_errors
def tune_cmd(
    ctx: typer.Context,
    out: Path = typer.Option(
        Path("observe-tune"), "--out", help="DIR/history.jsonl, DIR/report.*, DIR/launches/NNN/."
    ),
    objective: str = typer.Option(
        "throughput",
        "--objective",
        help="throughput (output tokens/s) or goodput (requests/s meeting the SLOs of --config).",
    ),
    trials: int = typer.Option(6, "--trials", help="Launches at most, the starting one included."),
    time_budget: float = typer.Option(1800.0, "--time-budget", help="Start no trial after S seconds."),
    repeats: int = typer.Option(
        2, "--repeats", help="Benchmark runs per configuration (at least 2: the spread)."
    ),
    dataset: str = typer.Option("random", "--dataset", help="vllm bench serve --dataset-name."),
    num_prompts: int = typer.Option(60, "--num-prompts"),
    input_len: int = typer.Option(128, "--input-len", help="--random-input-len"),
    output_len: int = typer.Option(64, "--output-len", help="--random-output-len"),
    max_concurrency: int = typer.Option(16, "--max-concurrency", help="0: no limit (use --request-rate)."),
    request_rate: str = typer.Option("inf", "--request-rate"),
    seed: int = typer.Option(0, "--seed"),
    warmups: int = typer.Option(
        8, "--warmups", help="Requests sent before each measured run (the client's --num-warmups)."
    ),
    bench_arg: list[str] = typer.Option(
        [], "--bench-arg", help="One more vllm bench serve word (repeatable)."
    ),
    config: Path | None = typer.Option(None, "--config", help="Settings (SLOs, tune_* fields)."),
    quiet: bool = typer.Option(
        True, "--quiet/--echo", help="Echo vLLM's output (it always goes to the log)."
    ),
    fmt: str = typer.Option("text", "--format", help="text or json."),
) -> None:
    """Tune a vLLM's flags by diagnosis (`observe tune [OPTIONS] -- vllm serve MODEL [FLAGS]`)."""
    import json

    from observe import tune

    argv = list(ctx.args)
    argv = argv[1:] if argv and argv[0] == "--" else argv
    workload = tune.Workload(
        dataset=dataset, num_prompts=num_prompts, input_len=input_len, output_len=output_len,
        max_concurrency=max_concurrency or None, request_rate=request_rate, seed=seed, warmups=warmups,
        extra=tuple(bench_arg),
    )  # fmt: skip
    budget = tune.Budget(trials=trials, seconds=time_budget, repeats=repeats)
    _, doc = tune.tune(
        argv, out, workload=workload, settings=_settings(config), objective=objective, budget=budget,
        notify=lambda m: typer.echo(f"observe: {m}", err=True), echo=None if quiet else sys.stdout,
    )  # fmt: skip
    typer.echo(
        json.dumps(doc, indent=2, default=str) if fmt == "json" else tune.report.to_text(doc), nl=False
    )


@app.command()
@user_errors
def recommend(
    vllm_url: str = typer.Option(
        ..., "--vllm-url", help="Base URL of a running vLLM (http://127.0.0.1:8000)."
    ),
    log: list[str] = typer.Option([], "--log", help="Glob(s) of that vLLM's log files."),
    interval: float = typer.Option(
        10.0, "--interval", help="Seconds between the two /metrics reads (rates need two)."
    ),
    vllm_python: str | None = typer.Option(
        None, "--vllm-python", help="Interpreter of the installed vLLM, to validate the flags against it."
    ),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format", help="text or json."),
) -> None:
    """Recommend flag changes for a vLLM that observe did not launch: the diff and the new command."""
    import glob as _glob
    import json as _json
    import tempfile
    import time as _time

    from observe import manage, pipeline, scrape

    logs = sorted({Path(p) for g in log for p in _glob.glob(g)})
    if log and not logs:
        raise ObserveError(f"no log file matches {' '.join(log)}")
    with tempfile.TemporaryDirectory(prefix="observe-recommend-") as tmp:
        snaps = []
        for k in (1, 2):
            if k == 2:
                _time.sleep(max(0.0, interval))
            try:
                snaps.append(manage.save_metrics(scrape.base_url(vllm_url), Path(tmp) / f"metrics-{k}.txt"))
            except (OSError, ValueError) as e:  # URLError, refused, timeout, bad URL
                reason = getattr(e, "reason", None) or getattr(e, "strerror", None) or e
                raise TargetError(f"cannot read {scrape.metrics_url(vllm_url)}: {reason}") from None
        diag = pipeline.diagnose_paths(logs or [Path(tmp)], snaps if logs else [])
    from observe import advise

    inst = max(diag.instances, key=lambda i: sum(s.get("parsed_lines") or 0 for s in i.sources))
    flags = manage.installed_flags(vllm_python) if vllm_python else manage.installed_flags()
    ok, bad = manage.checked_recommendations(None, inst.recommendations, flags)
    command = advise.command_line(inst.config, ok) if ok and inst.config.flags else None
    if fmt == TextOrJson.json:
        _emit(
            _json.dumps(
                {
                    "schema": "observe.recommend/v1",
                    "vllm_url": vllm_url,
                    "findings": [f.id for f in inst.findings],
                    "recommendations": [
                        {"flag": r.flag, "current": r.current, "suggested": r.suggested, "reason": r.reason}
                        for r in ok
                    ],
                    "rejected": [{"flag": r.flag, "suggested": r.suggested, "why": w} for r, w in bad],
                    "validated_against": flags.version if flags else None,
                    "command": command,
                },
                indent=2,
                default=str,
            ),
            None,
        )
        return
    for f in inst.findings:
        typer.echo(f"[{f.severity}] {f.id}: {f.evidence}")
    if not ok:
        typer.echo("no flag changes recommended")
    from observe.report.text import current_text

    for r in ok:
        typer.echo(f"{r.flag}: {current_text(r)} → {r.suggested}  # {r.reason}")
    for r, why in bad:
        typer.echo(f"not suggested: {r.flag} {r.suggested} ({why})")
    if command:
        typer.echo("new command:\n  " + command)
    if flags is None:
        typer.echo("(vLLM is not importable here: flags not validated; use --vllm-python)", err=True)


@app.command()
@user_errors
def compare(
    before: Path = typer.Argument(
        ...,
        metavar="BEFORE",
        help="Before the change: a run folder (log + snapshots), or a saved diagnosis "
        "JSON (`diagnose --format json`, or the sidecar's /api/diagnosis: one window of its history).",
    ),
    after: Path = typer.Argument(
        ..., metavar="AFTER", help="After the change: a folder or a diagnosis JSON, as BEFORE."
    ),
    fmt: TextOrJson = typer.Option(TextOrJson.text, "--format", help="text or json."),
) -> None:
    """Before/after: throughput, TTFT/ITL quantiles, preemptions, KV usage, and whether the change helped."""
    import json as _json

    from observe import manage

    res = manage.compare_runs(before, after)
    if fmt == TextOrJson.json:
        _emit(_json.dumps({"schema": "observe.compare/v1", **res}, indent=2, default=str), None)
        return

    from observe.report.compare import compare_text

    _emit(compare_text(res), None)


def _with_envvars(cmd: Any, path: tuple[str, ...]) -> None:
    """Give every option of every command its OBSERVE_<COMMAND>_<OPTION> variable (shown in --help),
    a metavar named after it, and a usage line without typer's braces."""
    _no_bool_placeholder(cmd)
    if hasattr(cmd, "commands"):
        for name, sub in cmd.commands.items():
            _with_envvars(sub, (*path, name))
        return
    for p in cmd.params:
        if isinstance(p, typer.core.TyperArgument):  # usage line: PATH..., not typer's {PATH...}
            p._usage_display_name = functools.partial(_usage_name, p)  # type: ignore[method-assign]
        is_opt = isinstance(p, typer.core.TyperOption)
        if is_opt and p.metavar is None and not p.is_flag and "|" not in _shown_type(p):
            p.metavar = p.name.upper().rstrip("_")  # --log LOG, not --log <list[str]>
        if is_opt and not p.is_eager and p.name and not p.hidden:
            long = max(p.opts, key=len).lstrip("-")  # as the user types it: --tp → tensor-parallel-size
            p.envvar = "_".join([ENVVAR_PREFIX, *path, long]).upper().replace("-", "_")
            p.show_envvar = True


def _no_bool_placeholder(cmd: Any) -> None:
    """A switch takes no value: no `<bool>` placeholder beside it in --help (-h/--help included)."""
    make = cmd.get_help_option

    def get_help_option(ctx: Any) -> Any:
        opt = make(ctx)
        if opt is not None:
            opt.metavar = ""
        return opt

    cmd.get_help_option = get_help_option
    for p in cmd.params:  # the group's own switches (--version, --install-completion) as well
        if isinstance(p, typer.core.TyperOption) and p.is_flag:
            p.metavar = ""


def _shown_type(p: Any) -> str:
    """What typer would show as the value placeholder (`<text|json>` for a choice)."""
    try:
        return str(p.display_type(None) or "")
    except Exception:
        return ""


def _usage_name(p: Any) -> str:
    name = p.metavar or p.name.upper()
    if p.nargs != 1 and not name.endswith("..."):
        name += "..."
    return name if p.required else f"[{name}]"


def command() -> Any:
    """The click command behind `observe`, with the environment variables wired."""
    cmd = typer.main.get_command(app)
    _with_envvars(cmd, ())
    return cmd


def main() -> None:
    command()(prog_name="observe")


if __name__ == "__main__":
    main()
