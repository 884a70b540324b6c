"""The tuning board (``observe-vllm-tuning``): tokens per engine step against
``--max-num-batched-tokens`` (the ``$max_num_batched_tokens`` variable, BUDGET), TPOT, time per
request phase (queue, prefill, decode, inference), finish reasons, request sizes."""

from __future__ import annotations

import grafanalib.core as g

from observe.metrics import names
from observe.monitoring.dashboards.common import (
    _dashboard,
    _heatmap,
    _hq,
    _mean,
    _place,
    _quantiles,
    _rate,
    _ratio,
    _stat,
    _t,
    _ts,
)

BUDGET = g.Template(
    name="max_num_batched_tokens",
    label="--max-num-batched-tokens",
    type="textbox",
    query="8192",
    default="8192",
)


def tuning() -> g.Dashboard:
    steps = names.ITERATION_TOKENS_TOTAL
    panels = [
        (
            6,
            5,
            _stat(
                "Tokens per engine step (mean)",
                "Prompt + generation tokens scheduled per engine step. Far below "
                "--max-num-batched-tokens while requests wait: the batch is bound by --max-num-seqs or the KV "
                "cache, not the token budget.",
                _mean(steps, ""),
                "short",
                decimals=0,
            ),
        ),
        (
            6,
            5,
            _stat(
                "Mean TPOT",
                "Mean time per output token over requests (decode speed one user sees). High with a large "
                "running batch: lower --max-num-seqs for faster streams, or add replicas.",
                _mean(names.REQUEST_TIME_PER_OUTPUT_TOKEN_SECONDS, ""),
                "s",
                decimals=3,
            ),
        ),
        (
            6,
            5,
            _stat(
                "Mean queue time",
                "Mean time requests waited before being scheduled. Any sustained queue time: the server "
                "is over capacity; add replicas or shrink requests.",
                _mean(names.REQUEST_QUEUE_TIME_SECONDS, ""),
                "s",
                decimals=2,
                thresholds=[("green", None), ("orange", 0.5), ("red", 5)],
            ),
        ),
        (
            6,
            5,
            _stat(
                "Share of requests cut by max_tokens",
                "Finished requests with finished_reason=length. High: clients' max_tokens (or "
                "--max-model-len) cut answers short; raise them if the answers are needed.",
                _ratio(
                    _rate(names.REQUEST_SUCCESS_TOTAL, "", 'finished_reason="length"'),
                    _rate(names.REQUEST_SUCCESS_TOTAL),
                ),
                "percentunit",
                decimals=1,
                thresholds=[("green", None), ("orange", 0.1), ("red", 0.3)],
            ),
        ),
        (
            12,
            8,
            _ts(
                "Tokens per engine step vs --max-num-batched-tokens",
                f"Quantiles of tokens per engine step ({names.ITERATION_TOKENS_TOTAL}) against the step budget "
                "(set the variable to your --max-num-batched-tokens). p99 at the budget: long prefills are "
                "chunked and fill steps (raise the budget for throughput, lower it for smoother ITL); p99 far "
                "below it: the budget is not the limit.",
                [
                    _t(_hq(0.5, steps, "instance"), "p50 {{instance}}"),
                    _t(_hq(0.99, steps, "instance"), "p99 {{instance}}", "B"),
                    _t(_mean(steps, "instance"), "mean {{instance}}", "C"),
                    _t("vector($max_num_batched_tokens)", "--max-num-batched-tokens", "D"),
                ],
                "short",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Time per output token per request (p50 / p90 / p99)",
                f"TPOT: each request's mean time per output token ({names.REQUEST_TIME_PER_OUTPUT_TOKEN_SECONDS}, "
                "vLLM from ≈0.11; older versions: the inter-token latency panel on the overview). Grows with "
                "the decode batch: lower --max-num-seqs for faster streams.",
                _quantiles(names.REQUEST_TIME_PER_OUTPUT_TOKEN_SECONDS),
                "s",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Time per request phase (mean)",
                "Where a request's time goes: queued, prefill, decode, and inference (prefill + decode). "
                "Queue dominating: add capacity; prefill dominating: long prompts (chunked prefill, prefix "
                "caching); decode dominating: long outputs or a large decode batch.",
                [
                    _t(_mean(names.REQUEST_QUEUE_TIME_SECONDS, "instance"), "queue {{instance}}"),
                    _t(_mean(names.REQUEST_PREFILL_TIME_SECONDS, "instance"), "prefill {{instance}}", "B"),
                    _t(_mean(names.REQUEST_DECODE_TIME_SECONDS, "instance"), "decode {{instance}}", "C"),
                    _t(
                        _mean(names.REQUEST_INFERENCE_TIME_SECONDS, "instance"),
                        "inference {{instance}}",
                        "D",
                    ),
                ],
                "s",
            ),
        ),
        (
            12,
            8,
            _ts(
                "Finish reasons (share of finished requests)",
                f"Why requests ended ({names.REQUEST_SUCCESS_TOTAL} by finished_reason): stop = the model "
                "finished; length = max_tokens or --max-model-len cut it; abort = the client left (often "
                "after long queues); error: read the engine log.",
                [
                    _t(
                        f"({_rate(names.REQUEST_SUCCESS_TOTAL, 'finished_reason')})\n/ on () group_left ()\n"
                        f"(({_rate(names.REQUEST_SUCCESS_TOTAL)}) > 0)",
                        "{{finished_reason}}",
                    )
                ],
                "percentunit",
                valueMin=0,
                valueMax=1,
            ),
        ),
        (
            12,
            8,
            _ts(
                "Request sizes (p50 / p99 tokens)",
                "Prompt and generated tokens per request. p99 prompt + output far below --max-model-len: "
                "lower it to give the KV cache more concurrent requests; near it: requests are cut.",
                [
                    _t(_hq(0.5, names.REQUEST_PROMPT_TOKENS, "instance"), "prompt p50 {{instance}}"),
                    _t(_hq(0.99, names.REQUEST_PROMPT_TOKENS, "instance"), "prompt p99 {{instance}}", "B"),
                    _t(_hq(0.5, names.REQUEST_GENERATION_TOKENS, "instance"), "output p50 {{instance}}", "C"),
                    _t(
                        _hq(0.99, names.REQUEST_GENERATION_TOKENS, "instance"),
                        "output p99 {{instance}}",
                        "D",
                    ),
                ],
                "short",
            ),
        ),
        (
            12,
            8,
            _heatmap(
                "Tokens per engine step distribution",
                "Engine steps per token-count bucket over time. A band at the top bucket below the "
                "budget: steps are full; two bands: prefill-heavy and decode-only steps alternate "
                "(chunked prefill mixes them).",
                steps,
            ),
        ),
    ]
    return _dashboard(
        "tuning",
        "vLLM / Tuning (observe)",
        "What to change in vLLM's flags: step budget, TPOT, where request time goes, finish reasons.",
        _place(panels),
        (BUDGET,),
    )
