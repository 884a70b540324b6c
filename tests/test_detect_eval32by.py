"""The classes of the blind set eval32by fixed after its measurement (tests/data/eval32by/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import by_id, critical, diagnose, lines


def test_an_error_record_before_the_api_server_started_is_no_exit() -> None:
    """BY1 (007, the false alarm): fa_utils.py's 'Cannot use FA version 2 is not supported …' ERROR record (vLLM falls
    back to another attention backend), then the whole start-up and 'Starting vLLM API server 0 on …': the engine was
    built after it, so the record is the engine's error it went on from (a warning), never 'did not serve after it'."""
    d = diagnose("eval32by/007.log")
    assert not critical(d), d["findings"]
    err = by_id(d).get("engine_error")
    assert err is not None and err["severity"] == "warning", d["findings"]
    assert "the API server started after it" in err["evidence"], err
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_the_same_record_after_the_api_server_started_still_pages(tmp_path: Path) -> None:
    """The other side: the start line must come after the record. The same ERROR record put after 'Starting vLLM API
    server' (and nothing after it) is an error the log does not show the engine going on from: critical, as before."""
    ls = lines("eval32by/007.log")
    err = next(x for x in ls if "[fa_utils.py:57]" in x)
    log = tmp_path / "after.log"
    log.write_text("\n".join([x for x in ls if x != err] + [err]) + "\n")
    d = diagnose(log)
    assert critical(d), d["findings"]


def test_a_fatal_error_before_the_api_server_line_still_pages(tmp_path: Path) -> None:
    """The other side: a fatal error is fatal whatever follows it (an engine core's 'EngineCore failed to start.' ahead of
    a stray start line of another launch in the same paste): critical."""
    ls = lines("eval32by/007.log")
    fatal = "(EngineCore_DP0 pid=417364) ERROR 08-03 15:22:14 [core.py:700] EngineCore failed to start."
    log = tmp_path / "fatal.log"
    log.write_text("\n".join(ls[:16] + [fatal] + ls[16:]) + "\n")
    d = diagnose(log)
    assert critical(d), d["findings"]
