"""`observe capacity`: KV-cache sizing of a model on a GPU (observe.capacity), as text or JSON."""

from __future__ import annotations

from pathlib import Path

import typer

from observe import errors
from observe.cli.common import emit, number, user_errors

# fmt: off
N, GIB = "N", "GIB"
# the options that are numbers (parsed here, so that a bad one is one line), and those not whole
_NUMBERS = ("gpu_memory_gib", "tp", "pp", "gpu_memory_utilization", "max_model_len", "block_size",
            "max_num_batched_tokens", "max_num_seqs", "context", "concurrency", "weights_gib")
_FRACTIONS = ("gpu_memory_gib", "gpu_memory_utilization", "weights_gib")


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
    from observe import report
    from observe.capacity.answer import answer
    from observe.modelfiles import model_argument

    given = dict(locals())
    nums = {k: number("--" + k.replace("_", "-"), given[k], integer=k not in _FRACTIONS) for k in _NUMBERS}
    free = [number("--gpu-free-gib", x, integer=False) for x in gpu_free_gib.split(",")] if gpu_free_gib else None
    a = answer(model_argument(model), gpu=gpu, kv_cache_dtype=kv_cache_dtype, fmt=fmt, vllm_version=vllm_version, quantization=quantization, gpu_free_gib=free, **nums)
    emit(report.capacity_json(a.result, a.alternative) if fmt == "json" else a.text, output)
    if a.refuses:
        raise typer.Exit(errors.EXIT_FOUND)
# fmt: on
