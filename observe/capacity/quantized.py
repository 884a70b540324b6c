"""Weights of quantised checkpoints: bits per weight with their scales, and which layers stay 16-bit.

How vLLM holds each format (read in the vLLM 0.10.1.1 wheel, `vllm/model_executor/layers/quantization/`):

- **MXFP4** (gpt-oss, `mxfp4.py`): only the fused MoE experts are quantised (`Mxfp4Config.get_quant_method`
  returns `Mxfp4MoEMethod` for `FusedMoE` and refuses every other linear layer that is not in the
  checkpoint's ignore list), so attention, router, embeddings and lm_head stay bf16. Each expert
  weight is 4-bit E2M1, two to a byte, plus one 8-bit E8M0 scale per 32 weights
  (`w13_weight_scale`: `hidden_size // mxfp4_block`, `mxfp4_block = 32`): 4.25 bits per weight. The
  Marlin path (GPUs without native FP4, as H100 printed in vllm#23278) pads the expert shapes
  (`hidden_size` up to a multiple of 256, `intermediate_size` up to 128), which is why gpt-oss-120b
  loads 65.97 GiB there and 64.38 GiB on the Triton path of vLLM 0.14.1 (vllm#33155).
- **AWQ / GPTQ** (`awq.py`, `gptq.py`): every linear layer of the transformer blocks is quantised;
  embeddings, lm_head and (for Mixtral) the router gate (`ReplicatedLinear(..., quant_config=None)`)
  stay 16-bit. Per group of `group_size` input weights they keep one fp16 scale and one packed
  `bits`-bit zero point: `bits + (16 + bits) / group_size` bits per weight (4.156 at 4 bits, g128).
  TheBloke's Mixtral-8x7B AWQ checkpoint is 24.65 GB; this gives 24.65 GB.
- **FP8**: 8 bits; the table's FP8 checkpoint sizes are used (`weights_gb_fp8`).

Pure: no I/O.
"""

from __future__ import annotations

import math

MXFP4_BLOCK = 32
MXFP4_BITS = 4 + 8 / MXFP4_BLOCK  # E2M1 weight + one E8M0 scale per 32 weights
INT_METHODS = ("awq", "gptq")
METHODS = ("fp8", "fp8_e4m3", "awq", "gptq", "mxfp4")


def int_bits(bits: int = 4, group_size: int = 128) -> float:
    """AWQ/GPTQ bits per weight: the weight, its group's fp16 scale and packed zero point."""
    if group_size <= 0:  # group_size -1: one scale and zero per output channel, negligible
        return float(bits)
    return bits + (16 + bits) / group_size


def bits_per_weight(method: str, bits: int = 4, group_size: int = 128) -> float:
    """Bits one quantised weight takes in GPU memory, scales included."""
    m = method.strip().lower()
    if m == "mxfp4":
        return MXFP4_BITS
    if m in INT_METHODS:
        return int_bits(bits, group_size)
    if m.startswith("fp8"):
        return 8.0
    raise ValueError(f"unknown quantization {method!r}")


def round_up(n: int, to: int) -> int:
    return int(math.ceil(n / to) * to)


def expert_params(layers: int, experts: int, hidden: int, inter: int, *, marlin: bool = False) -> int:
    """Weights of all routed experts (gate, up and down projections); `marlin` pads them the way
    vLLM's Marlin MXFP4 path does (hidden to 256, intermediate to 128)."""
    if marlin:
        hidden, inter = round_up(hidden, 256), round_up(inter, 128)
    return layers * experts * 3 * hidden * inter


def weights_gb(
    *, total_params: float, quantized_params: float, bits: float, extra_params: float = 0
) -> float:
    """GB (1e9 B) of a checkpoint whose `quantized_params` take `bits` each and the rest 2 bytes;
    `extra_params` are padding that only the quantised layers carry (Marlin MXFP4)."""
    rest = max(0.0, total_params - quantized_params)
    return ((quantized_params + extra_params) * bits / 8 + rest * 2) / 1e9


def table_weights_gb(
    method: str,
    *,
    params_b: float,
    embedding_params: int,
    layers: int,
    hidden: int | None,
    experts: int = 0,
    inter: int | None = None,
) -> float | None:
    """A built-in model's checkpoint in `method` (awq / gptq at 4 bits g128, or mxfp4), GB.

    AWQ/GPTQ quantise everything but the embeddings and lm_head; MXFP4 only the experts (so it
    needs the model's experts, hidden and intermediate sizes). None when the table lacks a fact."""
    total = params_b * 1e9
    m = method.strip().lower()
    if m in INT_METHODS:
        return weights_gb(total_params=total, quantized_params=total - embedding_params, bits=int_bits())
    if m == "mxfp4":
        if not (experts and hidden and inter):
            return None
        q = expert_params(layers, experts, hidden, inter)
        return weights_gb(total_params=total, quantized_params=q, bits=MXFP4_BITS)
    return None
