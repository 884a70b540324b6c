"""The classes of the blind set eval32bk fixed after its measurement (tests/data/eval32bk/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse.envelope import Ctx
from observe.parse.failrows import RULES
from observe.parse.failtypes import RunState
from observe.parse.rules import fire
from tests.diagnosekit import by_id, critical, diagnose, lines, suggestions


def test_the_bare_no_tokens_to_schedule_refusal_is_a_refused_launch_with_vllms_own_levers() -> None:
    """BK2 (006): 0.26's 'max_num_scheduled_tokens is set to -1792, which does not allow any tokens to be scheduled'
    (VllmConfig._set_max_num_scheduled_tokens: max_num_batched_tokens less the drafting slots set aside for every
    sequence, refused at 0 or below, at config build), quoted bare: the refused launch, no crash; no memory flag, and
    the note names vLLM's own levers with the least raise that passes (1,793) — no value in force is repeated, as none
    is shown."""
    d = diagnose("eval32bk/006.log")
    assert critical(d) and "launch_rejected" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    assert not suggestions(d), d["recommendations"]
    notes = " ".join(n["text"] for n in d["advice_notes"])
    assert "--max-num-batched-tokens by at least 1,793" in notes and "num_speculative_tokens" in notes, notes


def test_with_the_token_budget_shown_the_lever_keeps_it_as_the_steps_budget(tmp_path: Path) -> None:
    """BK2's lever where the launch's token budget is in force in the log (its 'non-default args' line, 2048): the
    drafting slots set aside are 2048 + 1792 = 3840, so --max-num-batched-tokens 5888 leaves the 2048 it had to schedule
    each step — never the value in force."""
    log = tmp_path / "bk2.log"
    args = "{'model': 'm', 'max_num_batched_tokens': 2048}"
    log.write_text(
        f"INFO 08-01 10:00:00 [utils.py:233] non-default args: {args}\n"
        + "\n".join(lines("eval32bk/006.log"))
    )
    d = diagnose(log)
    assert "launch_rejected" in by_id(d), d["findings"]
    assert suggestions(d).get("--max-num-batched-tokens") == [5888], d["recommendations"]


def test_the_refusal_is_read_in_its_forms_and_not_its_warning() -> None:
    """The reader (parse/schedbudget.py) on the real line, on the later wording ('… based on the speculative decoding
    settings, which does not allow …') and behind its exception type; not on the WARNING for a small positive budget
    ('… This may lead to suboptimal performance'), nor once the engine served."""
    real = lines("eval32bk/006.log")[0]
    later = real.replace("-1792,", "-1792 based on the speculative decoding settings,")
    warn = (
        "max_num_scheduled_tokens is set to 8162 based on the speculative decoding settings. This may lead to"
    )
    run = RunState(shutdown=False, stats_seen=False)
    ctx = Ctx("006.log", 1)
    for text in (real, later, "ValueError: " + real):
        found = fire(RULES, text, ctx, run)
        assert found and found[0].details["max_num_scheduled_tokens"] == -1792, text
    assert not fire(RULES, warn, ctx, run)
    assert not fire(RULES, real, ctx, run._replace(stats_seen=True))
