"""Context length: a --max-model-len far above what requests use. Pure."""

from __future__ import annotations

from observe.advise import load
from observe.findingids import FindingId
from observe.metrics import names
from observe.model import Finding
from observe.rules.base import Doc, Rule, Section, on
from observe.rules.context import Context
from observe.rules.context import where as _where


def max_model_len_unused(c: Context) -> list[Finding]:
    cfg, s = c.config, c.summary
    used, source = c.request_length()
    if not cfg.max_model_len or not used or s.samples < 3:
        return []
    if cfg.max_model_len < c.settings.max_model_len_slack * used or cfg.max_model_len <= 4096:
        return []
    return [
        Finding(
            id=FindingId.MAX_MODEL_LEN_UNUSED,
            severity="info",
            title="--max-model-len far above what requests use",
            evidence=(
                f"--max-model-len is {cfg.max_model_len:,} but "
                + (
                    f"the KV cache held at most {used:,.0f} tokens per running request ({s.samples} samples)"
                    if source and "stats" in source
                    else f"requests used {used:,.0f} tokens on average ({source})"
                )
            ),
            where=_where(s),
            data={
                "max_model_len": cfg.max_model_len,
                "max_tokens_per_request": round(used),
                "length_source": source,
            },
        )
    ]


# ---------------------------------------------------------------- the rules

MAX_MODEL_LEN_UNUSED = Rule(
    family="context length",
    detect=max_model_len_unused,
    docs=(
        Doc(
            FindingId.MAX_MODEL_LEN_UNUSED,
            "info",
            Section.INFO,
            evidence="`--max-model-len` ≥ `max_model_len_slack` × the longest request seen",
            advice=(
                "`--max-model-len` = the power of two ≥ 1.25 × that length (at least 2,048), "
                "saying how many of the requests seen it rejects: from the `/metrics` histograms "
                f'`{names.REQUEST_PROMPT_TOKENS}` and `{names.REQUEST_GENERATION_TOKENS}`, "0 of N", "K '
                'of N", or "between K and M of N" (the two lengths are counted apart); doubled '
                "while requests seen are known to be longer"
            ),
        ),
    ),
    settings=("max_model_len_slack",),
    needs=(
        "stats",
        "metrics",
    ),
    levers=(on(FindingId.MAX_MODEL_LEN_UNUSED, 70, load.unused_context),),
)
