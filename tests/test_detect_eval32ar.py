"""The classes of the final blind set eval32ar fixed after its measurement (tests/data/eval32ar/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse.parser import parse_text
from tests.diagnosekit import by_id, critical, diagnose


def test_v0s_engine_dead_text_under_a_hosts_record_is_the_engines_death_while_serving() -> None:
    """AR4 (017: vLLM 0.3's 'Aborted request …', then Xinference's restful_api ERROR record 'Task finished
    unexpectedly. This should never happen! Please open an issue on Github. See stack trace above for the actual
    cause.'): AsyncEngineDeadError's text, raised only by V0's background loop's done-callback
    (_raise_exception_on_finish) once the loop it ran ended: the engine died while serving, not a failed start."""
    d = diagnose("eval32ar/017.log")
    assert critical(d) and by_id(d)["engine_crashed"]["data"]["phase"] == "serving", d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_v0s_engine_dead_text_after_a_requested_stop_is_the_noise_of_stopping() -> None:
    """AR4's other side: the same text after a stop asked for (Ctrl-C) is the loop cancelled on the way out."""
    text = (
        "INFO 03-17 00:26:09 launcher.py:1] Shutting down FastAPI HTTP server.\n"
        "ERROR 03-17 00:26:10 async_llm_engine.py:1] Task finished unexpectedly. This should never happen! "
        "Please open an issue on GitHub. See stack trace above for the actual cause.\n"
    )
    fatal = [e for e in parse_text(text) if getattr(e, "fatal", False)]
    assert not fatal, fatal
