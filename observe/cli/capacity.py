"""`observe capacity`: KV-cache sizing of a model on a GPU (observe.capacity), as text or JSON."""

from __future__ import annotations

from pathlib import Path

import typer

from observe import errors
from observe.cli.common import emit, user_errors

# fmt: off
N, GIB = "N", "GIB"


@user_errors
def capacity(
    model: str | None = typer.Option(None, "--model", help="Model name (built-in table) or path of a Hugging Face config.json (or its folder)."),
    gpu: str | None = typer.Option(None, "--gpu", help="GPU name from the built-in table (H100, A100-80GB, L4, RTX-4090, ...)."),
    gpu_memory_gib: str | None = typer.Option(None, "--gpu-memory-gib", metavar=GIB, help="Total GPU memory as torch reports it (overrides --gpu's figure)."),
    vllm_version: str | None = typer.Option(None, "--vllm-version", help="vLLM version; decides V0/V1 accounting and defaults (default: newest)."),
    tp: str = typer.Option("1", "--tp", "--tensor-parallel-size", metavar=N, help="Tensor parallel size."),
    pp: str = typer.Option("1", "--pp", "--pipeline-parallel-size", metavar=N, help="Pipeline parallel size."),
    gpu_memory_utilization: str | None = typer.Option(None, "--gpu-memory-utilization", metavar="U", help="Fraction of total GPU memory vLLM may use. Default: vLLM's for the version."),
    max_model_len: str | None = typer.Option(None, "--max-model-len", metavar="L", help="Default: the model's max_position_embeddings."),
    kv_cache_dtype: str = typer.Option("auto", "--kv-cache-dtype", help="auto (model dtype) or fp8 (fp8_e4m3, fp8_e5m2)."),
    block_size: str | None = typer.Option(None, "--block-size", metavar="B", help="KV-cache block size in tokens. Default: vLLM's for the version."),
    max_num_batched_tokens: str | None = typer.Option(None, "--max-num-batched-tokens", metavar=N, help="Default: vLLM's for this GPU and version."),
    max_num_seqs: str | None = typer.Option(None, "--max-num-seqs", metavar=N, help="Default: vLLM's for this GPU and version."),
    weights_gib: str | None = typer.Option(None, "--weights-gib", metavar=GIB, help="Weights per GPU if known (e.g. from 'Loading model weights took')."),
    quantization: str | None = typer.Option(None, "--quantization", help="fp8, awq, gptq or mxfp4: size the weights in that checkpoint format."),
    gpu_free_gib: str | None = typer.Option(None, "--gpu-free-gib", metavar="GIB[,GIB...]", help="Free memory of each GPU before vLLM starts (one figure or one per GPU): vLLM's least-free rule."),
    concurrency: str | None = typer.Option(None, "--concurrency", metavar="C", help="Concurrent requests to size for (with --context)."),
    context: str | None = typer.Option(None, "--context", metavar="T", help="Tokens per request (prompt + output)."),
    fmt: str = typer.Option("text", "--format", help="text or json."),
    output: Path | None = typer.Option(None, "--output", "-o", help="Write the answer here instead of stdout."),
) -> None:
    """KV-cache capacity: bytes/token, blocks, tokens, concurrency, and whether --max-model-len fits.
    Exits 1 when vLLM would refuse to start with it."""
    opts = dict(locals())  # the options as typed: numbers are parsed below the CLI
    from observe import report
    from observe.capacity.answer import from_options
    from observe.modelfiles import model_argument

    a = from_options(**{k: v for k, v in opts.items() if k != "output"} | {"model": model_argument(model)})
    emit(report.capacity_json(a.result, a.alternative) if fmt == "json" else a.text, output)
    if a.refuses:
        raise typer.Exit(errors.EXIT_FOUND)
# fmt: on
