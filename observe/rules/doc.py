"""docs/findings.md, rendered from RULES: every finding's row (id, severity, evidence, advice,
versions, the alert that pages on it with its runbook section) in its section, with the prose between the tables. Pure: the text; writing it is
tools/regen_findings_doc.py's job (``--check`` is what the tests run).
"""

from __future__ import annotations

import re
from typing import Any

from observe.flags import vllmflags
from observe.rules.base import SECTIONS, Doc
from observe.rules.table import RULES

TITLE = "# Findings and the advice each one gets"

INTRO = """Every finding `observe diagnose` (and the sidecar) can report: what evidence triggers it, what
the advisor (`observe/advise/`) does about it, and where the vLLM version matters. Thresholds
are `observe.settings.Settings` fields (`observe config show`). A warning or critical finding
never ends in silence: it gets a recommendation with its expected effect, or a note that says
why no flag helps (or which number is missing) and what to do instead. Notes are in the
`advice_notes` key of the JSON and under "Recommendations" in the text, markdown and HTML reports.

Recommendations that are **alternatives** (any one fixes the finding) ride on the first, least
disruptive one (`alternatives` in the JSON, "or, instead, any one of" in the reports); the
command to paste applies the first only. A change vLLM refuses alone carries the change it needs
(`coupled` in the JSON, "together with" in the reports, with why): `--max-num-seqs` raised past the
`--max-num-batched-tokens` in force raises the budget with it (vLLM refuses a budget under the
sequence cap). That is the only way one recommendation moves two flags."""

#: prose under a section's heading, before its table
BEFORE = {
    "The engine failed or died": """No failing log reads as healthy: a report says "No problems found" only where the log counted no
failure (`observe/report/text.py`, `no_findings_text`).""",
}

#: prose after a section's table
AFTER = {
    "The engine failed or died": """Wordings read, each with a golden line and its release and source file in `tests/test_parse_forms.py`:
out of memory — PyTorch's `CUDA out of memory` (torch 2.1 "… total capacity …" and ≥ 2.4 "GPU 0 has a
total capacity of …" wordings), `RuntimeError: CUDA error: out of memory` (CUDA-graph capture), the HIP
forms; a request longer than the model — V0's "Input prompt (N tokens) is too long", the OpenAI
server's "This model's maximum context length is L tokens. However, you requested N tokens" (0.2 →
0.10), "… your request has N input tokens" (0.10 → 0.11), "… your prompt contains [at least] N input
tokens" (0.32), the V1 processor's "The decoder prompt (length N) is longer than the maximum model
length of L" (0.8 → 0.32, and 0.32's "plus the number of requested output tokens"); the KV cache too
small (V0 worker, V1 kv_cache_utils) and "No available memory for the cache blocks"; vLLM's hang
warning "No available block found in 60 second" (0.6) / "No available shared memory broadcast block
found in 60 seconds … processes are hanging" (0.7 → 0.32: the parser's `engine_hang`). Every form
also behind PyTorch's `[rank0]:` prefix and vLLM's process prefixes (`(VllmWorker rank=N pid=M)`,
`(RayWorkerWrapper pid=M)`, `(EngineCore_DP0 pid=M)`, `(Worker_TP1 pid=M)`): the rank is in the
event's details and the finding's data; with several workers, the worst rank's available KV memory
decides and is named (`worst_worker`).""",
    "KV-cache pressure under load": """**The KV plan.** The load seen wants (most running + most waiting) × request length tokens.
`--kv-cache-memory-bytes` (when set, vLLM ≥ {since:--kv-cache-memory-bytes}) is sized for it with 25% slack. Otherwise, on a
GPU: `--gpu-memory-utilization` raised to `max_gpu_util` (0.95) and `--kv-cache-dtype fp8` (when the version accepts it).
When the GPU's total memory and the KV memory are known, one lever is chosen when it suffices
(the other as an alternative), both when only both together do, and a note says "add replicas
or a larger `--tensor-parallel-size`" when even both fall short. When the log does not say how
much the load needs (no KV tokens or request length), the levers are alternatives, never all at
once: `--gpu-memory-utilization` `max_gpu_util`, `--kv-cache-dtype fp8`, or a cap at what the full cache held
(the most running seen; half of it with preemption, since in-flight sequences hold at least half
their final length) — the cap only when more requests wanted to run than it admits.
`--max-num-seqs` is capped to what the (grown) cache holds only under KV pressure, and never when
the grown cache holds every request seen. On vLLM ≥ {since:--max-num-active-seqs} every such cap is `--max-num-active-seqs`
(it caps admission without shrinking the CUDA graphs captured for `--max-num-seqs`).
`--max-num-batched-tokens` is left alone under KV pressure (a slow first token is the queue
waiting for KV blocks). When the cache is already as large as flags make it, a note.""",
    "Batch size and scheduling": """A queue still growing (with a `queue_*` finding that no lever above answered: Waiting higher at the
last stats sample than at the first, and at its peak) gets `--max-num-queued-reqs` = 2 × the most
running (vLLM ≥ {since:--max-num-queued-reqs}): the rest get HTTP 503 at once instead of an unbounded wait.""",
    "Information only": """Any other warning or critical finding (a new rule without a note) gets a note: observe knows no flag for it,
with vLLM's own hint when the detector kept one (`data["hints"]`).

vLLM's unset `--max-num-seqs` / `--max-num-batched-tokens` depend on the release and the GPU class
(`EngineArgs` batch defaults, `observe/data/vllm_flags.json`): where the GPU is named
(`EngineConfig.device` holding a GPU name; its memory from the GPU table of
`observe/capacity/tables.py`) the values in force are known, otherwise they are shown as unknown.""",
}

# A release range in a Doc's text or the prose here is asked of vLLM's release data
# (observe/data/vllm_flags.json through flags.vllmflags), never written: a placeholder
#   {since:--flag}          the first read release that has the flag
#   {since:--flag=value}    the first read release whose choices for the flag include the value
#   {before:--flag=value}   the read release before that one
#   {while:--flag=value}    the releases whose default for the flag is the value ("A–B", "≥ A")
#   {defaults:--flag}       each default the flag has had and the release it came in ("0.9; 0.92 from B")
_RELEASE = re.compile(r"\{(since|before|while|defaults):(--[a-z0-9-]+)(?:=([^}]+))?\}")


def _read() -> list[str]:
    return [".".join(map(str, r)) for r in vllmflags.versions_read()]


def _first_choice(flag: str, value: str) -> str:
    return next(r for r in _read() if value in (vllmflags.choices(flag, r) or []))


def _changes(flag: str) -> list[tuple[str, Any]]:
    """(release, default) at each read release where the flag's default changed."""
    out: list[tuple[str, Any]] = []
    for r in _read():
        d = vllmflags.default(flag, r)
        if not out or out[-1][1] != d:
            out.append((r, d))
    return out


def _resolve(m: re.Match[str]) -> str:
    verb, flag, value = m.group(1), m.group(2), m.group(3)
    if verb == "since" and value is None:
        got = vllmflags.introduced(flag)
        assert got is not None, flag
        return got
    if verb == "since":
        return _first_choice(flag, value)
    if verb == "before":
        read = _read()
        return read[read.index(_first_choice(flag, value)) - 1]
    changes = [(r, d) for r, d in _changes(flag) if d is not None]
    if verb == "defaults":
        return "; ".join(str(d) + ("" if i == 0 else f" from {r}") for i, (r, d) in enumerate(changes))
    steps = _changes(flag)  # "while": the run of releases whose default is the value
    i = next(i for i, (_, d) in enumerate(steps) if str(d) == value)
    if i + 1 == len(steps):
        return f"≥ {steps[i][0]}"
    read = _read()
    return f"{steps[i][0]}–{read[read.index(steps[i + 1][0]) - 1]}"


def releases(text: str) -> str:
    """The text with each release placeholder answered from the release data."""
    return _RELEASE.sub(_resolve, text)


GENERATED = (
    "<!-- generated from observe/rules/ (RULES) by tools/regen_findings_doc.py: edit the rules, "
    "not this file -->"
)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _row(d: Doc, settings: tuple[str, ...]) -> str:
    """A finding's row; the evidence cell ends with the Settings fields its rule reads (the names a
    --config file sets)."""
    head = d.label or f"`{d.id}` ({d.severity})"
    ev = d.evidence + (" (settings: " + ", ".join(f"`{s}`" for s in settings) + ")" if settings else "")
    page = f"[`{d.alert}`]({d.runbook.removeprefix('docs/')})" if d.alert and d.runbook else "—"
    cells = (_cell(releases(t)) for t in (ev, d.advice, d.versions))
    return f"| {head} | {' | '.join(cells)} | {page} |"


def render() -> str:
    """The whole document."""
    rows: dict[str, list[str]] = {s: [] for s in SECTIONS}
    for rule in RULES:
        for d in rule.docs:
            rows[d.section].append(_row(d, rule.settings if d.settings is None else d.settings))
    out = [TITLE, "", GENERATED, "", INTRO, ""]
    for section in SECTIONS:
        out += [f"## {section}", ""]
        if section in BEFORE:
            out += [BEFORE[section], ""]
        out += [
            "| finding | evidence | advice | versions | alert (runbook) |",
            "| --- | --- | --- | --- | --- |",
            *rows[section],
            "",
        ]
        if section in AFTER:
            out += [AFTER[section], ""]
    return releases("\n".join(out).rstrip("\n") + "\n")
