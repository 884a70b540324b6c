"""vLLM's own flags, choices and defaults by release: queries over observe/data/vllm_flags.json.

The data was read from vLLM's source, release by release; each fact names the vLLM file and releases
it came from. This module only answers from that data and never guesses.

How a release is answered:
- a release that was read gets the fact read there;
- a release between two read releases gets a fact only when both neighbouring read releases agree
  (``choices`` gives the values valid at both, ``valid_value`` answers only when both agree);
- an unknown release (None, unreadable, older than the oldest or newer than the newest read) gets
  None from ``has_flag``, ``default`` and ``batch_defaults``; ``choices`` then gives the values valid
  in every read release that has the flag, and ``valid_value`` says True only for a value valid in
  all of them and False only for one valid in none: the most conservative answer still useful.

``default`` returns None for "unknown", and also where vLLM itself has no fixed default (the flag is
unset or derived from the model); the data file says which.
"""

from __future__ import annotations

import json
import re
from functools import lru_cache
from importlib import resources
from typing import Any

from observe.versions import parse_version

Version = tuple[int, int, int]

_UNKNOWN = object()
_USAGES = ("llm", "openai")


@lru_cache(maxsize=1)
def _data() -> dict[str, Any]:
    return json.loads(resources.files("observe").joinpath("data/vllm_flags.json").read_text())


@lru_cache(maxsize=1)
def _read() -> tuple[Version, ...]:
    parsed = {parse_version(v) for v in _data()["_meta"]["versions_read"]}
    return tuple(sorted(v for v in parsed if v is not None))


def versions_read() -> tuple[Version, ...]:
    """The vLLM releases whose source the data was read from, oldest first."""
    return _read()


def _text(v: Version) -> str:
    return ".".join(map(str, v))


def nearest_read(version: str | None) -> str:
    """The read release whose facts stand for `version` where an answer is needed all the same (the
    capacity model sizes for one release): the release itself when read, else the newest read release
    before it; the newest read release for None, an unreadable or a newer release; the oldest for an
    older one."""
    read = _read()
    v = parse_version(version)
    if v is None or v >= read[-1]:
        return _text(read[-1])
    return _text(max((r for r in read if r <= v), default=read[0]))


def flag_entries() -> dict[str, dict[str, Any]]:
    """Every flag the data knows, as the data file states it (read-only: do not change it)."""
    return _data()["flags"]


def _flag(flag: str) -> dict[str, Any] | None:
    return _data()["flags"].get(flag)


def _read_for(f: dict[str, Any] | None) -> tuple[Version, ...]:
    """The releases a flag's facts were read in: its own ``read`` list (a generated entry), else all."""
    if f is None or "read" not in f:
        return _read()
    return _flag_read(tuple(f["read"]))


@lru_cache(maxsize=64)
def _flag_read(versions: tuple[str, ...]) -> tuple[Version, ...]:
    return tuple(sorted(v for x in versions if (v := parse_version(x)) is not None))


def _version(version: str | None, f: dict[str, Any] | None = None) -> Version | None:
    """The parsed release, or None when it is unknown or outside the releases read (for flag f)."""
    v = parse_version(version)
    read = _read_for(f)
    if v is None or v < read[0] or v > read[-1]:
        return None
    return v


def _neighbours(v: Version, f: dict[str, Any] | None = None) -> tuple[Version, Version]:
    read = _read_for(f)
    if v in read:
        return v, v
    lo = max(r for r in read if r < v)
    hi = min(r for r in read if r > v)
    return lo, hi


def _covers(entry: dict[str, Any], r: Version) -> bool:
    lo, hi = parse_version(entry["from"]), parse_version(entry["to"])
    return lo is not None and hi is not None and lo <= r <= hi


def _agreed(v: Version, at: Any, f: dict[str, Any] | None = None) -> Any:
    """at(read release) at both neighbours of v (among flag f's releases); _UNKNOWN when they differ."""
    lo, hi = _neighbours(v, f)
    a = at(lo)
    return a if lo == hi or a == at(hi) else _UNKNOWN


def _present_at(flag: dict[str, Any], r: Version) -> bool:
    return any(_covers(e, r) for e in flag["present"])


def has_flag(flag: str, version: str | None) -> bool | None:
    """Whether `vllm serve` of that release accepts the flag; None when the release or flag is unknown."""
    f = _flag(flag)
    v = _version(version, f)
    if f is None or v is None:
        return None
    got = _agreed(v, lambda r: _present_at(f, r), f)
    return None if got is _UNKNOWN else got


def introduced(flag: str) -> str | None:
    """The first read release that has the flag (it may have appeared in an unread release before it)."""
    f = _flag(flag)
    return None if f is None else f["introduced"]


def removed_in(flag: str) -> str | None:
    """The first read release without the flag after it existed; None while the newest read has it."""
    f = _flag(flag)
    return None if f is None else f["removed_in"]


def default_engine(version: str | None) -> str | None:
    """'V0' or 'V1': the engine a release runs when VLLM_USE_V1 is not set."""
    v = _version(version)
    if v is None:
        return None

    def at(r: Version) -> str | None:
        return next((e["default"] for e in _data()["engines"] if _covers(e, r)), None)

    got = _agreed(v, at)
    return None if got is _UNKNOWN else got


def _choices_at(f: dict[str, Any], r: Version) -> list[Any] | None:
    if not _present_at(f, r):
        return None
    return next((e["values"] for e in f.get("choices", []) if _covers(e, r)), None)


def choices(flag: str, version: str | None) -> list[Any] | None:
    """The values the flag accepts in that release; None when it takes no fixed list or is unknown."""
    f = _flag(flag)
    if f is None or not f.get("choices"):
        return None
    v = _version(version, f)
    if v is None:
        lists = [c for r in _read_for(f) if (c := _choices_at(f, r)) is not None]
    else:
        lo, hi = _neighbours(v, f)
        at_lo, at_hi = _choices_at(f, lo), _choices_at(f, hi)
        if at_lo is None or at_hi is None:
            return None
        lists = [at_lo, at_hi]
    if not lists:
        return None
    return [x for x in lists[0] if all(x in c for c in lists[1:])]


# vLLM's human_readable_int: a number with an optional k/m/g/t (decimal) or K/M/G/T (binary) suffix
_HUMAN_INT = re.compile(r"\d+(?:\.\d+)?[kKmMgGtT]?")
_TYPES: dict[str, tuple[type, ...]] = {"int": (int,), "float": (int, float), "bool": (bool,), "str": (str,)}


def _valid_at(f: dict[str, Any], flag: str, value: Any, r: Version) -> bool | None:
    if not _present_at(f, r):
        return False
    allowed = _choices_at(f, r)
    if allowed is not None:
        return value in allowed
    types = _TYPES.get(f["type"])
    if types is None:
        return None
    if isinstance(value, bool) and f["type"] != "bool":
        return False
    if (
        isinstance(value, str)
        and f["type"] == "int"
        and any(_covers(e, r) for e in f.get("human_readable", ()))
    ):
        return _HUMAN_INT.fullmatch(value.strip()) is not None
    if not isinstance(value, types):
        return False
    if flag == "--gpu-memory-utilization" and isinstance(value, (int, float)):
        return 0 < value <= 1
    return True


def valid_value(flag: str, value: Any, version: str | None) -> bool | None:
    """Whether vLLM of that release accepts `value` for the flag; None when that cannot be told."""
    f = _flag(flag)
    if f is None:
        return None
    v = _version(version, f)
    if v is None:
        answers = {_valid_at(f, flag, value, r) for r in _read_for(f) if _present_at(f, r)}
        if answers == {True}:
            return True
        if answers == {False}:
            return False
        return None
    got = _agreed(v, lambda r: _valid_at(f, flag, value, r), f)
    return None if got is _UNKNOWN else got


def _matches(entry: dict[str, Any], engine: str | None, device: str) -> bool:
    if "engine" in entry and entry["engine"] != engine:
        return False
    return entry.get("device", device) == device


def default(
    flag: str,
    version: str | None,
    *,
    gpu: str | None = None,
    gpu_memory_gib: float | None = None,
    device: str = "GPU",
    usage: str = "openai",
    engine: str | None = None,
    world_size: int = 1,
    performance_mode: str | None = None,
    fallback: bool = False,
    extensible_kv_cache: bool = True,
) -> Any:
    """The value vLLM uses when the flag is not given; None when unknown or not fixed (see module doc).

    engine: 'V0' or 'V1'; None means the release's default engine. gpu / gpu_memory_gib (torch's total
    device memory) are needed only where vLLM picks the default from the hardware. fallback: where
    vLLM computes the value from what observe does not know (the attention backend), the value it
    starts from (the data file's 'fallback') instead of None. extensible_kv_cache: False where the
    deployment turns vLLM 0.34's extensible KV cache off (an entry's 'when'/'otherwise' then answers).
    """
    f = _flag(flag)
    v = _version(version, f)
    if f is None or v is None or device not in ("GPU", "CPU"):
        return None

    def at(r: Version) -> Any:
        if not _present_at(f, r):
            return None
        eng = engine or next((e["default"] for e in _data()["engines"] if _covers(e, r)), None)
        for e in f.get("effective_default", []):
            if _covers(e, r) and _matches(e, eng, device):
                if e.get("computed") == "v1_batch_defaults":
                    got = _batch_at(r, gpu, gpu_memory_gib, usage, device, world_size, performance_mode)
                    return None if got is None else got[f["dest"]]
                if "computed" in e:
                    return e.get("fallback") if fallback else None
                if e.get("when") == "extensible_kv_cache" and not extensible_kv_cache:
                    return e["otherwise"]
                return e["value"]
        return next((e["value"] for e in f["default"] if _covers(e, r)), None)

    got = _agreed(v, at, f)
    return None if got is _UNKNOWN else got


def block_size(version: str | None, *, device: str = "GPU") -> int | None:
    """The KV-cache block size (tokens) vLLM uses when --block-size is not given; on GPUs from 0.18 the
    attention backend picks it, starting from CacheConfig.DEFAULT_BLOCK_SIZE (16), which FlashAttention
    keeps but for its FA4 cases. None when the release is unknown."""
    got = default("--block-size", version, device=device, fallback=True)
    return got if isinstance(got, int) else None


def gpu_memory_utilization(
    version: str | None, *, device: str = "GPU", extensible_kv_cache: bool = True
) -> float | None:
    """vLLM's --gpu-memory-utilization when it is not given (0.9, 0.92 from 0.20; from 0.34 1.0 on a
    GPU with the extensible KV cache, its default on CUDA and ROCm, else 0.92); None when unknown."""
    got = default("--gpu-memory-utilization", version, device=device, extensible_kv_cache=extensible_kv_cache)
    return float(got) if isinstance(got, (int, float)) else None


def v0_batched_tokens(version: str | None, max_model_len: int) -> tuple[int, bool]:
    """V0's --max-num-batched-tokens when it is not given, for a model of `max_model_len` tokens, and
    whether V0 turned chunked prefill on by itself for it (above 32,768 tokens from 0.5; on CUDA with
    no sliding window, speculative decoding or LoRA, which the caller judges). A release that is
    unknown or has no V0 gets the rule every V0 release shares: max(max_model_len, 2048), unchunked."""
    fixed = default("--max-num-batched-tokens", version, engine="V0")
    if isinstance(fixed, int):  # 0.1.7 declared a fixed default
        return fixed, False
    table = _data()["v0_batched_tokens"]
    whole = max(max_model_len, table["unchunked"]["at_least"])
    v = _version(version)
    if v is None or not _covers(table["unchunked"], v):
        return whole, False
    if _covers(table["long_context"], v) and max_model_len > table["long_context"]["above"]:
        budget = next((e["value"] for e in table["chunked"] if _covers(e, v)), None)
        if budget is not None:
            return budget, True
    return whole, False


#: the tuning areas a flag may belong to (data file's ``category``)
CATEGORIES = ("memory", "batching", "scheduling", "cuda_graphs", "kv_offload", "prefix_caching", "startup")


def categories(flag: str) -> list[str]:
    """The tuning areas the flag changes (empty for an unknown flag or one that changes none)."""
    f = _flag(flag)
    return [] if f is None else list(f.get("category", []))


def flags_in(category: str) -> list[str]:
    """Every known flag that changes that tuning area, sorted."""
    return sorted(k for k, f in _data()["flags"].items() if category in f.get("category", []))


def _tier_fits(when: dict[str, Any], name: str | None, gib: float | None) -> bool | None:
    """Whether a tier's condition holds; None when the GPU facts it needs are missing."""
    lowered = name.lower() if name else None
    if "name_any" in when:
        if lowered is None:
            return None
        return any(n in lowered for n in when["name_any"])
    if "min_gib" in when:
        if gib is None:
            return None
        if gib < when["min_gib"]:
            return False
    if "name_none" in when:
        if lowered is None:
            return None
        return not any(n in lowered for n in when["name_none"])
    return True


def _batch_at(
    r: Version,
    gpu: str | None,
    gib: float | None,
    usage: str,
    device: str,
    world_size: int,
    performance_mode: str | None,
) -> dict[str, int] | None:
    table = _data()["v1_batch_defaults"]
    out: dict[str, int] | None = None
    if device == "CPU":
        rule = next((e for e in table["cpu"] if _covers(e, r)), None)
        if rule is None:
            return None
        scale = world_size if rule["per_world_size"] else 1
        out = {k: rule[k][usage] * scale for k in ("max_num_seqs", "max_num_batched_tokens")}
    else:
        rule = next((e for e in table["rules"] if _covers(e, r)), None)
        if rule is None:
            return None
        for tier in rule["tiers"]:
            fits = _tier_fits(tier["when"], gpu, gib)
            if fits is None:
                return None
            if fits:
                out = {k: tier[k][usage] for k in ("max_num_seqs", "max_num_batched_tokens")}
                break
    if out is None:
        return None
    boost = table["throughput_mode"]
    if performance_mode == "throughput" and _covers(boost, r):
        out = {k: n * boost["factor"] for k, n in out.items()}
    return out


def batch_defaults(
    version: str | None,
    *,
    gpu: str | None = None,
    gpu_memory_gib: float | None = None,
    usage: str = "openai",
    device: str = "GPU",
    world_size: int = 1,
    performance_mode: str | None = None,
) -> dict[str, int] | None:
    """V1's defaults for unset --max-num-seqs / --max-num-batched-tokens on that hardware.

    gpu: the device name as torch reports it (matched case-insensitively by substring, as vLLM does);
    gpu_memory_gib: torch's total device memory. usage: 'openai' (vllm serve) or 'llm' (offline LLM
    class). world_size (tp * pp) scales the CPU defaults. Returns {'max_num_seqs': .., 'max_num_batched_tokens': ..},
    or None when the release has no V1 defaults or the GPU facts the release's rule needs are missing.
    When chunked prefill is off, vLLM raises max_num_batched_tokens to at least max_model_len.
    """
    if usage not in _USAGES:
        raise ValueError(f"usage must be one of {_USAGES}, not {usage!r}")
    v = _version(version)
    if v is None:
        return None
    got = _agreed(v, lambda r: _batch_at(r, gpu, gpu_memory_gib, usage, device, world_size, performance_mode))
    return None if got is _UNKNOWN else got


def largest_gpu_max_num_seqs(usage: str = "openai") -> int:
    """The largest --max-num-seqs V1 defaults to on any GPU in the releases read (1024: GPUs of 70 GiB
    and more from 0.8.5, every GPU before): what an unset --max-num-seqs may be where the GPU is unknown."""
    if usage not in _USAGES:
        raise ValueError(f"usage must be one of {_USAGES}, not {usage!r}")
    rules = _data()["v1_batch_defaults"]["rules"]
    return max(int(t["max_num_seqs"][usage]) for r in rules for t in r["tiers"])


def stats_interval_s(engine: str = "v1") -> float:
    """Seconds between the stats lines vLLM logs while it serves, by default: V1 10 (the API server's
    log task), V0 5. The environment variable ``stats_interval_env()`` changes it (V1)."""
    return float(_data()["stats_interval"][engine.lower()])


def stats_interval_env() -> str:
    """The environment variable that sets V1's stats interval (VLLM_LOG_STATS_INTERVAL)."""
    return str(_data()["stats_interval"]["env"])
