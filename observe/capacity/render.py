"""A capacity answer as the short plain text the CLI prints."""

from __future__ import annotations

from observe.capacity.sizing import CapacityResult
from observe.capacity.tables import GB, GIB


def render_text(r: CapacityResult, alt: CapacityResult | None = None) -> str:
    """A short plain-text answer (the CLI prints it). `alt` = the same question with the other KV dtype."""
    gib = lambda x: "n/a" if x is None else f"{x:,.2f} GiB"
    par = f"TP={r.tensor_parallel_size}" + (
        f", PP={r.pipeline_parallel_size}" if r.pipeline_parallel_size > 1 else ""
    )
    lines = [
        f"{r.model} on {r.gpu_memory_gib:g} GiB GPUs, {par}, --gpu-memory-utilization {r.gpu_memory_utilization:g}, "
        f"--kv-cache-dtype {r.kv_cache_dtype}, --block-size {r.block_size}, engine {r.engine}"
        + (f" (vLLM {r.vllm_version})" if r.vllm_version else ""),
        f"  KV bytes per token per GPU: {r.bytes_per_token:,} ({r.bytes_per_token_total:,} across all GPUs)",
        f"  per GPU: weights {gib(r.weights_gib)}, profile peak {gib(r.profile_gib)} (the larger of forward "
        f"{gib(r.activation_gib)} and sampler {gib(r.sampler_gib)}), non-torch {gib(r.non_torch_gib)}, "
        f"CUDA graphs {gib(r.cudagraph_gib)}",
        f"  KV cache ({r.basis}): {r.kv_memory_gib:,.2f} GiB per GPU = {r.num_blocks:,} blocks = {r.kv_cache_tokens:,} tokens",
        f"  max concurrency at {(r.context or r.max_model_len):,} tokens: {r.max_concurrency:,.2f}x",
        f"  --max-model-len {r.max_model_len:,}: "
        + (
            "fits"
            if r.fits
            else f"does NOT fit; largest that fits: {r.max_model_len_that_fits:,}"
            if r.max_model_len_that_fits
            else "does NOT fit: vLLM does not start (see the notes)"
        )
        + ("" if r.basis == "measured" else " (estimated: weights and profile memory not measured)"),
    ]
    if r.required_kv_gib is not None and r.required_kv_gib_total is not None:
        lines.append(
            f"  {r.concurrency:,} requests x {r.context:,} tokens need {gib(r.required_kv_gib)} of KV per GPU "
            f"({gib(r.required_kv_gib_total)} = {r.required_kv_gib_total * GIB / GB:,.2f} GB total at {par}): "
            + ("fits" if r.concurrency_fits else "does NOT fit in the KV cache")
        )
        if alt is not None and alt.required_kv_gib is not None and alt.required_kv_gib_total is not None:
            lines.append(
                f"  with --kv-cache-dtype {alt.kv_cache_dtype}: {gib(alt.required_kv_gib)} per GPU "
                f"({gib(alt.required_kv_gib_total)} = {alt.required_kv_gib_total * GIB / GB:,.2f} GB total); "
                f"KV cache {alt.kv_cache_tokens:,} tokens: "
                + ("fits" if alt.concurrency_fits else "does NOT fit")
            )
    lines += [f"  note: {n}" for n in r.notes]
    return "\n".join(lines) + "\n"
