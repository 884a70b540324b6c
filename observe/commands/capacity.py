"""`observe capacity`: KV-cache sizing of a model on a GPU (observe.capacity), as text or JSON."""

from __future__ import annotations

from pathlib import Path

from observe import errors, report
from observe.capacity.answer import from_options
from observe.commands import emit
from observe.modelfiles import model_argument


def capacity(
    *,
    model: str | None,
    gpu: str | None,
    gpu_memory_gib: str | None,
    vllm_version: str | None,
    tp: str,
    pp: str,
    gpu_memory_utilization: str | None,
    max_model_len: str | None,
    kv_cache_dtype: str,
    block_size: str | None,
    max_num_batched_tokens: str | None,
    max_num_seqs: str | None,
    weights_gib: str | None,
    quantization: str | None,
    gpu_free_gib: str | None,
    concurrency: str | None,
    context: str | None,
    fmt: str,
    output: Path | None,
) -> int:
    """The options as typed (numbers are parsed by capacity.answer) → the answer printed; 1 when
    vLLM would refuse to start with them."""
    a = from_options(
        model_argument(model),
        gpu=gpu,
        gpu_memory_gib=gpu_memory_gib,
        vllm_version=vllm_version,
        tp=tp,
        pp=pp,
        gpu_memory_utilization=gpu_memory_utilization,
        max_model_len=max_model_len,
        kv_cache_dtype=kv_cache_dtype,
        block_size=block_size,
        max_num_batched_tokens=max_num_batched_tokens,
        max_num_seqs=max_num_seqs,
        weights_gib=weights_gib,
        quantization=quantization,
        gpu_free_gib=gpu_free_gib,
        concurrency=concurrency,
        context=context,
        fmt=fmt,
    )
    emit(report.capacity_json(a.result, a.alternative) if fmt == "json" else a.text, output)
    return errors.EXIT_FOUND if a.refuses else 0
