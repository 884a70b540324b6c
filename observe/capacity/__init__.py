"""KV-cache capacity of a vLLM engine: how many tokens and concurrent requests it holds, and what
a flag change would do to that.

tables.py (built-in models and GPUs, Hugging Face config.json), sizing.py (the accounting:
`compute`, `bytes_per_token`), defaults.py (vLLM's defaults, asked of observe.flags.vllmflags), whatif.py
(`what_if`), render.py (`render_text`). Pure but for the package's own tables: a config.json a user
names is read at the edge (observe.modelfiles).
"""

from observe.capacity.render import render_text
from observe.capacity.sizing import (
    CapacityResult,
    Measured,
    bytes_per_token,
    compute,
    kv_bytes_per_element,
)
from observe.capacity.tables import (
    GpuSpec,
    ModelSpec,
    gpu_spec,
    model_spec,
    spec_from_config,
)
from observe.capacity.whatif import WhatIf, what_if

__all__ = [
    "CapacityResult",
    "GpuSpec",
    "Measured",
    "ModelSpec",
    "WhatIf",
    "bytes_per_token",
    "compute",
    "gpu_spec",
    "kv_bytes_per_element",
    "model_spec",
    "render_text",
    "spec_from_config",
    "what_if",
]
