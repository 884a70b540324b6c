"""The classes of the blind set eval32bk fixed after its measurement (tests/data/eval32bk/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse.envelope import Ctx
from observe.parse.failrows import RULES
from observe.parse.failtypes import RunState
from observe.parse.rules import fire
from tests.diagnosekit import by_id, critical, diagnose, lines, not_failing, suggestions


def _kinds(d: dict) -> list[str]:
    return [e["kind"] for e in d["events"]["errors"]]


def test_a_nixl_transfer_failure_record_is_one_requests_kv_lost() -> None:
    """BK3 (022, a false alarm): NixlConnector's 'NIXL transfer failure: transfer_setup_failed. Marking blocks as
    invalid | Context: {...}' and '... handshake_setup_failed | Context: {...}' (nixl_connector.py _log_failure: the
    READ that could not be set up marks that request's blocks invalid, a failed handshake fails the requests waiting
    on that remote; kv_load_failure_policy recomputes or fails them, the engine steps on): those requests' errors, no
    failure of the engine, no start-up failure. (The only real excerpt of the record with vLLM's prefix found.)"""
    d = diagnose("eval32bk/022.log")
    not_failing(d)
    assert "engine_startup_failed" not in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]
    assert _kinds(d) == ["request_error", "request_error"], d["events"]["errors"]


def test_an_engine_cores_fatal_error_after_nixl_transfer_failures_still_pages(tmp_path: Path) -> None:
    """The other side of BK3: the same records, then an engine core's 'EngineCore encountered a fatal error.' and its
    traceback (eval32bk 008's real lines): the engine's death is read by its own lines, critical."""
    log = tmp_path / "nixl-then-fatal.log"
    log.write_text("\n".join([*lines("eval32bk/022.log"), *lines("eval32bk/008.log")]) + "\n")
    assert critical(diagnose(log))


def test_the_rocm_runtimes_gpu_memory_access_fault_is_the_engine_dying() -> None:
    """BK1 (003): among an MI355X TP8EP8 run's AITER worker lines, the ROCm runtime's 'Memory access fault by GPU
    node-3 (Agent handle: 0x...) on address 0x.... Reason: Unknown.' (ROCR-Runtime runtime.cpp VMFaultHandler prints
    it, then std::abort(): the worker dies of SIGABRT, no Python exception): the engine died, critical; no stats
    line, so the phase is not claimed; a kernel's bad address, so no --gpu-memory-utilization. (The only real excerpt
    in the sets.)"""
    d = diagnose("eval32bk/003.log")
    crashed = by_id(d).get("engine_crashed")
    assert critical(d) and crashed is not None, d["findings"]
    assert (crashed["data"]["signal"], crashed["data"]["phase"]) == ("SIGABRT", "unknown"), crashed
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]


def test_the_fault_words_inside_a_loggers_record_are_not_read_so(tmp_path: Path) -> None:
    """The other side of BK1: ROCr prints the line itself, on stderr; the same words quoted inside a vLLM logger's
    record (a WARNING relaying them) are not the runtime aborting the process."""
    fault = lines("eval32bk/003.log")[4]
    log = tmp_path / "quoted.log"
    log.write_text(f"WARNING 01-09 15:09:32 [platform.py:120] {fault}\n")
    d = diagnose(log)
    assert "engine_crashed" not in by_id(d), d["findings"]


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
