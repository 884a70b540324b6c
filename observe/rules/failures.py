"""The engine did not start, failed or died, or rejected requests: one finding per failure kind
the log reports, and (observe.failures.failing) the engine that died and the catch-all; the launch vLLM
refused is observe.rules.refused's. Pure.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from observe.advise import oom, start
from observe.capacity import defaults
from observe.failures import failing
from observe.failures.kinds import (
    KINDS,
    KV_KINDS,
    REJECT_KINDS,
    FailureKind,
    failed_start,
)
from observe.findingids import FindingId
from observe.model import EngineConfig, Finding
from observe.quote import quote
from observe.rules import busyloop
from observe.rules.base import Doc, Rule, Section, on
from observe.rules.context import Context

#: failure kind → (finding, severity, title) of the finding engine_errors() builds from its event
_ERROR_FINDINGS = {k: (v.findings[0], v.severity, v.title) for k, v in KINDS.items() if v.title}


def _round(tokens: int, cfg: EngineConfig) -> int:
    bs = int(cfg.block_size or defaults.block_size(cfg.version, engine=cfg.engine))
    return tokens // bs * bs


def kv_fit(errors: Sequence[Any], cfg: EngineConfig) -> dict[str, Any]:
    """What the "KV cache too small for one request" messages say, merged over their pieces (a
    wrapped or cut traceback gives its numbers on several lines), and the largest --max-model-len
    that fits: vLLM's own estimate when it printed one; else the KV-cache tokens (V0's form gives
    them); else the requested length scaled by available / needed GiB (KV memory grows linearly with
    the length), rounded down to a multiple of the block size. Keys: max_model_len, needed_gib, available_gib,
    kv_tokens, estimated_max_model_len (as printed), max_model_len_fits, fits_from
    ("vllm_estimate" | "kv_tokens" | "ratio" | None)."""
    d: dict[str, Any] = {}
    for e in errors:
        if e.kind not in KV_KINDS:
            continue
        x = e.details
        for key, src in (
            ("max_model_len", "max_model_len"),
            ("max_model_len", "max_seq_len"),
            ("needed_gib", "kv_needed_gib"),
            ("available_gib", "kv_available_gib"),
            ("kv_tokens", "kv_tokens"),
            ("estimated_max_model_len", "estimated_max_model_len"),
        ):
            if d.get(key) is None and x.get(src) is not None:
                d[key] = x[src]
    if not d:
        return {}
    if d.get("max_model_len") is None and cfg.max_model_len:
        d["max_model_len"] = cfg.max_model_len
    fits, how = None, None
    if d.get("estimated_max_model_len"):
        fits, how = int(d["estimated_max_model_len"]), "vllm_estimate"
    elif d.get("kv_tokens"):
        fits, how = int(d["kv_tokens"]), "kv_tokens"
    elif d.get("needed_gib") and d.get("available_gib") is not None and d.get("max_model_len"):
        if d["available_gib"] <= 0:
            fits, how = 0, "ratio"
        else:
            fits, how = _round(int(d["max_model_len"] * d["available_gib"] / d["needed_gib"]), cfg), "ratio"
    d["max_model_len_fits"] = fits
    d["fits_from"] = how
    return d


def _chunked_prefill_off(cfg: EngineConfig) -> bool | None:
    v = cfg.flags.get("--enable-chunked-prefill")
    if v is None:
        return None
    return v is False or str(v).lower() == "false"


def _hints_in(hints: Sequence[dict], message: str) -> list[dict]:
    return [
        {"flag": h["flag"], "direction": h["direction"], "value": h["value"], "text": h["text"]}
        for h in hints
        if h.get("text") and h["text"] in message
    ]


_FRAMED = frozenset({"loading_weights", "profiling", "kv_cache_init", "cuda_graph_capture"})


def _oom_phase(c: Context, e: Any) -> str | None:
    """Where the engine was when it ran out of memory: loading_weights, profiling, kv_cache_init,
    cuda_graph_capture, warmup, sampler_warmup or serving (None: the excerpt does not say)."""
    if e.details.get("phase"):
        return str(e.details["phase"])
    if any(
        x.kind == FailureKind.WORKER_EXCEPTION and x.details.get("method") == "load_model"
        for x in c.summary.errors
    ):
        return "loading_weights"
    phases = c.summary.oom_phases
    if phases and phases[0] is not None:
        return phases[0]
    # a traceback cut above vLLM's own re-raise: the last start-up frame before the OOM (``_init_cache_engine``,
    # ``profile_run``, ``capture_model``, a loader's) names where it ran out
    errs = c.summary.errors
    before = errs[: errs.index(e)] if e in errs else errs
    framed = [
        x.details["phase"] for x in before if x.details.get("cut") and x.details.get("phase") in _FRAMED
    ]
    return framed[-1] if framed else None


def _utilization_hint(hints: list[dict[str, Any]]) -> float | None:
    """The --gpu-memory-utilization vLLM named itself in a message of the log (its highest), if any."""
    vals = [
        float(h["value"])
        for h in hints
        if h.get("flag") == "--gpu-memory-utilization"
        and h.get("direction") == "up"
        and isinstance(h.get("value"), (int, float))
    ]
    return max(vals) if vals else None


def engine_errors(c: Context) -> list[Finding]:
    """One finding per failure kind the log reports. Data besides the error's own details (and kind,
    count): ``hints`` [{flag, direction, value, text}] vLLM printed in that message; for
    max_model_len_exceeds_kv_cache the merged kv_fit() keys (max_model_len_fits, needed_gib,
    available_gib, kv_tokens, fits_from); for no_kv_cache_memory max_model_len_fits 0; for cuda_oom
    ``phase`` (see _oom_phase), ``pytorch_allocated_gib``, ``reserved_unallocated_gib`` and
    ``fragmentation`` (reserved-but-unallocated ≥ Settings.oom_fragmentation_gib and ≥ the failed
    allocation: expandable segments would have served it); for prompt_too_long prompt_tokens,
    limit, ``max_prompt_tokens`` (the longest rejected) and ``chunked_prefill_off`` (True / False /
    None: unknown); for engine_error / engine_startup_failed ``root_cause`` (see failing.root_cause())."""
    s, cfg, th = c.summary, c.config, c.settings
    out: dict[str, Finding] = {}
    crashed = any(x.kind == FailureKind.ENGINE_CRASHED for x in s.errors)
    cause = failing.root_cause(s.errors)
    refused = cause is not None and cause["kind"] in REJECT_KINDS  # that refusal has its own finding
    for e in s.errors:
        spec = _ERROR_FINDINGS.get(e.kind)
        if spec is None or (crashed and e.details.get("engine_dead")):  # it had served: a crash, not a start
            continue
        fid, sev, title = spec
        # 0.8's shared "EngineCore hit an exception" over the busy loop's frames, or after serving: a crash
        served = busyloop.crash_while_serving(e, s.errors)
        if served is not None:
            fid, title = FindingId.ENGINE_ERROR, busyloop.TITLE
            e = dataclasses.replace(e, details={**e.details, "phase": "serving"})
        if failed_start(e, s.errors):
            if refused:  # a worker raised vLLM's refusal (V0's load_model check): one cause, one finding
                continue
            fid, title = (
                FindingId.ENGINE_STARTUP_FAILED,
                f"{KINDS[FailureKind.STARTUP_FAILED].title}: a worker raised",
            )
            title += f" in {e.details['method']}()" if e.details.get("method") else ""
        if fid in out:
            continue
        detail = ", ".join(
            f"{k}={v}"
            for k, v in e.details.items()
            if isinstance(v, (int, float, str)) and v != "" and k != "from_source"
        )
        count = s.error_kinds.get(e.kind, 1)
        ev = (
            quote(e.message, 500) + (f" [{detail}]" if detail else "") + (f" ({count}×)" if count > 1 else "")
        )
        if e.details.get("from_source"):
            ev += " (read from the source line that raises it, the traceback's innermost frame)"
        if served is not None:
            ev += served
        data = dict(e.details, kind=e.kind, count=count, hints=_hints_in(s.hints, e.message))
        if fid == FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE:
            fit = kv_fit(s.errors, cfg)
            data.update(fit)
            if fit.get("max_model_len_fits") is not None:
                ev += f". The largest --max-model-len that fits is {fit['max_model_len_fits']:,}" + (
                    " (vLLM's estimate)" if fit["fits_from"] == "vllm_estimate" else ""
                )
        elif fid == FindingId.NO_KV_CACHE_MEMORY:
            data["max_model_len_fits"] = 0
            data["utilization_hint"] = _utilization_hint(s.hints)
        kv = s.kv_by_worker.get(s.kv_worst_worker) if s.kv_worst_worker else None
        if fid in (FindingId.NO_KV_CACHE_MEMORY, FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE) and kv is not None:
            # several workers printed theirs: the worst decides
            data.update(worst_worker=s.kv_worst_worker, worst_worker_kv_gib=kv)
            ev += (
                f". The worst worker, {s.kv_worst_worker}, had {kv:g} GiB for the KV cache (the others more)"
            )
        elif fid == FindingId.CUDA_OOM:
            phase = _oom_phase(c, e)
            unalloc = e.details.get("reserved_unallocated_gib")
            tried = e.details.get("tried_to_allocate_gib")
            data.update(
                phase=phase,
                pytorch_allocated_gib=e.details.get("allocated_by_pytorch_gib"),
                reserved_unallocated_gib=unalloc,
                fragmentation=None
                if unalloc is None
                else bool(unalloc >= th.oom_fragmentation_gib and (tried is None or unalloc >= tried)),
            )
            if phase:
                title = f"Out of memory ({phase.replace('_', ' ')})"
        elif fid == FindingId.PROMPT_TOO_LONG:
            rej = [x for x in s.errors if x.kind == FailureKind.PROMPT_TOO_LONG]
            data["max_prompt_tokens"] = max(x.details.get("prompt_tokens") or 0 for x in rej) or None
            data["chunked_prefill_off"] = _chunked_prefill_off(cfg)
        elif fid in (FindingId.ENGINE_ERROR, FindingId.ENGINE_STARTUP_FAILED):
            data["root_cause"] = failing.root_cause(s.errors)
            if data["root_cause"]:
                rc = data["root_cause"]
                ev += f". Root cause: {rc['type'] + ': ' if rc['type'] else ''}{quote(rc['text'] or '', 300)}"
        out[fid] = Finding(
            id=fid,
            severity=sev,
            title=title,
            evidence=ev,
            start=e.env.ts,
            end=e.env.ts,
            where=f"{e.env.source}:{e.env.lineno}",
            data=data,
        )
    load_fail = any(
        e.kind == FailureKind.WORKER_EXCEPTION and e.details.get("method") == "load_model" for e in s.errors
    )
    if FindingId.CUDA_OOM in out and load_fail:
        f = out[FindingId.CUDA_OOM]
        out[FindingId.CUDA_OOM] = Finding(
            id=f.id,
            severity=f.severity,
            title="Out of memory while loading the weights",
            evidence=f.evidence + ". The weights alone do not fit: no KV-cache setting fixes this; "
            "split them over more GPUs (--tensor-parallel-size), use a quantized checkpoint, or offload "
            "(--cpu-offload-gb).",
            start=f.start,
            end=f.end,
            where=f.where,
            data=dict(f.data, phase="loading_weights"),
        )
    if (
        FindingId.CUDA_OOM in out
        and cfg.gpu_memory_utilization is not None
        and cfg.gpu_memory_utilization >= th.max_gpu_util
    ):
        out[FindingId.GPU_MEMORY_UTILIZATION_TOO_HIGH] = Finding(
            id=FindingId.GPU_MEMORY_UTILIZATION_TOO_HIGH,
            severity="critical",
            title="--gpu-memory-utilization leaves no headroom for peaks",
            evidence=(
                f"--gpu-memory-utilization is {cfg.gpu_memory_utilization} and the engine ran out of memory: "
                "activation peaks and CUDA graphs need room outside the KV cache"
            ),
            where=out[FindingId.CUDA_OOM].where,
            data={"gpu_memory_utilization": cfg.gpu_memory_utilization},
        )
    return list(out.values())


ENGINE_ERRORS = Rule(
    family="startup and failures",
    detect=engine_errors,
    docs=(
        Doc(
            FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,
            "critical",
            Section.NOT_STARTED,
            evidence=(
                'vLLM\'s "max seq len … larger than the KV cache" (V0 ≤ 0.6: `max_seq_len (N) is '
                "larger than the maximum number of tokens that can be stored in KV cache (M)`), "
                'V1 "`X GiB KV cache is needed, which is larger than the available KV cache '
                'memory (Y GiB)` … `estimated maximum model length is N`"; or KV tokens < `--max-'
                "model-len` from the startup facts; or a V0 traceback cut off inside the KV size check "
                "(`raise_if_cache_size_invalid`, which raises only these two refusals), or a worker failing in "
                "`initialize_cache` right after `# GPU blocks: N` (N > 0; titled likely: the cut exception "
                "line decides) — observe/rules/kvcheck.py"
            ),
            advice=(
                "any one of: `--max-model-len` = the largest length that fits (vLLM's estimate, "
                "else KV tokens, rounded down to the block size; requests longer are rejected); "
                "`--kv-cache-memory-bytes` grown by the missing factor when it is set; `--gpu-"
                "memory-utilization` raised by the missing GiB / total GiB (only when the GPU's "
                "total memory is known and the result ≤ `max_gpu_util`, 0.95); `--kv-cache-dtype fp8` (when 2× "
                "the tokens suffice; `fp8_e5m2` on vLLM {since:--kv-cache-dtype=fp8_e5m2}–{before:--kv-cache-dtype=fp8}, nothing before {since:--kv-cache-dtype=fp8_e5m2}); "
                "`--tensor-parallel-size` × the smallest power of two that holds one request (on "
                "a pipeline-parallel deployment also `--pipeline-parallel-size` × that, the GPU "
                "count counting the stages, and a note on `VLLM_PP_LAYER_PARTITION`). A length "
                "scaled from the message's rounded GiB figures is rounded down by their rounding "
                "margin (half the last printed digit of each) and says so. A lever that cannot "
                "fix it alone is not offered"
            ),
            versions="the V1 message (and its estimate) from 0.6; fp8 from {since:--kv-cache-dtype=fp8} ({since:--kv-cache-dtype=fp8_e5m2}\u2013{before:--kv-cache-dtype=fp8}: `fp8_e5m2` only)",
            role="cause",
            settings=("max_gpu_util",),
        ),
        Doc(
            FindingId.MAX_MODEL_LEN_EXCEEDS_MODEL,
            "critical",
            Section.NOT_STARTED,
            evidence='"User-specified max_model_len (N) is greater than the derived max_model_len"',
            advice=(
                "`--max-model-len` = the derived value; else a note (RoPE scaling or a longer-context model)"
            ),
            role="cause",
            settings=(),
        ),
        Doc(
            FindingId.NO_KV_CACHE_MEMORY,
            "critical",
            Section.NOT_STARTED,
            evidence=(
                '"No available memory for the cache blocks" (or its raising source line, a paste cut inside the '
                'traceback), V0\'s "# GPU blocks: 0" (-1 in 0.1.x)'
            ),
            advice=(
                "`--gpu-memory-utilization` = vLLM's default for the release ({defaults:--gpu-memory-utilization}) when it was set lower; otherwise a note: no "
                "memory figures in the log — raise the utilization, lower `--max-model-len` / "
                "`--max-num-batched-tokens` (smaller profile pass), more GPUs or a quantized "
                "checkpoint"
            ),
            role="cause",
            settings=(),
        ),
        Doc(
            FindingId.GPU_MEMORY_BUSY,
            "critical",
            Section.NOT_STARTED,
            evidence="free memory below `--gpu-memory-utilization` × total",
            advice=(
                "`--gpu-memory-utilization` = free / total − 0.02; when other processes hold most"
                ' of the GPU, a note "free the GPU" first, and the utilization only where the '
                "weights are known to fit what is left"
            ),
            versions="V1",
            role="cause",
            settings=(),
        ),
        Doc(
            FindingId.CUDA_OOM,
            "critical",
            Section.NOT_STARTED,
            evidence="`CUDA out of memory …`",
            advice=(
                "by phase (`observe/advise/oom.py`), sized from the message's total, free, this "
                "process's use and the failed allocation — loading the weights: more GPUs "
                "(`--tensor-parallel-size`, or `--pipeline-parallel-size` first on a pipeline "
                "deployment, × the power of two that fits what was loaded into 60 % of a GPU; "
                '"GPU n" in the message means at least n+1 GPUs already), a note (quantized '
                "checkpoint, smaller model, `--cpu-offload-gb`), never batch or utilization "
                "flags; CUDA-graph capture: any one of `--enforce-eager`, the largest captured "
                "batch halved (`--max-cudagraph-capture-size` from 0.11.1, `--cuda-graph-sizes` "
                "0.10.2–0.12.0; from vLLM's default min(2 × max_num_seqs, 512) when unset), "
                "`--gpu-memory-utilization` lowered, `--max-num-seqs` halved; the profile run: "
                "`--max-num-batched-tokens` halved, `--enforce-eager`, lower utilization; after "
                "the KV cache (warm-up, serving): `--gpu-memory-utilization` lowered by what the "
                "allocation lacked (+20 %), `--max-num-batched-tokens` / `--max-num-seqs` halved."
                " A value in force the log does not show is taken as the release's default and "
                'the reason says "assuming vLLM\'s default …"; with neither the value nor the release known, '
                "the utilization goes the step below the lowest default of any release (0.9), its value in "
                "force unknown. Other processes holding ≥ half the "
                'GPU: "free the GPU" first. A note when reserved-but-unallocated memory ≥ '
                "`oom_fragmentation_gib` (`PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True`)"
            ),
            role="cause",
            settings=("oom_fragmentation_gib",),
        ),
        Doc(
            FindingId.GPU_MEMORY_UTILIZATION_TOO_HIGH,
            "critical",
            Section.NOT_STARTED,
            evidence="an OOM with `--gpu-memory-utilization` ≥ `max_gpu_util` (0.95)",
            advice=(
                "answered with the OOM's levers (lower utilization); a note when the OOM was "
                "while loading weights"
            ),
            note=(
                "the out-of-memory happened where lowering --gpu-memory-utilization does not help"
                " (loading the weights): see the fix for the out-of-memory above"
            ),
            settings=("max_gpu_util",),
        ),
        Doc(
            FindingId.ENGINE_STARTUP_FAILED,
            "critical",
            Section.NOT_STARTED,
            evidence=(
                '"EngineCore failed to start"; a worker\'s exception ("Exception in worker … while processing '
                'method X", "Error executing method X") in a method run only at start-up (`init_device`, '
                "`load_model`, the KV sizing …: `failurekinds.STARTUP_METHODS`); a fatal traceback whose "
                "frames are start-up functions or that follows the start-up's loading / profiling lines; a "
                'worker\'s death ("Worker proc … died unexpectedly") while the frames put the engine in loading or '
                "profiling, when no other record says the start failed, or before any serving line beside the core's "
                'own failed construction (a traceback through run_engine_core\'s "engine_core = EngineCoreProc(…)"; '
                'with "EngineCore failed to start." that line alone is the finding, no crash beside it)'
            ),
            advice=(
                "a note: the failure is explained by another finding above (its fix makes the "
                "engine start), or the root cause the traceback names, or — when the log cut it "
                "off — keep the whole log to find the first exception. Cut off after the weights "
                "loaded, with no `--max-model-len` and a model whose name states a context over "
                "`long_context_len` (32,768) tokens (`-1048k`, `-1M`): `--max-model-len` that as a first step. "
                "Failed inside CUDA-graph capture (its frame `capture_model`, …): `--enforce-eager`"
            ),
            role="failure",
            label="`engine_startup_failed`, `engine_error` (critical)",
            settings=(),
        ),
        Doc(
            FindingId.PROMPT_TOO_LONG,
            "warning",
            Section.REJECTED,
            evidence='"Input prompt (N tokens) is too long and exceeds limit of L"',
            advice=(
                "`--max-model-len` = N rounded up to 1,024 (if the model's context and the KV "
                "cache allow); on V0 without chunked prefill also `--max-num-batched-tokens` ≥ "
                "that; a note: or truncate prompts client-side. When the KV cache cannot hold "
                "such a request: a note only"
            ),
            role="cause",
            settings=(),
        ),
    ),
    settings=(
        "oom_fragmentation_gib",
        "max_gpu_util",
        "long_context_len",
    ),
    needs=(
        "errors",
        "startup facts",
        "hints",
    ),
    levers=(
        on(FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE, 10, start.max_model_len_does_not_fit),
        on(FindingId.MAX_MODEL_LEN_EXCEEDS_MODEL, 11, start.model_len_over_model),
        on(FindingId.GPU_MEMORY_BUSY, 12, start.memory_busy),
        on(FindingId.CUDA_OOM, 13, oom.oom, also=(FindingId.GPU_MEMORY_UTILIZATION_TOO_HIGH,)),
        on(FindingId.NO_KV_CACHE_MEMORY, 14, start.no_kv_memory),
        on(FindingId.PROMPT_TOO_LONG, 15, start.prompt_too_long),
        on(FindingId.ENGINE_STARTUP_FAILED, 16, start.long_context_start),
        on(FindingId.ENGINE_STARTUP_FAILED, 17, start.graph_capture_start),
    ),
    also=(FindingId.ENGINE_ERROR,),
)


ENGINE_CRASHED = Rule(
    family="startup and failures",
    detect=failing.engine_crashed,
    also=(FindingId.ENGINE_STARTUP_FAILED,),  # a worker's death while the engine was being built
    docs=(
        Doc(
            FindingId.ENGINE_CRASHED,
            "critical",
            Section.FAILED,
            evidence=(
                'vLLM says its engine died unasked: "[shutdown] MPClient: engine core exited '
                'unexpectedly" (0.32), "Engine core proc EngineCore_0 died unexpectedly" (0.8 → '
                '0.11), "Worker proc … died unexpectedly (exit code: -9)" (0.32: the signal is '
                'named, here SIGKILL), "MQLLMEngine / AsyncLLMEngine is already dead" (0.6), '
                '"Engine loop has died", "Engine process (pid N) died" (V0), an `EngineDeadError`'
                " after serving or after vLLM's own clean-up began. After a requested stop (a "
                'signal, Ctrl-C, "shutdown triggered", uvicorn\'s "Shutting down") the same '
                "`EngineDeadError` is shutdown noise and stays quiet. Data: `cause`, `signal`, "
                "`process`, `exit_code`, `root_cause` (the exception before it)"
            ),
            advice=(
                "a note: the root cause the log shows; no launch flag restarts a killed engine "
                "(look at the OOM killer, the orchestrator's limits, who sent the signal)"
            ),
            role="failure",
        ),
    ),
    needs=("errors",),
)


ENGINE_ERROR = Rule(
    family="startup and failures",
    detect=failing.engine_error,
    docs=(
        Doc(
            FindingId.ENGINE_ERROR,
            "critical / warning",
            Section.FAILED,
            evidence=(
                "the catch-all: a traceback, an exception line or an ERROR / CRITICAL record that"
                " no specific finding explains. Data: `type` and `message` of the innermost "
                "exception of the chain (the first printed, not a wrapper such as "
                "`EngineDeadError`), `phase` (startup, loading, profiling, serving, shutdown; unknown for a cut traceback "
                "whose only frame runs both at start-up and while serving), "
                "`rank`, `count`; critical when the engine did not serve after it (a stats line, or the API "
                "server's start, after it) or requests "
                'failed (HTTP 5xx), else a warning. Also "Exception in worker …" (V0) outside '
                "start-up (`execute_model`) with its root cause"
            ),
            advice=(
                "a note: the root cause the traceback names, or keep the whole log to find the "
                "first exception"
            ),
            role="failure",
        ),
    ),
    needs=(
        "errors",
        "access log",
    ),
)
