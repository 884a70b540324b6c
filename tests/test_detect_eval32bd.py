"""The classes of the blind set eval32bd fixed after its measurement (tests/data/eval32bd/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import re

from observe.parse import lmcachelog
from observe.parse.envelope import Ctx
from observe.parse.failtypes import RunState
from observe.parse.failures import failure
from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_lmcaches_own_init_failed_record_is_an_error_of_the_engine_at_start_up() -> None:
    """BD1: LMCache's own ERROR record '[31;20m[…] LMCache ERROR: LMCacheEngine marked as init failed: Traceback (most
    recent call last):' (its colour code's ESC byte lost), then its frames under a worker's prefix, cut before the
    exception: the KV connector's start-up failed in a worker (cache_engine.py mark_init_failed). A critical
    engine_error at start-up, whose evidence says what decides the rest (an EngineDeadError at the first request, or
    the engine serving after it); never a crash while serving. The only real excerpt of the record in the project
    (vllm-project/vllm-ascend#10936 holds the same paste)."""
    d = diagnose("eval32bd/001.log")
    assert critical(d), d["findings"]
    err = by_id(d).get("engine_error")
    assert err is not None and err["data"]["phase"] == "startup", d["findings"]
    assert "LMCacheEngine marked as init failed" in err["evidence"], err
    assert "EngineDeadError" in err["evidence"] and "serving after it" in err["evidence"], err
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert all(la.get("status") != "crashed" for la in d.get("launches") or []), d.get("launches")


def test_only_that_record_of_lmcaches_logger_is_read() -> None:
    """The reader takes LMCache's 'marked as init failed' record only: LMCache's other ERROR records (eval32bb 026's
    retrieved-token complaints, real lines) and its INFO / WARNING records are not its."""
    rx = re.compile(lmcachelog.PATTERN)
    assert rx.search("LMCache ERROR: LMCacheEngine marked as init failed: Traceback (most recent call last):")
    assert rx.search(
        "LMCache ERROR: LMCacheEngine marked as init failed (cache_engine.py:1:lmcache.v1.cache_engine)"
    )
    others = [
        ln
        for log in ("eval32bb/026.log", "eval32as/013.log", "eval32bb/027.log")
        for ln in (DATA / log).read_text().splitlines()
        if "LMCache " in ln
    ]
    assert len(others) >= 3
    run = RunState(shutdown=False, stats_seen=False)
    for ln in others:
        msg = ln.split("] ", 1)[-1]
        assert rx.search(msg) is None, ln
        f = failure(msg, Ctx(source="x", lineno=1, bare=True), run)
        assert f is None or f.key != ("lmcache", "init_failed"), ln
