"""V0's KV-cache size check, its exception line cut off: the launch refused because the cache cannot hold
one request of ``--max-model-len`` tokens. Pure.

``Worker.initialize_cache`` (V0 worker.py, 0.4 → 0.10; read in the 0.4.1 and 0.5.0.post1 wheels) first calls
``raise_if_cache_size_invalid(num_gpu_blocks, block_size, max_model_len)``, which raises one of two errors
only: "No available memory for the cache blocks" (no GPU blocks) or "The model's max seq len (N) is larger
than the maximum number of tokens that can be stored in KV cache (M)". Then it allocates the cache and warms
the model up (CUDA graphs). So:

* a traceback cut at that check's call or frame (``parse.phaseframes.KV_CHECK``) is that refusal: the KV cache
  holds fewer tokens than ``--max-model-len`` (none at all in the first error's case); the number of GPU
  blocks, when the log prints it, says which;
* a worker failing in ``initialize_cache`` right after V0's "# GPU blocks: N" (N > 0), its exception cut
  off, is most likely the second error (N × the block size tokens against the model's length), and the
  finding says so — the cut exception line confirms it, or names the allocation or the graph capture.

Neither is read when the log holds the exception line or any specific failure (the parser's own reading of
that line is the finding then).
"""

from __future__ import annotations

from observe.failures import failing
from observe.failures.kinds import FailureKind
from observe.findingids import FindingId
from observe.model import Finding
from observe.parse.phaseframes import KV_CHECK
from observe.rules.base import Rule
from observe.rules.context import Context

_WHAT = (
    "\"The model's max seq len (N) is larger than the maximum number of tokens that can be stored in KV cache"
    ' (M)"'
)


def kv_check_cut(c: Context) -> list[Finding]:
    """The KV size check refused the launch, its exception line cut off. Data: kv_tokens and
    max_model_len_fits (the KV tokens, when the log prints the GPU blocks; else None), max_model_len (in
    force, when shown), num_gpu_blocks, certain (the check's own frame was read, not only the method),
    cause_cut_off (True)."""
    s, cfg = c.summary, c.config
    if failing.root_cause(s.errors) is not None or s.stats_last_ts is not None:
        return []  # an exception line or a specific failure tells; or the engine had served
    check = next(
        (e for e in s.errors if e.kind == FailureKind.ERROR_LINE and e.details.get("frame") == KV_CHECK), None
    )
    method = next(
        (
            e
            for e in s.errors
            if e.kind == FailureKind.WORKER_EXCEPTION and e.details.get("method") == "initialize_cache"
        ),
        None,
    )
    blocks, tokens = cfg.num_gpu_blocks, cfg.kv_cache_tokens
    if blocks is not None and blocks <= 0:
        return []  # "# GPU blocks: 0" is no_kv_cache_memory already
    e = check or (method if blocks and tokens else None)
    if e is None:
        return []
    cap = f"{tokens:,} tokens ({blocks:,} blocks)" if blocks and tokens else None
    if check is not None:
        title = "Engine refused to start: --max-model-len does not fit the KV cache (vLLM's KV size check)"
        ev = (
            f"the traceback is cut inside vLLM's KV-cache size check ({KV_CHECK}, the first step of V0's "
            "initialize_cache), which raises only when the cache cannot hold one request of --max-model-len "
            + (
                f"tokens: the log shows {cap}, so --max-model-len is above {tokens:,}"
                if cap
                else 'tokens (or holds none: "No available memory for the cache blocks"); the "# GPU blocks" '
                "line or the exception line, cut off here, gives the numbers"
            )
        )
    else:
        title = f"Engine refused to start: --max-model-len likely exceeds the KV cache ({tokens:,} tokens)"
        ev = (
            f"a worker raised in initialize_cache right after the KV cache was sized at {cap}: its first step "
            f"refuses a --max-model-len above {tokens:,} ({_WHAT}); the exception line is cut off — it confirms "
            "this, or names the cache allocation or CUDA-graph capture initialize_cache runs next"
        )
    return [
        Finding(
            id=FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,
            severity="critical",
            title=title,
            evidence=ev,
            start=e.env.ts,
            end=e.env.ts,
            where=f"{e.env.source}:{e.env.lineno}",
            data={
                "kv_tokens": tokens if cap else None,
                "max_model_len": cfg.max_model_len,
                "max_model_len_fits": tokens if cap else None,
                "fits_from": "kv_tokens" if cap else None,
                "num_gpu_blocks": blocks,
                "certain": check is not None,
                "cause_cut_off": True,
            },
        )
    ]


KV_CHECK_CUT = Rule(
    family="startup and failures",
    detect=kv_check_cut,
    needs=("errors", "startup facts"),
    also=(FindingId.MAX_MODEL_LEN_EXCEEDS_KV_CACHE,),
)
