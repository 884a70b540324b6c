"""The classes of the blind set eval32bx fixed after its measurement (tests/data/eval32bx/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines, notes, suggestions


def test_a_nixl_handshake_with_the_wrong_engine_is_a_warning_with_the_side_channel_fix() -> None:
    """BX2 (009, the false alarm): a decode worker's 'RuntimeError: Remote NIXL agent engine ID mismatch. Expected …'
    ([nixl_connector.py:815], the traceback's end of 0.11.x's "Handshake with %s failed" record) and 'Handshake failed
    for request …' ([nixl_connector.py:827], "…, marking blocks as invalid"): both logged by the background handshake's
    callbacks; the requests' blocks are recomputed or failed, the engine serves on. The engine's error it went on from
    (a warning, never critical), its cause the handshake and its fix the side channel's address, no flag."""
    d = diagnose("eval32bx/009.log")
    err = by_id(d).get("engine_error")
    assert err is not None and err["severity"] == "warning", d["findings"]
    assert not critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d) and "engine_startup_failed" not in by_id(d), d["findings"]
    text = notes(d, "engine_error")
    assert "VLLM_NIXL_SIDE_CHANNEL_HOST" in text and "no vLLM flag helps" in text, d["advice_notes"]
    assert not suggestions(d), d["recommendations"]


def test_handshake_words_under_another_logger_are_not_nixls(tmp_path: Path) -> None:
    """The other side: the callback's words are read only under nixl_connector.py's logger; the same words in another
    file's ERROR record (here a made-up scheduler.py site) stay the catch-all's, which pages as before."""
    rec = lines("eval32bx/009.log")[-1].replace("[nixl_connector.py:827]", "[scheduler.py:827]")
    log = tmp_path / "other.log"
    log.write_text(rec + "\n")
    d = diagnose(log)
    assert critical(d), d["findings"]


def test_an_engine_cores_death_after_the_handshake_failure_still_pages(tmp_path: Path) -> None:
    """The other side: the handshake's failure is not the engine's death, but an engine core's fatal error after it is:
    critical, as before."""
    log = tmp_path / "dead.log"
    log.write_text(
        "\n".join(lines("eval32bx/009.log"))
        + "\n(EngineCore_DP0 pid=2823400) ERROR 10-16 17:23:01 [core.py:710] EngineCore encountered a fatal error.\n"
    )
    d = diagnose(log)
    assert critical(d), d["findings"]
