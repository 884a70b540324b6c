"""A launch vLLM rejected while validating its arguments or config: quote vLLM's reason and
recommend the value that passes its check (any one of the levers makes the launch pass). Where the
reason gives no number to pass, say so; the pasted command then leaves the rejected flag out
(vLLM's default applies) instead of repeating a value vLLM just refused. Pure.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import replace
from typing import Any

from observe import versions
from observe.advise.plan import Plan
from observe.findingids import FindingId
from observe.flags import cmdline, known, vllmflags
from observe.model import Finding, Recommendation

_Lever = Callable[[Plan, Finding, re.Match[str]], Sequence[Recommendation | None]]


def _said(f: Finding) -> str:
    return f'vLLM refused the launch: "{f.data.get("text") or f.evidence}"'


def _tokens_below_seqs(p: Plan, f: Finding, m: re.Match[str]) -> Sequence[Recommendation | None]:
    tokens, seqs = int(m.group(1)), int(m.group(2))
    # the least value that passes would start an engine that prefills a few tokens a step: offer the
    # release's own default where it passes too (and is known), else that least value
    d = known.default("--max-num-batched-tokens", p.cfg, known.gpu_name(p.cfg))
    good = d if isinstance(d, int) and not isinstance(d, bool) and d >= seqs else seqs
    why = f"vLLM's default for this release, {good:,}" if good != seqs else f"{good:,}"
    return [
        p.make(
            "--max-num-batched-tokens",
            good,
            _said(f),
            [f.id],
            effect=f"passes vLLM's check (max_num_batched_tokens {why} ≥ max_num_seqs {seqs:,}): the engine starts",
        ),
        p.make(
            "--max-num-seqs",
            tokens,
            _said(f),
            [f.id],
            effect=f"passes vLLM's check (max_num_seqs {tokens:,} ≤ max_num_batched_tokens {tokens:,}): the engine "
            f"starts with at most {tokens:,} sequences a step",
        ),
    ]


def _tokens_below_len(p: Plan, f: Finding, m: re.Match[str]) -> Sequence[Recommendation | None]:
    return _below_len(p, f, int(m.group(1)), int(m.group(2)), _said(f))


def _below_len(p: Plan, f: Finding, tokens: int, length: int, said: str) -> Sequence[Recommendation | None]:
    """SchedulerConfig's "max_num_batched_tokens (tokens) is smaller than max_model_len (length)": each lever passes."""
    return [
        p.make(
            "--max-num-batched-tokens",
            length,
            said,
            [f.id],
            effect=f"passes vLLM's check (max_num_batched_tokens {length:,} ≥ max_model_len {length:,}): a whole "
            "prompt fits one step",
        ),
        p.make(
            "--enable-chunked-prefill",
            True,
            said,
            [f.id],
            effect="passes vLLM's check: long prompts are prefilled in chunks of max_num_batched_tokens",
        ),
        p.make(
            "--max-model-len",
            tokens,
            said,
            [f.id],
            effect=f"passes vLLM's check; requests longer than {tokens:,} tokens are rejected",
        ),
    ]


def _parsed_below_len(p: Plan, f: Finding) -> bool:
    """The batched-tokens check's numbers as the parser read them (parse.failures ``_batched_below_len``), when the
    finding's quoted text does not hold them (pydantic's header quoted instead, or a line redacted whole)."""
    tokens, length = f.data.get("max_num_batched_tokens"), f.data.get("max_model_len")
    if not (isinstance(tokens, int) and isinstance(length, int)):
        return False
    said = f'vLLM refused the launch: "max_num_batched_tokens ({tokens}) is smaller than max_model_len ({length})"'
    return p.add_any_of(_below_len(p, f, tokens, length, said)) is not None


def _lora_rank(p: Plan, f: Finding, m: re.Match[str]) -> Sequence[Recommendation | None]:
    """An adapter of rank R refused by max_lora_rank: the least rank ≥ R that vLLM accepts (its fixed list:
    this release's where the flag table knows it, else the values every read release accepts)."""
    rank = int(m.group(1))
    allowed = vllmflags.choices("--max-lora-rank", p.cfg.version) or vllmflags.choices(
        "--max-lora-rank", None
    )
    for good in sorted(x for x in allowed or () if isinstance(x, int) and x >= rank):
        r = p.make(
            "--max-lora-rank",
            good,
            _said(f),
            [f.id],
            effect=f"passes vLLM's check (LoRA rank {rank} ≤ max_lora_rank {good}): the adapter loads; vLLM "
            "sizes its LoRA buffers by this rank, so they take more GPU memory",
        )
        if r is not None:
            return [r]
    return []


# vLLM's config checks with numbers in their reason (vllm/config/scheduler.py, SchedulerConfig; the LoRA
# adapter's rank, vllm/lora/worker_manager.py 0.3 → peft_helper.py 0.32)
_RULES: tuple[tuple[re.Pattern[str], _Lever], ...] = (
    (
        re.compile(
            r"max_num_batched_tokens \((\d+)\) must be greater than or equal to max_num_seqs \((\d+)\)"
        ),
        _tokens_below_seqs,
    ),
    (
        re.compile(r"max_num_batched_tokens \((\d+)\) is smaller than max_model_len \((\d+)\)"),
        _tokens_below_len,
    ),
    (re.compile(r"LoRA rank (\d+) is greater than max_lora_rank (\d+)"), _lora_rank),
)


def _no_scheduled(p: Plan, f: Finding, n: int) -> None:
    """With speculative decoding, vLLM 0.26 schedules max_num_batched_tokens less the drafting slots it sets aside
    (max_num_new_slots_for_drafting × max_num_seqs) each step and refuses n ≤ 0 left: the slots set aside are the
    token budget in force less n. With that budget shown, --max-num-batched-tokens raised by the slots set aside keeps
    it as the step's budget (never the value in force: it grows by more than the budget); else a note names vLLM's
    levers and the least raise that passes (1 − n). GPU memory plays no part."""
    said = _said(f)
    alts = "lower --max-num-seqs or num_speculative_tokens in --speculative-config"
    tokens = cmdline.in_force(p.cfg, "--max-num-batched-tokens")
    if isinstance(tokens, int) and not isinstance(tokens, bool) and tokens > 0:
        aside = tokens - n
        r = p.make(
            "--max-num-batched-tokens",
            tokens + aside,
            said,
            [f.id],
            effect=f"passes vLLM's check: the {aside:,} drafting slots it sets aside leave {tokens:,} tokens to "
            "schedule each step, the budget this launch had",
        )
        if p.add_any_of([r]) is not None:
            p.note([f.id], f"{said}: instead of the larger token budget, {alts}")
            return
    p.note(
        [f.id],
        f"{said}: with speculative decoding vLLM sets aside max_num_seqs × the drafting slots of one request "
        "(num_speculative_tokens for DFlash) out of --max-num-batched-tokens, and what is left to schedule each step, "
        f"{n:,}, must be above 0: raise --max-num-batched-tokens by at least {1 - n:,} over the value in force (to "
        f"twice that value + {-n:,} to keep it as the step's budget), or {alts}; no memory flag plays a part",
    )


# sampling parameters: vLLM takes them per request (SamplingParams), never as a server flag; as the
# server's defaults, `--generation-config FOLDER` (a generation_config.json) from 0.7.0 and
# `--override-generation-config '{"temperature": 0.8}'` from 0.7.1 (vllm/engine/arg_utils.py, wheels 0.6.5 →
# 0.7.0 → 0.7.1); the key is generation config's (ModelConfig.get_diff_sampling_param's available_params)
_SAMPLING = {
    "--temperature": "temperature",
    "--top-p": "top_p",
    "--top-k": "top_k",
    "--min-p": "min_p",
    "--repetition-penalty": "repetition_penalty",
    "--presence-penalty": "presence_penalty",
    "--frequency-penalty": "frequency_penalty",
    "--max-tokens": "max_new_tokens",
    "--max-new-tokens": "max_new_tokens",
}
_GEN_CONFIG, _OVERRIDE_GEN_CONFIG = "0.7.0", "0.7.1"


def _unrecognized(p: Plan, f: Finding, flag: str, text: str) -> str:
    """An unknown flag: remove it, and say where a sampling parameter belongs in this release."""
    after = text.split(flag, 1)[1].split() if flag in text else []
    value = after[0] if after and not after[0].startswith("-") else None
    out = f"{_said(f)}: this vLLM has no {flag} flag: remove it" + (
        f" and its value {value}" if value else ""
    )
    key = _SAMPLING.get(flag.replace("_", "-"))
    if key is None:
        return out + " (the command below leaves it out)"
    field = key.replace("max_new_tokens", "max_tokens")
    shown = value if value is not None else "…"
    out += f'; {flag} is a sampling parameter: send it with each request ("{field}": {shown})'
    rng = p.cfg.version_range
    override = versions.available(rng, _OVERRIDE_GEN_CONFIG)
    folder = versions.available(rng, _GEN_CONFIG)
    if override is not False:
        out += f", or make it the server's default with --override-generation-config '{{\"{key}\": {shown}}}'"
        out += f" ({_OVERRIDE_GEN_CONFIG} →)" if override is None else ""
    elif folder is not False:
        out += f', or set "{key}" in a generation_config.json and launch with --generation-config FOLDER'
    return out


def _mamba_blocks(p: Plan, f: Finding, seqs: int, blocks: int) -> None:
    """A hybrid model's "max_num_seqs (seqs) exceeds available Mamba cache blocks (blocks)" (parse.mambacap): one
    state block per decode sequence, so --max-num-seqs at most ``blocks`` (vLLM's own bound, never above it) passes;
    vLLM's other lever, more GPU memory for the KV / Mamba cache, is said alongside (how much is not in the log)."""
    said = f'vLLM refused the launch: "max_num_seqs ({seqs}) exceeds available Mamba cache blocks ({blocks})"'
    alt = "raise --gpu-memory-utilization (vLLM's other lever: more memory for the KV and Mamba cache, so more blocks)"
    r = p.make(
        "--max-num-seqs",
        blocks,
        said,
        [f.id],
        effect=f"passes vLLM's check (max_num_seqs {blocks:,} ≤ the {blocks:,} Mamba cache blocks, one per decode "
        f"sequence): the engine starts with at most {blocks:,} sequences a step",
    )
    if r is not None and r.current is None:  # the refusal itself names the value in force
        r = replace(r, current=seqs, current_is_default=False)
    if p.add_any_of([r]) is not None:
        p.note([f.id], f"{said}: instead of the lower sequence cap, {alt}")
        return
    p.note([f.id], f"{said}: lower --max-num-seqs to at most {blocks:,} (vLLM's bound), or {alt}")


def launch_rejected(p: Plan, f: Finding) -> None:
    text = str(f.data.get("text") or f.evidence or "")
    if text.startswith("usage: ") and not f.data.get("flag"):  # the usage block alone, its error line cut
        prog = text.split()[1] if len(text.split()) > 1 else "the program"
        p.note(
            [f.id],
            "vLLM's argument parser refused the command line: argparse prints this usage block only when it "
            f'rejects the arguments (or for -h), then a "{prog}: error: …" line, which this excerpt cuts off. '
            "That error line (the rest of the output) decides which flag or value to correct; no flag is "
            "suggested without it",
        )
        return
    if f.data.get("reason") == "model_option":  # parse.servemodel: the command line's shape, no flag value
        p.note(
            [f.id],
            f"{_said(f)}: pass the model as the positional argument: `vllm serve <model> …` (the model right after "
            "`serve`, `--model` and its value removed), or as `model:` in the --config file; a command-line change, "
            "not a flag value (vLLM refuses this at argument parsing, before any engine starts)",
        )
        return
    if f.data.get("reason") == "gpu_capability" and f.data.get("dtype") == "bfloat16":
        _bf16(p, f)
        return
    if f.data.get("reason") == "gpu_capability":  # vLLM's check of the GPU against the quantization method
        p.note(
            [f.id],
            f"{_said(f)}: no launch flag lowers the compute capability a quantization method needs (and "
            "--gpu-memory-utilization or the batch size play no part): run on a GPU of at least that capability, "
            "or serve an unquantized model or one in a quantization method this GPU supports",
        )
        return
    if f.data.get("reason") == "config_format" and f.data.get("fix"):  # parse.euroeval: the repo's config
        p.note([f.id], f"{_said(f)}: {f.data['fix']}")
        return
    if f.data.get("reason") == "unrecognized" and f.data.get("flag"):
        p.note([f.id], _unrecognized(p, f, str(f.data["flag"]), text))
        return
    seqs, blocks = f.data.get("max_num_seqs"), f.data.get("mamba_blocks")
    if isinstance(seqs, int) and isinstance(blocks, int):  # read by parse.mambacap
        _mamba_blocks(p, f, seqs, blocks)
        return
    if isinstance(sched := f.data.get("max_num_scheduled_tokens"), int):  # read by parse.schedbudget
        _no_scheduled(p, f, sched)
        return
    for rx, lever in _RULES:
        m = rx.search(text)
        if m and p.add_any_of(lever(p, f, m)) is not None:
            return
    if _parsed_below_len(p, f):
        return
    flag, value = f.data.get("flag"), f.data.get("value")
    if flag and p.taken(str(flag)):
        p.note([f.id], f"{_said(f)}; the {flag} change above is a value it accepts")
        return
    shown: Any = f" {value}" if value is not None else ""
    p.note(
        [f.id],
        _said(f)
        + (
            f"; change {flag}{shown} to a value that passes this check (the command below leaves {flag} out, "
            "so vLLM's default applies)"
            if flag
            else "; correct the argument it names and launch again"
        ),
    )


def _bf16(p: Plan, f: Finding) -> None:
    """vLLM's bfloat16 check: float16 (``--dtype half``, the lever vLLM's own message names, for any GPU below 8.0)
    runs on compute capability 7.x, and below 7.0 on a vLLM built for that GPU (vLLM's own wheels and builds stop at
    7.0: setup.py's "GPUs with compute capability below 7.0 are not supported."; Pascal builds such as
    pascal-pkgs-ci add 6.x). When the log holds that build refusal, no dtype starts it; else the lever, with the
    caveat said."""
    cap = f.data.get("capability")
    below = isinstance(cap, int) and cap < 70
    shown = f"{cap // 10}.{cap % 10}" if isinstance(cap, int) else "?"
    if below and f.data.get("build_floor"):
        p.note(
            [f.id],
            f"{_said(f)}: this GPU (compute capability {shown}) is below 7.0, and this vLLM's build "
            "refuses GPUs below 7.0 (the log's 'GPUs with compute capability below 7.0 are not supported'), so "
            "--dtype half starts nothing either: run on a GPU of compute capability 7.0 or newer (8.0 or newer for "
            "bfloat16), or a vLLM built for this GPU",
        )
        return
    if below:
        p.note(
            [f.id],
            f"this GPU (compute capability {shown}) is below 7.0, the least vLLM's own wheels carry "
            "kernels for: --dtype half (vLLM's own lever) starts it on a vLLM built for this GPU (a Pascal build); "
            "on a stock wheel the next start fails with 'no kernel image is available for execution on the "
            "device', and then only a GPU of compute capability 7.0 or newer runs it",
        )
    cur, _ = p.current("--dtype")
    if cur is not None and str(cur).lower() in ("half", "float16"):
        p.note(
            [f.id], f"{_said(f)}: --dtype half is in force already; run on a GPU of compute capability 8.0+"
        )
        return
    # every release has --dtype and takes 'half' (vllm_flags.json, read 0.1.7 → 0.34): no version needed
    r = Recommendation(
        flag="--dtype",
        current="bfloat16",
        suggested="half",
        reason=_said(f),
        finding_ids=(str(f.id),),
        expected_effect="the model runs in float16, which GPUs below compute capability 8.0 support; bfloat16 "
        "weights are cast to float16 (a model trained in bfloat16 may overflow in float16 on rare inputs)",
        current_is_default=False,
    )
    if p.add_any_of([r]) is not None:
        return
    p.note(
        [f.id],
        f"{_said(f)}: run the model in float16 (--dtype half), or on a GPU of compute capability 8.0 or newer",
    )


def rejected_flags(findings: Sequence[Finding]) -> list[str]:
    """Flags whose given value vLLM rejected: the pasted command must not repeat them."""
    return [str(f.data["flag"]) for f in findings if f.id == FindingId.LAUNCH_REJECTED and f.data.get("flag")]
