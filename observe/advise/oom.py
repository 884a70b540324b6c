"""The levers for an out-of-memory, by the phase it happened in, sized from the message. Pure.

- weights (loading / creating the model): more GPUs (tensor or pipeline parallel, sized from what
  the message shows loaded), a quantized checkpoint, or a GPU nothing else holds; never batch or
  utilization flags (they size what comes after the weights);
- profiling / CUDA-graph capture: ``--enforce-eager`` (no graphs), fewer captured batch sizes
  (``--max-num-seqs``), a smaller profile pass (``--max-num-batched-tokens``), or a lower
  ``--gpu-memory-utilization``;
- after the KV cache is allocated (warm-up, serving): ``--gpu-memory-utilization`` lowered by what
  the failed allocation lacked (total, free and the allocation from the message), or smaller peaks
  (``--max-num-batched-tokens`` / ``--max-num-seqs``).

One allocation larger than all that was free on a mostly free GPU (tens of GiB), or the sampler's
logits (one row per sequence, V1's warm-up): only a smaller batch helps, cut to the share of the
allocation that fits (``--max-num-batched-tokens``, ``--max-num-seqs``); never ``--enforce-eager``.
Where neither the value in force nor the release is known, the note gives the first step relative to
the value in force, then the alternatives.

Where the value in force is unknown, the recommendation is computed from the release's default
and says so ("assuming vLLM's default 0.9"). A GPU that other processes mostly hold gets "no vLLM flag
frees it: free the GPU, or another one", and no other lever than a utilization for the rest, only when the
weights are known to fit it.
"""

from __future__ import annotations

import math
from dataclasses import replace
from typing import Any

from observe.advise.plan import Plan
from observe.advise.units import ceil_to
from observe.capacity import defaults
from observe.findingids import FindingId
from observe.model import Finding, Recommendation

OTHERS_SHARE = 0.5  # other processes holding this share of the GPU: "free the GPU" comes first
WEIGHTS_SHARE = 0.6  # the share of a GPU the weights may take, leaving room for KV and activations
MARGIN = 1.2  # headroom over what the failed allocation lacked
LARGE_FREE_SHARE = 0.5  # free share of the GPU above which a failed allocation is one tensor too large
_PEAKS = "leave room for activation peaks outside the KV cache"
SLEEP_STEP = 0.1  # sleep mode's first step below the value in force (its allocator's message has no figures)

WEIGHTS = frozenset(
    {"load_model", "load", "loading", "weights", "loading_weights", "creating", "create_model"}
)
GRAPHS = frozenset({"cuda_graph", "cudagraph", "graph_capture", "cuda_graph_capture"})
PROFILE = frozenset({"profiling", "profile", "profile_run"})


def _num(d: dict, *keys: str) -> float | None:
    for k in keys:
        v = d.get(k)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and v >= 0:
            return float(v)
    return None


def _pow2(x: float) -> int:
    return 2 ** max(1, math.ceil(math.log2(max(x, 1.0001))))


def _assumed(is_default: bool, cur: Any) -> str:
    return f" (assuming vLLM's default {cur}: the log does not show the value in force)" if is_default else ""


class _Mem:
    """The message's numbers in GiB: total, free, the failed allocation, this process's use, and
    what other processes hold (total − free − this process)."""

    def __init__(self, p: Plan, d: dict) -> None:
        self.total = _num(d, "total_capacity_gib") or p.cfg.total_gpu_memory_gib
        self.free = _num(d, "free_gib")
        self.tried = _num(d, "tried_to_allocate_gib")
        self.mine = _num(d, "process_in_use_gib")
        self.torch = _num(d, "allocated_by_pytorch_gib")
        self.gpu = d.get("gpu")
        o = None
        if self.total and self.free is not None and self.mine is not None:
            o = max(0.0, self.total - self.free - self.mine)
        self.others = o

    def reading(self) -> str:
        if self.torch and self.total:
            return f" (PyTorch held {self.torch:.2f} of {self.total:.2f} GiB)"
        return ""

    def others_hold_most(self) -> bool:
        return bool(self.total and self.others is not None and self.others >= OTHERS_SHARE * self.total)

    def one_large(self) -> bool:
        """One allocation larger than all that was free while most of the GPU was: a tensor sized by
        the batch (tokens a step, or the sampler's rows), not memory held elsewhere."""
        return bool(
            self.total
            and self.tried
            and self.free is not None
            and self.tried > self.free >= LARGE_FREE_SHARE * self.total
        )

    def share(self) -> float | None:
        """The share of the failed allocation that fits what was free, with MARGIN (at most one half)."""
        if not self.tried or self.free is None:
            return None
        return min(0.5, self.free / (self.tried * MARGIN))

    def lacked(self) -> float | None:
        """GiB the failed allocation lacked (at least a small step: the next one would fail too)."""
        if self.tried is None or self.free is None:
            return None
        return max(self.tried - self.free, 0.0)


def oom(p: Plan, f: Finding) -> None:
    """CUDA out of memory, by phase: loading weights, profiling / CUDA graphs, after the KV cache."""
    d = f.data
    phase = str(d.get("phase") or "").lower()
    m = _Mem(p, d)
    frag = _num(d, "reserved_unallocated_gib")
    if frag is not None and frag >= p.settings.oom_fragmentation_gib and (m.tried is None or frag >= m.tried):
        p.note(
            [f.id],
            f"{frag:.2f} GiB was reserved by PyTorch but unallocated: memory is fragmented; set "
            "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True before the flags below",
        )
    if m.others_hold_most():
        assert m.others is not None and m.total is not None
        p.note(
            [f.id],
            f"other processes hold {m.others:.2f} of this GPU's {m.total:.2f} GiB (this engine had "
            f"{m.mine or 0:.2f} GiB): no vLLM flag frees memory another process holds; free the GPU first "
            "(nvidia-smi shows who holds it; a leftover vLLM or another job), or run on a GPU nothing else uses",
        )
        # the rest of the GPU: a utilization that fits it, only when the weights are known to fit (_lower_util)
        p.add_any_of([_lower_util(p, f, m, "fit what the other processes leave of the GPU")])
        return
    if d.get("allocator") == "cumem" and m.tried is None:
        _sleep_mode(p, f)
    elif phase not in WEIGHTS and m.one_large():
        _one_large(p, f, m, sampler=phase == "sampler_warmup")
    elif phase in WEIGHTS:
        _weights(p, f, m)
    elif phase in GRAPHS:
        _capture(p, f, m)
    elif phase in PROFILE:
        _profile(p, f, m)
    else:  # allocating the KV cache, after it (warm-up, serving) or not said
        _after_kv(p, f, m, sampler=phase == "sampler_warmup", kv=phase == "kv_cache_init")


def _sleep_mode(p: Plan, f: Finding) -> None:
    """vLLM's sleep-mode allocator ran out (csrc/cumem_allocator.cpp, ``enable_sleep_mode``; 0.7.3 →): it maps
    the weights and the KV cache, sized at start-up by --gpu-memory-utilization, back onto the GPU at
    ``wake_up``, so what another process took meanwhile (the trainer of an RLHF loop beside it) is what is
    missing. A lower utilization is the one vLLM flag that shrinks what is mapped back; its message has no
    figures, so the step is a first one, below the value in force (or the lowest default of any release)."""
    cur, is_default = p.current("--gpu-memory-utilization")
    base = float(cur) if cur is not None else defaults.lowest_gpu_memory_utilization()
    new = round(base - SLEEP_STEP, 2)
    was = f"{base:g}" + (
        _assumed(is_default, cur)
        if cur is not None
        else " (the lowest default of any release: the log shows neither the value in force nor the release)"
    )
    p.add_any_of(
        [
            p.make(
                "--gpu-memory-utilization",
                new,
                f"first step: vLLM's sleep-mode allocator ran out mapping memory back (wake_up re-maps the weights "
                f"and the KV cache sized at start-up); {SLEEP_STEP:g} below {was} leaves that much more for what "
                "runs beside the engine; if it recurs, free the other process's memory before waking the engine "
                "(the trainer's cache: torch.cuda.empty_cache(), or offload it)",
                [f.id, FindingId.GPU_MEMORY_UTILIZATION_TOO_HIGH],
                effect=f"{SLEEP_STEP:g} of the GPU less for the KV cache that wake_up maps back",
            )
        ]
    )


def _weights(p: Plan, f: Finding, m: _Mem) -> None:
    cfg = p.cfg
    loaded = (m.mine or m.torch or 0.0) + (m.tried or 0.0)
    usable = (m.total or 0.0) - (m.others or 0.0)
    k = 2
    if loaded and usable > 0:
        k = max(2, _pow2(loaded / (WEIGHTS_SHARE * usable)))
    seen = (
        f"; at the failure {loaded:.2f} GiB per GPU was loaded (the message does not show the rest of the "
        "checkpoint: more may be needed)"
        if loaded
        else ""
    )
    tp_cur, tp_def = p.current("--tensor-parallel-size")
    pp_cur, _ = p.current("--pipeline-parallel-size")
    pp = int(pp_cur or 1)
    opts: list[Recommendation | None] = []
    assumed = _assumed(tp_def, tp_cur)
    by_gpu = cfg.tensor_parallel_size is None and isinstance(m.gpu, int) and m.gpu > 0
    if by_gpu:  # "GPU 2" in the message: at least 3 GPUs, and tensor-parallel sizes are powers of two
        assert isinstance(m.gpu, int)
        tp_cur = 2 ** math.ceil(math.log2(m.gpu + 1))
        assumed = (
            f" (assuming --tensor-parallel-size {tp_cur}: the log does not show it, and the message names "
            f"GPU {m.gpu}, so the engine uses at least {m.gpu + 1})"
        )
    if tp_cur is not None:
        tp = int(tp_cur)
        tp_rec = p.make(
            "--tensor-parallel-size",
            tp * k,
            f"the weights do not fit: split each layer over {k}× the GPUs" + assumed,
            [f.id],
            effect=f"weights per GPU ÷{k} on {tp * k * pp} GPUs{seen}",
        )
        if tp_rec is not None and by_gpu:
            tp_rec = replace(tp_rec, current=None, current_is_default=False)  # unknown, not the default
        pp_rec = (
            p.make(
                "--pipeline-parallel-size",
                pp * k,
                f"this deployment already splits its layers into {pp} stages: {pp * k} stages hold 1/{k} of them each",
                [f.id],
                effect=f"weights per GPU ÷{k} on {tp * pp * k} GPUs{seen}",
            )
            if pp > 1
            else None
        )
        opts = [pp_rec, tp_rec] if pp > 1 else [tp_rec]
    r = p.add_any_of(opts)
    gpus = (
        "use more GPUs (as above), "
        if r is not None
        else "split the model over more GPUs (--tensor-parallel-size, or --pipeline-parallel-size across "
        "nodes: the log does not show the size in force), "
    )
    p.note(
        [f.id],
        "the weights alone do not fit: no KV-cache, batch or utilization flag helps; "
        + gpus
        + "a quantized checkpoint (AWQ / GPTQ / FP8: a half to a quarter of the weight memory), a smaller "
        "model, or offload part of the weights to CPU memory (--cpu-offload-gb, slow)"
        + (m.reading() if r is None else ""),
    )


def _lower_util(p: Plan, f: Finding, m: _Mem, why: str) -> Recommendation | None:
    """--gpu-memory-utilization lowered by what the failed allocation lacked (with MARGIN)."""
    cur, is_default = p.current("--gpu-memory-utilization")
    lack = m.lacked()
    if cur is None or not m.total or lack is None:
        return None
    step = _util_margin(m, lack)
    new = round(float(cur) - step, 2)
    if new < 0.05:
        return None
    if m.others_hold_most():
        weights = p.cfg.weights_gib
        if weights is None or new * m.total < weights * 1.25:
            return None  # the rest of a GPU others hold: only when the weights are known to fit it
    return _util_down(
        p,
        f,
        new,
        why + _assumed(is_default, cur),
        f"{step * m.total:.2f} GiB more room outside the KV cache ({float(cur):g} → {new:g} of "
        f"{m.total:.2f} GiB); the allocation that failed lacked {lack:.2f} GiB; the KV cache shrinks by as much",
    )


def _util_down(p: Plan, f: Finding, new: float, why: str, effect: str) -> Recommendation | None:
    """--gpu-memory-utilization lowered to new for this out-of-memory (it answers the utilization finding too)."""
    return p.make(
        "--gpu-memory-utilization", new, why, [f.id, FindingId.GPU_MEMORY_UTILIZATION_TOO_HIGH], effect=effect
    )


def _kv_step(p: Plan, f: Finding, m: _Mem, why: str) -> Recommendation | None:
    """Allocating the KV cache ran out, the device's size not in the message (JAX's "Attempting to allocate …
    There are … free"): --gpu-memory-utilization the least step (0.02) below the value in force, which is more
    than the failed allocation lacked on any device of at least lack x MARGIN / 0.02 GiB."""
    cur, is_default = p.current("--gpu-memory-utilization")
    lack = m.lacked()
    if cur is None or lack is None or float(cur) - 0.02 < 0.05:
        return None
    new = round(float(cur) - 0.02, 2)
    return _util_down(
        p,
        f,
        new,
        why + _assumed(is_default, cur),
        f"2% of each device's memory moves out of the KV cache ({float(cur):g} → {new:g}); the allocation "
        f"that failed lacked {lack:.2f} GiB, and 2% of any device over {lack * MARGIN / 0.02:.1f} GiB is more",
    )


def _util_margin(m: _Mem, lack: float) -> float:
    """The step below the value in force: what the failed allocation lacked, with MARGIN, as a share of the GPU."""
    return max(0.02, ceil_to(lack * MARGIN / (m.total or 1.0), 0.01))  # the callers know m.total


def _util_step(p: Plan, f: Finding, m: _Mem, lack: float, why: str = _PEAKS) -> Recommendation | None:
    """The value in force unknown and no release to take a default from: --gpu-memory-utilization a step
    (``_util_margin``) below the lowest default any release has (0.9; 0.92 from 0.20, 1.0 from 0.34), so it
    is lower than what ran whichever release it was, unless it was set lower still. A flag every release has
    (0.1.7 →); the value in force stays unknown (never taken as a default)."""
    if p.current("--gpu-memory-utilization")[0] is not None or m.others_hold_most() or not m.total:
        return None
    low, step = defaults.lowest_gpu_memory_utilization(), _util_margin(m, lack)
    new = round(low - step, 2)
    return p.make(
        "--gpu-memory-utilization",
        new,
        f"first step: {why}, {step:g} below the value in force; "
        f"the log shows neither that value nor the release, so {new:g} is {step:g} below {low:g}, the lowest "
        f"default of any release (if it was set below {low:g}, take {step:g} off that instead); if it recurs, "
        "halve --max-num-batched-tokens or --max-num-seqs (smaller peaks), or add GPUs (--tensor-parallel-size)",
        [f.id, FindingId.GPU_MEMORY_UTILIZATION_TOO_HIGH],
        effect=f"{step * m.total:.2f} GiB more room outside the KV cache of {m.total:.2f} GiB{m.reading()}; "
        f"the allocation that failed lacked {lack:.2f} GiB; the KV cache shrinks by as much",
    )


def _halve(p: Plan, f: Finding, flag: str, floor: int, why: str, effect: str) -> Recommendation | None:
    cur, is_default = p.current(flag)
    if cur is None or int(cur) <= floor:
        return None
    new = max(floor, int(cur) // 2)
    return p.make(
        flag, new, why + _assumed(is_default, cur), [f.id], effect=effect.format(cur=int(cur), new=new)
    )


def _eager(p: Plan, f: Finding) -> Recommendation | None:
    return p.make(
        "--enforce-eager",
        True,
        "capturing CUDA graphs needs memory outside the KV cache: run without them",
        [f.id],
        effect="no graph-capture memory; decode is slower (typically 10–30 %)",
    )


def _fewer_seqs(p: Plan, f: Finding, why: str) -> Recommendation | None:
    return _halve(
        p,
        f,
        "--max-num-seqs",
        8,
        why,
        "at most {new} sequences a step instead of {cur}: smaller decode batches (and graphs) to hold",
    )


def _fewer_tokens(p: Plan, f: Finding, why: str) -> Recommendation | None:
    return _halve(
        p,
        f,
        "--max-num-batched-tokens",
        2048,
        why,
        "activation peak roughly halves ({cur:,} → {new:,} tokens a step)",
    )


def _fallback(p: Plan, f: Finding, m: _Mem, levers: str) -> None:
    p.note([f.id], "out of memory outside the KV cache" + m.reading() + ": " + levers)


# the largest batch vLLM captures a CUDA graph for: the release's flag, and the first release whose
# default is min(2 × max_num_seqs, 512) (vllm/config: SchedulerConfig.cuda_graph_sizes 0.10.2–0.12,
# VllmConfig max_cudagraph_capture_size from 0.11.1; read in the wheels, see vllm_flags.json)
_CAPTURE_FLAGS = (("--max-cudagraph-capture-size", (0, 11, 1)), ("--cuda-graph-sizes", (0, 10, 2)))
_CAPTURE_CAP = 512


def _capture_size(p: Plan, f: Finding) -> Recommendation | None:
    """Half the largest captured batch size, with the release's flag (only where the release is
    known to have it and its default is known)."""
    from observe.flags import known
    from observe.versions import parse_version

    v = parse_version(p.cfg.version)
    for flag, since in _CAPTURE_FLAGS:
        if v is None or v < since or not known.supported(flag, p.cfg):
            continue
        given = p.cfg.flags.get(flag)
        if isinstance(given, (list, tuple)):
            given = max((int(x) for x in given), default=None)
        if given is not None:
            cur, assumed = int(given), ""
        else:
            seqs, seqs_default = p.current("--max-num-seqs")
            if seqs is None:
                return None
            cur = min(2 * int(seqs), _CAPTURE_CAP)
            assumed = (
                f" (assuming vLLM's default min(2 × --max-num-seqs, {_CAPTURE_CAP}) = {cur}"
                + (f", --max-num-seqs being its default {seqs}" if seqs_default else "")
                + ")"
            )
        new = max(8, cur // 2 // 8 * 8)
        if new >= cur:
            return None
        r = p.make(
            flag,
            new,
            "vLLM captures a CUDA graph for every batch size up to this one, after the KV cache took its "
            "share: capture fewer" + assumed,
            [f.id],
            effect=f"graphs for decode batches up to {new} instead of {cur}: about half the graph memory; "
            "larger batches run without graphs (slower decode for them)",
        )
        return replace(r, current=cur, current_is_default=given is None) if r is not None else None
    return None


def _capture(p: Plan, f: Finding, m: _Mem) -> None:
    opts = [
        _eager(p, f),
        _capture_size(p, f),
        _lower_util(
            p, f, m, "the CUDA graphs are captured after the KV cache took its share: leave them room"
        ),
        _fewer_seqs(
            p, f, "vLLM captures a graph per batch size up to --max-num-seqs: fewer sizes, less memory"
        ),
    ]
    if p.add_any_of(opts) is None:
        _fallback(p, f, m, "run with --enforce-eager (no CUDA graphs), or lower --gpu-memory-utilization")


def _profile(p: Plan, f: Finding, m: _Mem) -> None:
    """The profile pass ran out. V0's (worker determine_num_available_blocks → model_runner.profile_run, 0.2 → 0.10)
    runs one eager batch: CUDA graphs are captured only after the KV cache is allocated, so --enforce-eager is no
    lever there."""
    v0 = p.cfg.engine == "v0"
    opts = [
        _fewer_tokens(
            p, f, "the profile run executes one batch of --max-num-batched-tokens: a smaller one peaks lower"
        ),
        None if v0 else _eager(p, f),
        _lower_util(p, f, m, "leave more of the GPU outside vLLM's budget for the profile's peak"),
    ]
    if p.add_any_of(opts) is None:
        weights = p.cfg.weights_gib
        _fallback(
            p,
            f,
            m,
            "lower --max-num-batched-tokens (the profile pass)"
            + ("" if v0 else ", run with --enforce-eager")
            + ", or lower --gpu-memory-utilization; the log does not give the values in force to size them"
            + (
                f"; the weights took {weights:.2f} GiB before it: if they fill most of the GPU, no flag of the "
                "profile helps — a quantized checkpoint or more GPUs (--tensor-parallel-size)"
                if weights and m.tried is not None and m.tried < 0.25
                else ""
            ),
        )


def _scaled(p: Plan, f: Finding, m: _Mem, flag: str, floor: int, why: str) -> Recommendation | None:
    """`flag` cut to the share of the failed allocation that fits what was free (the allocation grows
    with it: rows of the sampler's logits with --max-num-seqs, activations with the tokens a step)."""
    cur, is_default = p.current(flag)
    share = m.share()
    if cur is None or share is None:
        return None
    new = max(floor, int(int(cur) * share) // 8 * 8)
    if new >= int(cur):
        return None
    return p.make(
        flag,
        new,
        why + _assumed(is_default, cur),
        [f.id],
        effect=f"the {m.tried or 0:.2f} GiB allocation shrinks to ~{(m.tried or 0) * new / int(cur):.2f} GiB "
        f"({int(cur):,} → {new:,}); {m.free or 0:.2f} GiB was free",
    )


def _v0_seqs(p: Plan, f: Finding, m: _Mem, what: str) -> Recommendation | None:
    """A V0 engine whose --max-num-seqs the log does not show runs V0's default, whatever its release: the
    profile pass runs that many sequences, and a Mamba hybrid's state is allocated for that many (V0
    mamba_cache.py, 0.10: conv and temporal state of (layers, max_num_seqs, …)). Cut to the share that fits."""
    share = m.share()
    if p.cfg.engine != "v0" or p.cfg.flags_damaged or p.current("--max-num-seqs")[0] is not None or not share:
        return None
    v0_seqs = defaults.v0_max_num_seqs()  # V0's default in every release that has V0 (EngineArgs 0.1 → 0.10)
    new = max(8, int(v0_seqs * share) // 8 * 8)
    rec = p.make(
        "--max-num-seqs",
        new,
        f"first step: {what}, and with the sequences of one step: cut them to the share that fits (V0's "
        f"default {v0_seqs} assumed in force: the log does not show it)",
        [f.id],
        effect=f"{v0_seqs} → {new} sequences a step; {m.free or 0:.2f} GiB was free",
    )
    return None if rec is None else replace(rec, current=v0_seqs, current_is_default=True)


def _first_step(p: Plan, f: Finding, m: _Mem, flag: str, what: str, others: str) -> None:
    """No value in force and no default for the release: the first step relative to the value in force."""
    share = m.share() or 0.5
    p.note(
        [f.id],
        f"first step: {flag} to at most {int(share * 100)} % of the value in force ({what}; the log shows "
        f"neither the value nor the release, whose default it would be); then {others}",
    )


def _seqs_step(p: Plan, f: Finding, m: _Mem) -> Recommendation | None:
    """The sampler warm-up's OOM (V1 only) with neither the value in force nor the release: --max-num-seqs
    half the lowest V1 default on this GPU, below what ran whichever release it was (vLLM's own hint for it:
    "Please try lowering `max_num_seqs` or `gpu_memory_utilization`", gpu_model_runner.py 0.8 → 0.32)."""
    if p.current("--max-num-seqs")[0] is not None or m.share() is not None:
        return None  # the value in force, or the allocation's figures, size the step instead
    low = defaults.lowest_v1_max_num_seqs(m.total)
    new = max(8, low // 2)
    return p.make(
        "--max-num-seqs",
        new,
        f"first step: the sampler warm-up runs one row of logits per sequence, --max-num-seqs of them at once; "
        f"the log shows neither the value in force nor the release, so {new} is half of {low}, the lowest V1 "
        f"default on this GPU (if it was set below {low}, halve that instead); then a lower "
        "--gpu-memory-utilization (room outside the KV cache)",
        [f.id],
        effect=f"at most {new} sequences a step: the warm-up's logits shrink with them",
    )


def _one_large(p: Plan, f: Finding, m: _Mem, *, sampler: bool) -> None:
    """One allocation larger than all that was free, on a mostly free GPU: only a smaller batch helps;
    --enforce-eager and --gpu-memory-utilization leave that one tensor as large."""
    tried, free = m.tried or 0.0, m.free or 0.0
    flag = "--max-num-seqs" if sampler else "--max-num-batched-tokens"
    what = f"one allocation of {tried:.2f} GiB when {free:.2f} of {m.total or 0:.2f} GiB was free: " + (
        "the sampler's logits, one row per sequence" if sampler else "it grows with the tokens of one step"
    )
    if p.add_any_of([_scaled(p, f, m, flag, 8 if sampler else 256, what)]) is None:
        if not sampler:
            p.add_any_of([_v0_seqs(p, f, m, what)])
        _first_step(
            p,
            f,
            m,
            flag,
            what,
            "--max-model-len if a single prompt is that long; --enforce-eager and a lower "
            "--gpu-memory-utilization do not shrink one tensor larger than the free memory",
        )


def _after_kv(p: Plan, f: Finding, m: _Mem, *, sampler: bool, kv: bool = False) -> None:
    why = _PEAKS
    if kv:  # the profile sized the cache to the utilization; allocating it, less was free than measured
        why = "size the KV cache to what is really free (allocating it ran out: another process or a peak took the rest)"
    util = _lower_util(p, f, m, why) or (_kv_step(p, f, m, why) if kv else None)
    seqs = _fewer_seqs(p, f, "the sampler warm-up runs --max-num-seqs sequences at once: fewer peak lower")
    tokens = _fewer_tokens(p, f, "a smaller batch of prefill tokens lowers the activation peak")
    opts = [seqs, util, tokens] if sampler else [util, tokens, seqs]
    if p.add_any_of(opts) is not None:
        return
    lack = m.lacked()
    if sampler:
        if p.add_any_of([_seqs_step(p, f, m)]) is not None:
            return
        what = f"the sampler's logits are one row per sequence; {m.tried or 0:.2f} GiB was asked, {m.free or 0:.2f} free"
        _first_step(
            p, f, m, "--max-num-seqs", what, "a lower --gpu-memory-utilization (room outside the KV cache)"
        )
    elif lack is not None and m.total:
        if p.add_any_of([_util_step(p, f, m, lack, why)]) is not None:
            return
        step = _util_margin(m, lack)
        p.note(
            [f.id],
            f"first step: --gpu-memory-utilization {step:g} below the value in force (the failed allocation "
            f"lacked {lack:.2f} of {m.total:.2f} GiB{m.reading()}; the log shows neither the value nor the release, "
            "whose default it would be); if it recurs, halve --max-num-batched-tokens or --max-num-seqs "
            "(smaller peaks), or add GPUs (--tensor-parallel-size)",
        )
    else:
        _fallback(
            p,
            f,
            m,
            "first step: halve --max-num-batched-tokens (the activation peak roughly halves; the log shows no "
            "memory figures, no value in force and no release); then lower --gpu-memory-utilization or "
            "--max-num-seqs, or more GPUs (--tensor-parallel-size)",
        )
