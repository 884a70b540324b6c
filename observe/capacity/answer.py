"""`observe capacity`'s answer: the model and GPU named, the sizing for the asked KV dtype and the
other one (as text; the JSON document is report.jsonout's `capacity_json`), and whether vLLM would
refuse to start (the CLI's exit 1). Pure: a config.json the user names arrives read
(observe.modelfiles.model_argument)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from observe.capacity.render import render_text
from observe.capacity.sizing import CapacityResult, compute, kv_bytes_per_element
from observe.capacity.tables import ModelSpec, gpu_spec, model_spec
from observe.errors import ConfigError


@dataclass(frozen=True)
class Answer:
    text: str  # what the CLI prints for --format text ("" for json: report.jsonout.capacity_json)
    refuses: bool  # vLLM would refuse to start with this configuration (no KV blocks, or max_model_len)
    result: CapacityResult
    alternative: CapacityResult | None = None  # the same question for the other KV-cache dtype


def refuses_to_start(r: CapacityResult) -> bool:
    """vLLM does not start: no memory for one KV block, or one max_model_len request does not fit."""
    return r.num_blocks <= 0 or not r.fits


def answer(
    model: str | ModelSpec | None,
    *,
    gpu: str | None,
    gpu_memory_gib: float | None,
    kv_cache_dtype: str = "auto",
    fmt: str = "text",
    **kwargs: Any,
) -> Answer:
    """Size `model` (a built-in name, or a config.json read by observe.modelfiles) on `gpu` (or
    `gpu_memory_gib`); `kwargs` go to `compute`."""
    if fmt not in ("text", "json"):
        raise ConfigError(f"--format must be text or json, not {fmt!r}")
    if not model:
        raise ConfigError("give --model NAME (built-in) or --model path/to/config.json")
    spec = model_spec(model)
    total, gpu_name = gpu_memory_gib, ""
    if gpu:
        g = gpu_spec(gpu)
        gpu_name = g.name
        total = total if total is not None else g.total_gib
    if total is None:
        raise ConfigError("give --gpu NAME or --gpu-memory-gib N")
    kwargs = dict(kwargs, gpu_memory_gib=total, gpu_name=gpu_name)
    result = compute(spec, kv_cache_dtype=kv_cache_dtype, **kwargs)
    alt = None
    if result.required_kv_gib is not None:  # the classic question: also answer for the other KV dtype
        other = "auto" if kv_bytes_per_element(kv_cache_dtype, spec) == 1 else "fp8"
        alt = compute(spec, kv_cache_dtype=other, **kwargs)
    text = "" if fmt == "json" else render_text(result, alt)
    return Answer(text=text, refuses=refuses_to_start(result), result=result, alternative=alt)
