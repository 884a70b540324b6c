"""The engine banner's config ("Initializing an LLM engine (vX.Y.Z) with config: …"): the keys observe keeps, and
what the banner's shape says of the release when it names none.

The banner names its version from 0.4.0 ("(v0.4.0)"); without one it is 0.1.0 → 0.3.3 (``unversioned_banner``).
Its fields bound it further: 0.2.6 added ``enforce_eager=`` between ``quantization=`` and ``seed=`` (wheels 0.2.0 →
0.3.3, llm_engine.py's ``logger.info``), so a whole banner (it reaches ``seed=``) with ``max_seq_len=`` and without
``enforce_eager=`` is 0.2.5 or older (``banner_without_eager``) — a release without vLLM's KV-size check at start-up
(0.2.7 added "The model's max seq len (N) is larger than the maximum number of tokens that can be stored in KV
cache"). Pure.
"""

from __future__ import annotations

from typing import Any

from observe.parse.reprs import parse_kv_repr

__all__ = ["WITH_CONFIG", "config_facts"]

#: the config keys kept from the banner, in this order
_CONFIG_ORDER = (
    "model",
    "max_seq_len",
    "tensor_parallel_size",
    "pipeline_parallel_size",
    "data_parallel_size",
    "quantization",
    "enforce_eager",
    "kv_cache_dtype",
    "enable_prefix_caching",
    "chunked_prefill_enabled",
    "dtype",
    "block_size",
    "speculative_config",
    "served_model_name",
    "device_config",
    "seed",
)
_CONFIG_KEYS = frozenset(_CONFIG_ORDER)
WITH_CONFIG = "with config: "


def config_facts(msg: str) -> list[tuple[str, Any]]:
    """The banner's facts: ``config`` (the kept keys), ``unversioned_banner`` (no "(vX)": 0.1.0 → 0.3.3) and
    ``banner_without_eager`` (a whole banner of 0.2.5 or older); none without "with config: "."""
    i = msg.find(WITH_CONFIG)
    if i < 0:
        return []
    cfg = parse_kv_repr(msg[i + len(WITH_CONFIG) :], _CONFIG_KEYS)
    out: list[tuple[str, Any]] = []
    useful = {k: cfg[k] for k in _CONFIG_ORDER if k in cfg}
    if useful:
        out.append(("config", useful))
    if msg.rfind("(v", 0, i) < 0:
        out.append(("unversioned_banner", True))
        if "max_seq_len" in cfg and "seed" in cfg and "enforce_eager" not in cfg:
            out.append(("banner_without_eager", True))
    return out
