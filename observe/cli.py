"""The `observe` command line. typer lives here and nowhere else; nothing below this module prints.

Each command is a thin shell: parse options, call one function of the core or an edge module,
print or write what it returns. ObserveError becomes one line on stderr and a non-zero exit.
"""

from __future__ import annotations

import functools
import sys
from enum import Enum
from pathlib import Path
from typing import Callable, List, Optional

import typer

from observe.errors import ObserveError

app = typer.Typer(
    name="observe",
    help="Observability stack and tuning advisor for vLLM servers.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
generate_app = typer.Typer(help="Write dashboards/*.json or alerts/*.yml from the generators.", no_args_is_help=True)
app.add_typer(generate_app, name="generate")


def _err(msg: str, code: int = 2) -> "typer.Exit":
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
            raise _err("interrupted", 130)
        except BrokenPipeError:
            raise typer.Exit(0)

    return wrapper


def _emit(text: str, output: Optional[Path]) -> None:
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


class FailOn(str, Enum):
    info = "info"
    warning = "warning"
    critical = "critical"


# ---------------------------------------------------------------- diagnose (issue 2)
@app.command()
@user_errors
def diagnose(
    paths: List[Path] = typer.Argument(..., help="Log files (plain or .gz) or folders of vLLM logs."),
    metrics: List[Path] = typer.Option([], "--metrics", help="Saved /metrics snapshots (text exposition)."),
    fmt: Fmt = typer.Option(Fmt.text, "--format", help="Report format."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the report here instead of stdout."),
    fail_on: Optional[FailOn] = typer.Option(None, "--fail-on", help="Exit 1 when a finding of this severity or worse is found."),
    progress: bool = typer.Option(True, "--progress/--no-progress", help="Progress bar on stderr for large inputs."),
) -> None:
    """Read vLLM logs (any version), say what is wrong and which flags to change."""
    from observe import pipeline, report

    diag = pipeline.diagnose_paths(paths, metrics, progress=_progress_cb() if progress else None)
    if fmt == Fmt.text and output is None:
        report.print_rich(diag)
    else:
        _emit(report.render(diag, fmt.value), output)
    if fail_on is not None and report.worst_at_least(diag, fail_on.value):
        raise typer.Exit(1)


def _progress_cb():
    """A rich progress bar on stderr, shown only when stderr is a terminal."""
    if not sys.stderr.isatty():
        return None
    from rich.progress import BarColumn, DownloadColumn, Progress, TimeRemainingColumn

    state: dict = {}

    def cb(name: str, done: int, total: int) -> None:
        if "p" not in state:
            p = Progress("[progress.description]{task.description}", BarColumn(), DownloadColumn(),
                         TimeRemainingColumn(), transient=True, console=_stderr_console())
            p.start()
            state["p"] = p
        p = state["p"]
        tid = state.get(name)
        if tid is None:
            tid = state[name] = p.add_task(Path(name).name, total=total or None)
        p.update(tid, completed=done)
        if total and done >= total:
            p.stop() if all(t.finished for t in p.tasks) else None

    return cb


def _stderr_console():
    from rich.console import Console

    return Console(stderr=True)


# ---------------------------------------------------------------- capacity (issue 3)
def _cap_num(flag: str, text: Optional[str], integer: bool = True):
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
    model: Optional[str] = typer.Option(None, "--model", help="Model name (built-in table) or path of a Hugging Face config.json (or its folder)."),
    gpu: Optional[str] = typer.Option(None, "--gpu", help="GPU name from the built-in table (H100, A100-80GB, L4, RTX-4090, ...)."),
    gpu_memory_gib: Optional[str] = typer.Option(None, "--gpu-memory-gib", metavar="GIB", help="Total GPU memory as torch reports it (overrides --gpu's figure)."),
    vllm_version: Optional[str] = typer.Option(None, "--vllm-version", help="vLLM version; decides V0/V1 accounting and defaults (default: newest)."),
    tp: str = typer.Option("1", "--tp", "--tensor-parallel-size", metavar="N", help="Tensor parallel size."),
    pp: str = typer.Option("1", "--pp", "--pipeline-parallel-size", metavar="N", help="Pipeline parallel size."),
    utilization: str = typer.Option("0.9", "--gpu-memory-utilization", metavar="U", help="Fraction of total GPU memory vLLM may use."),
    max_model_len: Optional[str] = typer.Option(None, "--max-model-len", metavar="L", help="Default: the model's max_position_embeddings."),
    kv_cache_dtype: str = typer.Option("auto", "--kv-cache-dtype", help="auto (model dtype) or fp8 (fp8_e4m3, fp8_e5m2)."),
    block_size: str = typer.Option("16", "--block-size", metavar="B", help="KV-cache block size in tokens."),
    max_num_batched_tokens: Optional[str] = typer.Option(None, "--max-num-batched-tokens", metavar="N", help="Default: vLLM's for this GPU and version."),
    max_num_seqs: Optional[str] = typer.Option(None, "--max-num-seqs", metavar="N", help="Default: vLLM's for this GPU and version."),
    weights_gib: Optional[str] = typer.Option(None, "--weights-gib", metavar="GIB", help="Weights per GPU if known (e.g. from 'Loading model weights took')."),
    quantization: Optional[str] = typer.Option(None, "--quantization", help="fp8: use the table's FP8 checkpoint size for the weights."),
    concurrency: Optional[str] = typer.Option(None, "--concurrency", metavar="C", help="Concurrent requests to size for (with --context)."),
    context: Optional[str] = typer.Option(None, "--context", metavar="T", help="Tokens per request (prompt + output)."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    output: Optional[Path] = typer.Option(None, "--output", "-o", help="Write the answer here instead of stdout."),
) -> None:
    """KV-cache capacity: bytes/token, blocks, tokens, concurrency, and whether --max-model-len fits."""
    import json as _json

    from observe import capacity as cap

    if fmt not in ("text", "json"):
        raise ObserveError(f"--format must be text or json, not {fmt!r}")
    if not model:
        raise ObserveError("give --model NAME (built-in) or --model path/to/config.json")
    if Path(model).is_dir():
        model = str(Path(model) / "config.json")
    spec = cap.model_spec(model)
    total = _cap_num("--gpu-memory-gib", gpu_memory_gib, integer=False)
    gpu_name = ""
    if gpu:
        g = cap.gpu_spec(gpu)
        gpu_name = g.name
        total = total if total is not None else g.total_gib
    if total is None:
        raise ObserveError("give --gpu NAME or --gpu-memory-gib N")
    kwargs = dict(
        gpu_memory_gib=total, tp=_cap_num("--tp", tp), pp=_cap_num("--pp", pp),
        gpu_memory_utilization=_cap_num("--gpu-memory-utilization", utilization, integer=False),
        max_model_len=_cap_num("--max-model-len", max_model_len), block_size=_cap_num("--block-size", block_size),
        max_num_batched_tokens=_cap_num("--max-num-batched-tokens", max_num_batched_tokens),
        max_num_seqs=_cap_num("--max-num-seqs", max_num_seqs), vllm_version=vllm_version,
        context=_cap_num("--context", context), concurrency=_cap_num("--concurrency", concurrency),
        weights_gib=_cap_num("--weights-gib", weights_gib, integer=False), quantization=quantization,
        gpu_name=gpu_name,
    )
    result = cap.compute(spec, kv_cache_dtype=kv_cache_dtype, **kwargs)
    alt = None
    if result.required_kv_gib is not None:  # the classic question: also answer for the other KV dtype
        other = "auto" if cap.kv_bytes_per_element(kv_cache_dtype, spec) == 1 else "fp8"
        alt = cap.compute(spec, kv_cache_dtype=other, **kwargs)
    if fmt == "json":
        d = {"schema": "observe.capacity/v1", **result.to_dict()}
        if alt is not None:
            d["alternative"] = {k: alt.to_dict()[k] for k in (
                "kv_cache_dtype", "bytes_per_token", "kv_cache_tokens", "num_blocks", "required_kv_gib",
                "required_kv_gib_total", "concurrency_fits", "max_concurrency")}
        _emit(_json.dumps(d, indent=2), output)
    else:
        _emit(cap.render_text(result, alt), output)


# ---------------------------------------------------------------- sidecar (issue 4)
# ---------------------------------------------------------------- generate (issue 5)
# ---------------------------------------------------------------- run / recommend / compare (issue 6)


def main() -> None:
    app()


if __name__ == "__main__":
    main()
