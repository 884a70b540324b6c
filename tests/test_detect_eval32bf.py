"""The classes of the blind set eval32bf fixed after its measurement (tests/data/eval32bf/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines, not_failing


def test_an_offline_traceback_cut_in_the_llms_admission_is_one_call_refused() -> None:
    """BF1 (005): an offline script's traceback through LLM.generate into LLM._validate_and_add_requests →
    self._add_request(, cut there. The LLM validates and hands each request to llm_engine.add_request, whose input
    processing refuses a request it cannot take with a ValueError: the caller's call refused before any step, not the
    engine failing. (The only real excerpt of this cut form in the sets and the stored threads found.)"""
    not_failing(diagnose("eval32bf/005.log"))


def test_a_frame_below_the_admission_or_the_engines_death_above_it_still_tells(tmp_path: Path) -> None:
    """The other side of BF1: the same traceback going on into a frame below the LLM's (V1's llm_engine.add_request,
    as eval32s 028 prints it) is read as before; the engine core's own 'died unexpectedly' record before it is the
    engine's death (eval32s 028's first line)."""
    frame = next(ln for ln in lines("eval32s/028.log") if "vllm/v1/engine/llm_engine.py" in ln)
    log = tmp_path / "deeper.log"
    log.write_text("\n".join([*lines("eval32bf/005.log"), frame]) + "\n")
    assert critical(diagnose(log)), "a frame below the admission is read as before"
    log = tmp_path / "died.log"
    log.write_text("\n".join([lines("eval32s/028.log")[0], *lines("eval32bf/005.log")]) + "\n")
    d = diagnose(log)
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]


def test_the_chat_template_warmups_logged_traceback_is_no_failed_start() -> None:
    """BF2 (008): the 2026 API server's ERROR record at serving.py:214, its traceback from the chat handler's ``warmup``
    frame into _preprocess_chat and render_chat_async, cut (a model with no chat template). vLLM's warmup logs its
    exception (logger.exception "Chat template warmup failed") and the start-up goes on: at most a warning, never a
    failed start or a crash. The second real excerpt (vllm#34169) keeps the record's message line and its warmup frame:
    also a warning at most."""
    for log in ("eval32bf/008.log", "excerpts/chat-template-warmup-failed-cpu-vllm-34169.log"):
        d = diagnose(log)
        not_failing(d)
        assert "engine_error" in by_id(d), (log, d["findings"])  # still said: the model has no chat template
    assert "chat-template warm-up" in by_id(diagnose("eval32bf/008.log"))["engine_error"]["evidence"]


def test_vllms_refusal_of_a_chat_with_no_template_is_one_requests() -> None:
    """BF2 (026): the bare 'ValueError: As of transformers v4.44, default chat template is no longer allowed, …' that
    vLLM raises rendering a conversation with no template (a request's preprocessing, answered 400; an LLM.chat call):
    one request refused, not a failed launch. Second real excerpt: vllm#29849's line (a 0.11.2 server called)."""
    for log in ("eval32bf/026.log", "excerpts/no-chat-template-valueerror-deepseek-v32-vllm-29849.log"):
        not_failing(diagnose(log))


def test_a_frame_outside_the_warmup_or_another_start_up_refusal_stays_critical(tmp_path: Path) -> None:
    """The other side of BF2: the same record with its warmup frame taken out (the handler's _preprocess_chat and the
    renderer alone) is read as before, and the start-up refusal of a template file in vLLM's own words
    ('ValueError: The supplied chat template (…) looks like a file path, but it failed to be opened.') stays critical."""
    log = tmp_path / "nowarm.log"
    log.write_text("\n".join(ln for ln in lines("eval32bf/008.log") if "in warmup" not in ln) + "\n")
    assert critical(diagnose(log))
    log = tmp_path / "template-file.log"
    log.write_text(
        "ValueError: The supplied chat template (./template.jinja) looks like a file path, but it failed to be opened."
        " Reason: [Errno 2] No such file or directory: './template.jinja'\n"
    )
    assert critical(diagnose(log))
