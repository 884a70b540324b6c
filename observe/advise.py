"""Findings + engine config + capacity model → one coherent set of vLLM flag changes. Pure.

Rules of the plan:
- never suggest a flag already at the suggested value, nor a flag the detected vLLM version lacks;
- one value per flag (conflicting pulls are resolved here, never shown as "raise and lower");
- every recommendation names the findings it answers and, where the capacity model can, the
  expected effect in numbers (KV tokens, concurrency, headroom).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from observe import cmdline
from observe.model import EngineConfig, Finding, Recommendation
from observe.versions import parse_version

# flag → (first version that has it, last version that has it); None = open
FLAG_VERSIONS: dict[str, tuple[str | None, str | None]] = {
    "--kv-cache-dtype": ("0.3.0", None),
    "--kv-cache-memory-bytes": ("0.11.0", None),
    "--swap-space": (None, "0.10.99"),  # V0 only
    "--enable-chunked-prefill": (None, None),
    "--num-gpu-blocks-override": ("0.2.0", None),
}
V0_ONLY = {"--swap-space", "--preemption-mode"}
DEFAULT_GPU_UTIL = 0.9
MAX_GPU_UTIL = 0.95


def flag_supported(flag: str, cfg: EngineConfig) -> bool:
    if cfg.engine == "v1" and flag in V0_ONLY:
        return False
    ver = parse_version(cfg.version)
    lo, hi = FLAG_VERSIONS.get(flag, (None, None))
    if ver is None:
        return not (lo and parse_version(lo) >= (0, 11, 0))  # very new flags need a known version
    if lo and ver < parse_version(lo):
        return False
    if hi and ver > parse_version(hi):
        return False
    return True


def current_value(cfg: EngineConfig, flag: str) -> Any:
    """The value in force (None = unknown): the one rule lives in observe.cmdline."""
    return cmdline.in_force(cfg, flag)


@dataclass
class _Plan:
    cfg: EngineConfig
    facts: dict
    recs: dict[str, Recommendation] = field(default_factory=dict)

    def add(
        self, flag: str, suggested: Any, reason: str, fids: Sequence[str], effect: str | None = None
    ) -> bool:
        if flag in self.recs or not flag_supported(flag, self.cfg):
            return False
        cur = current_value(self.cfg, flag)
        if cur is not None and cmdline.same_value(cur, suggested):
            return False
        effect = effect or _effect(self.cfg, flag, cur, suggested, self.facts)
        self.recs[flag] = Recommendation(
            flag=flag,
            current=cur,
            suggested=suggested,
            reason=reason,
            finding_ids=tuple(fids),
            expected_effect=effect,
        )
        return True


def _effect(cfg: EngineConfig, flag: str, cur: Any, new: Any, facts: dict) -> str | None:
    """Ask the capacity model what the change buys; None when it cannot say."""
    try:
        from observe import capacity
    except ImportError:  # pragma: no cover - capacity is part of the package
        return None
    try:
        w = capacity.what_if(
            cfg, {flag: new}, request_tokens=_req_tokens(facts), gpu_total_gib=cfg.total_gpu_memory_gib
        )
    except Exception:  # the model declines (unknown architecture, missing facts): no number, no guess
        return None
    summary = getattr(w, "summary", None) or None
    if summary and "effect unknown" in summary:
        return None  # the model could not say: no number is better than a non-answer
    return summary


def _req_tokens(facts: dict) -> int | None:
    t = facts.get("request_tokens")
    return int(round(t)) if t else None


def _round_down(x: float, step: int) -> int:
    return max(step, int(x // step * step))


def _pow2_at_least(x: float, floor: int = 2048) -> int:
    n = floor
    while n < x:
        n *= 2
    return n


def advise(
    cfg: EngineConfig, findings: Sequence[Finding], *, facts: dict | None = None
) -> list[Recommendation]:
    facts = facts or {}
    by_id = {f.id: f for f in findings}
    p = _Plan(cfg, facts)
    gpu = (cfg.device or "GPU").upper() not in ("CPU",)

    # 1. the engine did not start: make it start
    f = by_id.get("max_model_len_exceeds_kv_cache")
    if f:
        est = (
            f.data.get("estimated_max_model_len") or f.data.get("kv_tokens") or f.data.get("kv_cache_tokens")
        )
        if est:
            new = _round_down(int(est), 256 if int(est) >= 512 else 16)
            p.add(
                "--max-model-len",
                new,
                f"the KV cache holds {int(est):,} tokens, less than one request of --max-model-len",
                [f.id],
                effect=f"the engine starts: one request of up to {new:,} tokens fits the {int(est):,}-token KV cache",
            )
    f = by_id.get("max_model_len_exceeds_model")
    if f and f.data.get("max_position_embeddings"):
        p.add(
            "--max-model-len",
            int(f.data["max_position_embeddings"]),
            "the model's max_position_embeddings is the longest context it supports",
            [f.id],
        )
    f = by_id.get("gpu_memory_utilization_too_high")
    if f:
        p.add(
            "--gpu-memory-utilization",
            0.90,
            "leave room for activation peaks and CUDA graphs outside the KV cache",
            [f.id, "cuda_oom"],
        )
    f = by_id.get("cuda_oom")
    if f and f.data.get("phase") in ("load_model", "loading_weights"):
        tp = cfg.tensor_parallel_size or 1
        p.add(
            "--tensor-parallel-size",
            int(tp) * 2,
            "the weights do not fit one GPU: split them over more",
            [f.id],
        )
    f = by_id.get("no_kv_cache_memory")
    if f:
        cur = cfg.gpu_memory_utilization
        if cur is not None and cur < DEFAULT_GPU_UTIL:
            p.add(
                "--gpu-memory-utilization",
                DEFAULT_GPU_UTIL,
                "after the weights and activations nothing was left for the KV cache",
                [f.id],
            )
    f = by_id.get("gpu_memory_busy")
    if f:
        free, total = f.data.get("free_gib"), f.data.get("total_gib")
        if free and total:
            p.add(
                "--gpu-memory-utilization",
                round(max(0.05, free / total - 0.02), 2),
                "other processes hold device memory; ask only for what is free",
                [f.id],
            )

    # 2. KV pressure at run time: more KV capacity, else fewer concurrent sequences
    kv_ids = [
        i
        for i in (
            "kv_cache_saturated",
            "preemptions",
            "queue_memory_bound",
            "preemptions_likely",
            "low_max_concurrency",
        )
        if i in by_id
    ]
    pressure = bool(kv_ids) and (
        "preemptions" in by_id
        or "queue_memory_bound" in by_id
        or "preemptions_likely" in by_id
        or "low_max_concurrency" in by_id
        or by_id["kv_cache_saturated"].severity == "critical"
    )
    oom = "cuda_oom" in by_id
    if pressure:
        grown = False
        kvb = cfg.flags.get("--kv-cache-memory-bytes")
        if kvb is not None and flag_supported("--kv-cache-memory-bytes", cfg):
            cur_b = parse_bytes(kvb)
            if cur_b:
                new_b = _kv_bytes_needed(cfg, facts, cur_b)
                grown = p.add(
                    "--kv-cache-memory-bytes",
                    _fmt_bytes(new_b),
                    "the KV cache is full and requests wait or are preempted; give it room for the observed load",
                    kv_ids,
                    effect=_bytes_effect(cfg, facts, cur_b, parse_bytes(_fmt_bytes(new_b)) or new_b),
                )
        if not grown and gpu and not oom:
            cur = cfg.gpu_memory_utilization if cfg.gpu_memory_utilization is not None else DEFAULT_GPU_UTIL
            if cur < MAX_GPU_UTIL - 1e-9:
                grown = p.add(
                    "--gpu-memory-utilization",
                    MAX_GPU_UTIL,
                    "more of the GPU for the KV cache (0.95 still leaves headroom for activations)",
                    kv_ids,
                )
        if gpu and (cfg.kv_cache_dtype in (None, "auto")) and flag_supported("--kv-cache-dtype", cfg):
            grown = (
                p.add(
                    "--kv-cache-dtype",
                    "fp8",
                    "an fp8 KV cache holds twice the tokens in the same memory "
                    "(small accuracy cost; check your evals)",
                    kv_ids,
                )
                or grown
            )
        if "too_many_seqs" not in by_id:
            # cap the batch only at what the KV cache holds AFTER the growth planned above
            _fit_max_num_seqs(p, cfg, facts, kv_ids, growth=_growth(p, cfg))

    # 3. batch size: too many sequences hurts throughput; KV room but capped queue wants more
    f = by_id.get("too_many_seqs")
    if f:
        best = int(f.data.get("best_running") or 0)
        if best > 0:
            p.add(
                "--max-num-seqs",
                max(1, best),
                f"throughput peaked at {best} running sequences and falls beyond",
                [f.id],
            )
    f = by_id.get("queue_seq_bound")
    if f and "--max-num-seqs" not in p.recs and not pressure:
        cur = cfg.max_num_seqs
        if cur:
            new = cur * 2
            req = _req_tokens(facts)
            if cfg.kv_cache_tokens and req:
                new = min(new, max(cur + 1, int(cfg.kv_cache_tokens * 0.9 // req)))
            p.add(
                "--max-num-seqs", new, "requests wait while the KV cache has room: admit more at once", [f.id]
            )

    # 4. prefill vs decode balance (needs /metrics). Under KV pressure a slow first token is the
    #    queue waiting for KV blocks, not prefill chunking: leave --max-num-batched-tokens alone.
    if pressure:
        pass
    elif "ttft_spikes" in by_id and "itl_high" not in by_id:
        cur = cfg.max_num_batched_tokens or _default_batched_tokens(cfg)
        if cur:
            p.add(
                "--max-num-batched-tokens",
                int(cur) * 2,
                "bursts of prompts queue behind small prefill chunks",
                ["ttft_spikes"],
            )
    elif "itl_high" in by_id and "ttft_spikes" not in by_id:
        cur = cfg.max_num_batched_tokens or _default_batched_tokens(cfg)
        if cur and int(cur) > 512:
            p.add(
                "--max-num-batched-tokens",
                max(512, int(cur) // 2),
                "smaller prefill chunks stall running decodes less (lower inter-token latency)",
                ["itl_high"],
            )

    # 5. context length nobody uses
    f = by_id.get("max_model_len_unused")
    if f and "--max-model-len" not in p.recs:
        used = f.data.get("max_tokens_per_request") or 0
        new = _pow2_at_least(used * 1.25)
        if cfg.max_model_len and new < cfg.max_model_len:
            p.add("--max-model-len", new, f"requests seen never exceeded {int(used):,} tokens", [f.id])
    return list(p.recs.values())


def _growth(p: _Plan, cfg: EngineConfig) -> float | None:
    """How much the planned changes multiply the KV cache's tokens (None: by an unknown factor)."""
    g = 1.0
    r = p.recs.get("--kv-cache-memory-bytes")
    if r is not None:
        old, new = parse_bytes(r.current), parse_bytes(r.suggested)
        if not (old and new):
            return None
        g *= new / old
    if "--kv-cache-dtype" in p.recs:
        g *= 2.0
    if "--gpu-memory-utilization" in p.recs:
        return None  # depends on memory the log does not state; do not cap against the old size
    return g


def _fit_max_num_seqs(
    p: _Plan, cfg: EngineConfig, facts: dict, fids: list[str], growth: float | None = 1.0
) -> None:
    req = _req_tokens(facts)
    tokens = cfg.kv_cache_tokens
    if not (req and tokens) or growth is None:
        return
    tokens = int(tokens * growth)
    fit = int(tokens // req)
    cur = cfg.max_num_seqs or facts.get("max_running")
    demand = (facts.get("max_running") or 0) + (facts.get("max_waiting") or 0)
    if growth > 1.0 and demand and fit >= demand:
        return  # the grown cache holds every request seen at once: a cap would only cost throughput
    if fit >= 1 and (cur is None or fit < cur):
        p.add(
            "--max-num-seqs",
            fit,
            f"{tokens:,} KV tokens hold {fit} requests of ~{req:,} tokens: admit no more "
            "than fit, so none is preempted and recomputed",
            fids,
        )


def _bytes_effect(cfg: EngineConfig, facts: dict, cur_b: int, new_b: int) -> str | None:
    tokens = cfg.kv_cache_tokens
    if not tokens:
        return None
    new_tokens = int(tokens * new_b / cur_b) // (cfg.block_size or 16) * (cfg.block_size or 16)
    out = f"KV cache {tokens:,} → ~{new_tokens:,} tokens ({cur_b / 2**20:,.0f} → {new_b / 2**20:,.0f} MiB)"
    req = _req_tokens(facts)
    if req:
        out += f"; requests of ~{req:,} tokens held at once: {tokens // req} → {new_tokens // req}"
    return out


def _kv_bytes_needed(cfg: EngineConfig, facts: dict, cur_bytes: int) -> int:
    """Size the KV cache for the concurrency seen: running+waiting requests × their length, with 25% slack."""
    req = _req_tokens(facts)
    peak = (facts.get("max_running") or 0) + (facts.get("max_waiting") or 0)
    if cfg.kv_cache_tokens and req and peak:
        per_token = cur_bytes / cfg.kv_cache_tokens
        want = int(per_token * req * peak * 1.25)
        return max(want, cur_bytes * 2)
    return cur_bytes * 4


_UNITS = {"": 1, "k": 1 << 10, "m": 1 << 20, "g": 1 << 30, "t": 1 << 40}


def parse_bytes(v: Any) -> int | None:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([kmgt]?)(?:i?b)?\s*", str(v), re.I)
    if not m:
        return None
    return int(float(m.group(1)) * _UNITS[m.group(2).lower()])


def _fmt_bytes(n: int) -> str:
    """Bytes as vLLM's --kv-cache-memory-bytes takes them, rounded UP to a whole MiB / GiB."""
    if n >= 1 << 30 and n % (1 << 30) == 0:
        return f"{n >> 30}G"
    if n >= 1 << 20:
        return f"{-(-n // (1 << 20))}M"
    return str(n)


def _default_batched_tokens(cfg: EngineConfig) -> int | None:
    ver = parse_version(cfg.version)
    if cfg.engine == "v1" or (ver and ver >= (0, 8, 0)):
        return 8192 if ver and ver >= (0, 10, 0) else 2048
    return None


# ---------------------------------------------------------------- the command to paste


def command_line(cfg: EngineConfig, recs: Sequence[Recommendation]) -> str:
    """The whole `vllm serve MODEL ...` command with the recommendations applied (shell-quoted)."""
    flags = dict(cfg.flags)
    for r in recs:
        flags[r.flag] = r.suggested
    model = cfg.model or flags.get("--model-tag") or flags.get("--model")
    flags.pop("--model-tag", None)
    return cmdline.render_command(str(model) if model else None, flags)
