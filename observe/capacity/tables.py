"""Model architectures and GPUs: the built-in tables (package data) and Hugging Face config.json.

`model_spec()` answers with a ModelSpec for a table name (forgiving spelling) or a config.json
dict; `gpu_spec()` with a GpuSpec carrying the total memory torch reports. The accounting
(sizing.py) works on these facts. Pure but for the two tables shipped as package data
(observe/data/models.json, gpus.json): a config.json a user names is read at the edge
(observe.modelfiles), never here — a model name a log printed is never opened as a file.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from functools import lru_cache
from importlib import resources
from os import PathLike
from typing import Any

from observe.capacity import quantized
from observe.capacity.ropelimit import Rope, ropes_from_config
from observe.errors import ConfigError, UnknownConfig

GIB = 1024**3
GB = 1e9


@dataclass(frozen=True)
class ModelSpec:
    """The architecture facts that decide KV bytes per token, weights and activations."""

    name: str
    layers: int
    kv_heads: int
    head_dim: int
    heads: int | None = None
    hidden: int | None = None
    intermediate: int | None = None  # per expert for MoE models
    vocab: int | None = None
    max_pos: int | None = None
    attention: str = "gqa"  # "mha" | "gqa" | "mla"
    kv_lora_rank: int | None = None  # MLA latent
    qk_rope_head_dim: int | None = None
    sliding_window: int | None = None
    sliding_layers: int = 0  # layers that use the sliding window (0 = none)
    dtype_bytes: int = 2  # model dtype (vLLM runs fp32 checkpoints in 16 bit)
    weights_gb: float | None = None  # whole checkpoint as loaded, GB (1e9 B)
    weights_gb_fp8: float | None = None
    source: str = ""
    moe: bool = False  # mixture of experts
    experts: int = 0  # routed experts per MoE layer (0: dense or unknown)
    params_b: float | None = None  # parameters, billions (for quantised checkpoint sizes)
    embedding_params: int = 0  # embeddings + lm_head: stay 16-bit in AWQ/GPTQ/MXFP4 checkpoints
    quant: str = ""  # the checkpoint's own quantisation ("mxfp4" for gpt-oss), "" for 16-bit
    rope: tuple[Rope, ...] = ()  # config.json's rope_scaling (ropelimit.py derives the limit)
    original_max_pos: int | None = None  # config.json's top-level original_max_position_embeddings
    model_type: str = ""

    @property
    def is_mla(self) -> bool:
        return self.attention == "mla"

    @property
    def full_layers(self) -> int:
        return self.layers - self.sliding_layers


@dataclass(frozen=True)
class GpuSpec:
    """A GPU and the total memory torch reports for it (what vLLM multiplies by utilization)."""

    name: str
    total_gib: float
    source: str = ""
    exact: bool = True
    p2p: bool = True  # peer-to-peer between GPUs (GeForce cards: no; NCCL then uses host memory)


# ------------------------------------------------------------------------------ tables
@lru_cache(maxsize=1)
def _models_table() -> dict[str, dict[str, Any]]:
    text = resources.files("observe").joinpath("data/models.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


@lru_cache(maxsize=1)
def _gpus_table() -> dict[str, dict[str, Any]]:
    text = resources.files("observe").joinpath("data/gpus.json").read_text(encoding="utf-8")
    return {k: v for k, v in json.loads(text).items() if not k.startswith("_")}


def known_models() -> list[str]:
    return sorted(_models_table())


def known_gpus() -> list[str]:
    return sorted(_gpus_table())


def _norm(name: str) -> str:
    """'meta-llama/Meta-Llama-3-70B-Instruct' → 'llama-3-70b' (for forgiving look-ups)."""
    s = name.strip().lower().rsplit("/", 1)[-1].replace("_", "-").replace(" ", "-")
    s = re.sub(r"^meta-(?=llama)", "", s)
    for suffix in ("-instruct", "-chat", "-hf", "-it", "-base"):
        if s.endswith(suffix):
            s = s[: -len(suffix)]
    return s


def _spec_from_table(name: str, e: Mapping[str, Any]) -> ModelSpec:
    mla = e.get("attention") == "mla"
    sliding = int(e.get("sliding_layers") or 0) if e.get("sliding_window") else 0
    return ModelSpec(
        name=name,
        layers=int(e["layers"]),
        kv_heads=1 if mla else int(e["kv_heads"]),
        head_dim=int(e["head_dim"] or 0) if not mla else int(e["kv_lora_rank"]) + int(e["qk_rope_head_dim"]),
        heads=e.get("heads"),
        hidden=e.get("hidden"),
        intermediate=e.get("intermediate_size"),
        vocab=e.get("vocab"),
        max_pos=e.get("max_pos"),
        attention="mla" if mla else (e.get("attention") or "gqa").split("-")[0],
        kv_lora_rank=e.get("kv_lora_rank"),
        qk_rope_head_dim=e.get("qk_rope_head_dim"),
        sliding_window=e.get("sliding_window") if sliding else None,
        sliding_layers=sliding,
        weights_gb=(e["weights_gib_loaded"] * GIB / GB if e.get("weights_gib_loaded") else None)
        or (e.get("weights_gb_fp8") if e.get("served_weights") == "fp8" else None)
        or e.get("weights_gb_native_mxfp4")
        or e.get("weights_gb_bf16"),
        weights_gb_fp8=e.get("weights_gb_fp8"),
        source=e.get("source", ""),
        moe=bool(e.get("active_params_b")) and e.get("active_params_b") != e.get("params_b"),
        experts=int(e.get("experts") or 0),
        params_b=e.get("params_b"),
        embedding_params=int(
            (e.get("vocab") or 0) * (e.get("hidden") or 0) * (1 if e.get("tie_word_embeddings") else 2)
        ),
        quant="mxfp4" if e.get("weights_gb_native_mxfp4") else "",
    )


def model_spec(model: str | Mapping[str, Any] | ModelSpec) -> ModelSpec:
    """A built-in model by name (forgiving: 'llama-3-70b' works) or a HF config.json dict (its file is
    read at the edge: observe.modelfiles.model_argument)."""
    if isinstance(model, ModelSpec):
        return model
    if isinstance(model, Mapping):
        return spec_from_config(model)
    if isinstance(model, PathLike) or (isinstance(model, str) and model.strip().endswith(".json")):
        raise ConfigError(
            f"{str(model)!r} names a file: the capacity model reads no files (the CLI reads it)"
        )
    if not isinstance(model, str) or not model.strip():
        raise ConfigError("give a model name or the path of a Hugging Face config.json")
    table = _models_table()
    if model in table:
        return _spec_from_table(model, table[model])
    want = _norm(model)
    hits = [k for k in table if _norm(k) == want or k.lower() == model.strip().lower()]
    if len(hits) == 1:
        return _spec_from_table(hits[0], table[hits[0]])
    raise UnknownConfig(
        f"unknown model {model!r}; known: {', '.join(known_models())}; "
        "or pass the path of the model's Hugging Face config.json"
    )


def gpu_spec(name: str) -> GpuSpec:
    """A GPU from the built-in table ('H100', 'A100-80GB', 'RTX 4090', ...)."""
    table = _gpus_table()

    def key(s: str) -> str:
        s = s.strip().lower().replace("nvidia", "").replace("geforce", "").replace("_", "-")
        return re.sub(r"[\s-]+", "-", s).strip("-")

    want = key(name or "")
    if want == "a100":
        raise ConfigError("'A100' is ambiguous: say A100-40GB or A100-80GB (or give --gpu-memory-gib)")
    for k, e in table.items():
        if want == key(k) or want in (key(a) for a in e.get("aliases", ())):
            return GpuSpec(
                name=k,
                total_gib=float(e["total_gib"]),
                source=e.get("source", ""),
                exact=bool(e.get("exact", True)),
                p2p=bool(e.get("p2p", True)),
            )
    raise UnknownConfig(f"unknown GPU {name!r}; known: {', '.join(known_gpus())}; or give --gpu-memory-gib N")


def gpu_has_p2p(name: str) -> bool:
    """Whether a GPU named in free text has peer-to-peer (True when the table does not know it)."""
    try:
        return gpu_spec(name).p2p if name else True
    except ConfigError:
        return True


# ------------------------------------------------------------------------------ HF config.json
def _int(cfg: Mapping[str, Any], *keys: str) -> int | None:
    for k in keys:
        v = cfg.get(k)
        if isinstance(v, bool):
            continue
        if isinstance(v, (int, float)) and v > 0:
            return int(v)
    return None


def spec_from_config(config: Mapping[str, Any], name: str | None = None) -> ModelSpec:
    """ModelSpec from a Hugging Face config.json (dict), the way vLLM reads it."""
    cfg: dict[str, Any] = dict(config)
    if isinstance(cfg.get("text_config"), Mapping):  # multimodal wrappers (Gemma-3, Llama-4, ...)
        cfg = {**cfg, **cfg["text_config"]}
    label = name or cfg.get("_name_or_path") or (cfg.get("architectures") or ["config.json"])[0]
    layers = _int(cfg, "num_hidden_layers", "n_layer", "num_layers")
    heads = _int(cfg, "num_attention_heads", "n_head")
    hidden = _int(cfg, "hidden_size", "n_embd", "d_model")
    if not layers or not heads or not hidden:
        raise ConfigError(f"{label}: config.json lacks num_hidden_layers / num_attention_heads / hidden_size")
    mla = _int(cfg, "kv_lora_rank") is not None
    if cfg.get("multi_query"):
        kv_heads = 1
    else:
        kv_heads = _int(cfg, "num_key_value_heads", "num_kv_heads", "n_head_kv") or heads
    head_dim = _int(cfg, "head_dim") or hidden // heads
    window = _int(cfg, "sliding_window")
    sliding = 0
    if window and cfg.get("use_sliding_window") is not False:
        types = cfg.get("layer_types")
        if isinstance(types, list) and types:
            sliding = sum(1 for t in types if "sliding" in str(t))
        elif _int(cfg, "sliding_window_pattern"):
            p = _int(cfg, "sliding_window_pattern") or 1
            sliding = layers - layers // p
        elif str(cfg.get("model_type", "")).startswith("gemma2"):
            sliding = layers // 2
        else:
            sliding = layers
    if window and window >= (_int(cfg, "max_position_embeddings") or 0) > 0:
        sliding = 0  # a window as long as the context is no window
    dtype = str(cfg.get("torch_dtype") or cfg.get("dtype") or "bfloat16")
    spec = ModelSpec(
        name=str(label),
        layers=layers,
        kv_heads=1 if mla else kv_heads,
        head_dim=(int(cfg["kv_lora_rank"]) + int(cfg.get("qk_rope_head_dim") or 0)) if mla else head_dim,
        heads=heads,
        hidden=hidden,
        intermediate=_int(cfg, "moe_intermediate_size", "intermediate_size", "ffn_dim", "n_inner"),
        vocab=_int(cfg, "vocab_size"),
        max_pos=_int(cfg, "max_position_embeddings", "n_positions", "max_seq_len"),
        attention="mla" if mla else ("mha" if kv_heads == heads else "gqa"),
        kv_lora_rank=_int(cfg, "kv_lora_rank"),
        qk_rope_head_dim=_int(cfg, "qk_rope_head_dim"),
        sliding_window=window if sliding else None,
        sliding_layers=sliding,
        dtype_bytes=1 if "8" in dtype and "float" in dtype else 2,
        source="Hugging Face config.json" + (f" ({name})" if name else ""),
        moe=bool(_int(cfg, "num_local_experts", "num_experts", "n_routed_experts")),
        experts=_int(cfg, "num_local_experts", "num_experts", "n_routed_experts") or 0,
        quant=str((cfg.get("quantization_config") or {}).get("quant_method", "")).lower()
        if isinstance(cfg.get("quantization_config"), Mapping)
        else "",
        rope=ropes_from_config(cfg),
        original_max_pos=_int(cfg, "original_max_position_embeddings"),
        model_type=str(cfg.get("model_type") or ""),
    )
    return replace(spec, weights_gb=_estimate_weights_gb(cfg, spec))


def _estimate_weights_gb(cfg: Mapping[str, Any], s: ModelSpec) -> float:
    """Parameter count from the architecture × bytes per parameter of the checkpoint (GB)."""
    h, d, L = s.hidden or 0, s.head_dim, s.layers
    heads = s.heads or 1
    if s.is_mla:
        nope, rope = _int(cfg, "qk_nope_head_dim") or 128, _int(cfg, "qk_rope_head_dim") or 64
        vdim, lora, qlora = (
            _int(cfg, "v_head_dim") or 128,
            _int(cfg, "kv_lora_rank") or 512,
            _int(cfg, "q_lora_rank"),
        )
        q = (h * qlora + qlora * heads * (nope + rope)) if qlora else h * heads * (nope + rope)
        attn = q + h * (lora + rope) + lora * heads * (nope + vdim) + heads * vdim * h
    else:
        attn = h * heads * d + 2 * h * s.kv_heads * d + heads * d * h
    experts = _int(cfg, "num_local_experts", "num_experts", "n_routed_experts")
    dense_i = _int(cfg, "intermediate_size") or 4 * h
    routed = 0
    if experts:
        moe_i = _int(cfg, "moe_intermediate_size") or dense_i
        shared = (_int(cfg, "n_shared_experts") or 0) * 3 * h * moe_i + (
            3 * h * (_int(cfg, "shared_expert_intermediate_size") or 0)
        )
        dense_layers = min(L, _int(cfg, "first_k_dense_replace") or 0)
        routed = (L - dense_layers) * experts * 3 * h * moe_i
        mlp_total = dense_layers * 3 * h * dense_i + routed + (L - dense_layers) * (shared + h * experts)
    else:
        mlp_total = L * 3 * h * dense_i
    emb = (s.vocab or 0) * h * (1 if cfg.get("tie_word_embeddings") else 2)
    body = L * attn + mlp_total
    quant = cfg.get("quantization_config")
    qc: Mapping[str, Any] = quant if isinstance(quant, Mapping) else {}
    method = str(qc.get("quant_method", "")).lower()
    bits = re.findall(r'"num_bits":\s*(\d+)', json.dumps(qc))
    if method == "mxfp4":  # only the routed experts; attention, router, embeddings stay bf16
        gb = quantized.weights_gb(total_params=body + emb, quantized_params=routed, bits=quantized.MXFP4_BITS)
        return round(gb, 6)
    if "fp8" in method:
        per = 1.0
    elif bits:
        per = min(int(b) for b in bits) / 8 * (1.06 if min(int(b) for b in bits) < 8 else 1.0)
    elif wbits := qc.get("bits") or qc.get("w_bit"):
        group = qc.get("group_size") or qc.get("q_group_size") or 128
        per = quantized.int_bits(int(wbits), int(group)) / 8  # AWQ/GPTQ: group scales and zeros
    else:
        per = float(s.dtype_bytes)
    return round((body * per + emb * 2) / GB, 6)
