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
from observe.errors import ConfigError, ObserveError


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


# the options that are numbers (parsed here, so that a bad one is one line, not a usage panel), and
# those that need not be whole
NUMBER_OPTIONS = (
    "gpu_memory_gib",
    "tp",
    "pp",
    "gpu_memory_utilization",
    "max_model_len",
    "block_size",
    "max_num_batched_tokens",
    "max_num_seqs",
    "context",
    "concurrency",
    "weights_gib",
)
_FRACTIONS = ("gpu_memory_gib", "gpu_memory_utilization", "weights_gib", "gpu_free_gib")


def number(flag: str, text: str | None, integer: bool = True) -> Any:
    """An option's text as a number; a bad one is one ObserveError naming the flag."""
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


def from_options(model: str | ModelSpec | None, *, gpu_free_gib: str | None, **options: Any) -> Answer:
    """`observe capacity`'s options as typed → the answer: the numbers in NUMBER_OPTIONS parsed,
    ``gpu_free_gib`` as one figure or one per GPU (``40,38``); the rest go to `answer`."""
    for k in NUMBER_OPTIONS:
        options[k] = number("--" + k.replace("_", "-"), options.get(k), integer=k not in _FRACTIONS)
    free = (
        [number("--gpu-free-gib", x, integer=False) for x in gpu_free_gib.split(",")]
        if gpu_free_gib
        else None
    )
    return answer(model, gpu_free_gib=free, **options)
