"""`observe capacity`: KV-cache sizing of a model on a GPU (observe.capacity), as text or JSON."""

from __future__ import annotations

from pathlib import Path

import typer

from observe.cli.common import passes, user_errors

N, GIB = "N", "GIB"


@user_errors
@passes("observe.commands.capacity")
def capacity(
    model: str | None = typer.Option(None, "--model"),
    gpu: str | None = typer.Option(None, "--gpu"),
    gpu_memory_gib: str | None = typer.Option(None, "--gpu-memory-gib", metavar=GIB),
    vllm_version: str | None = typer.Option(None, "--vllm-version"),
    tp: str = typer.Option("1", "--tp", "--tensor-parallel-size", metavar=N),
    pp: str = typer.Option("1", "--pp", "--pipeline-parallel-size", metavar=N),
    gpu_memory_utilization: str | None = typer.Option(None, "--gpu-memory-utilization", metavar="U"),
    max_model_len: str | None = typer.Option(None, "--max-model-len", metavar="L"),
    kv_cache_dtype: str = typer.Option("auto", "--kv-cache-dtype"),
    block_size: str | None = typer.Option(None, "--block-size", metavar="B"),
    max_num_batched_tokens: str | None = typer.Option(None, "--max-num-batched-tokens", metavar=N),
    max_num_seqs: str | None = typer.Option(None, "--max-num-seqs", metavar=N),
    weights_gib: str | None = typer.Option(None, "--weights-gib", metavar=GIB),
    quantization: str | None = typer.Option(None, "--quantization"),
    gpu_free_gib: str | None = typer.Option(None, "--gpu-free-gib", metavar="GIB[,GIB...]"),
    concurrency: str | None = typer.Option(None, "--concurrency", metavar="C"),
    context: str | None = typer.Option(None, "--context", metavar="T"),
    fmt: str = typer.Option("text", "--format"),
    output: Path | None = typer.Option(None, "--output", "-o"),
) -> None:
    """KV-cache capacity: bytes/token, blocks, tokens, concurrency, and whether --max-model-len fits.
    Exits 1 when vLLM would refuse to start with it."""
