"""The classes of the blind set eval32bj fixed after its measurement (tests/data/eval32bj/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.model import LogLine
from observe.parse import hosted, mainexit
from observe.parse.failtypes import RunState
from observe.parse.parser import Parser
from tests.diagnosekit import by_id, critical, diagnose, lines, suggestions

_RUN = RunState(shutdown=False, stats_seen=False)


def test_uvicorns_bind_failure_is_a_failed_start_with_the_port_as_its_fix() -> None:
    """BJ1 (007): uvicorn's 'ERROR:    [Errno 98] error while attempting to bind on address (…, 44319): [errno 98]
    address already in use' (its startup's logger.error of the OSError asyncio / uvloop's create_server raised, then
    sys.exit(1)) in a CI quote: vLLM's API server never served — a failed start, no crash, and its fix is the port, not
    a memory or KV flag."""
    d = diagnose("eval32bj/007.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    notes = " ".join(n["text"] for n in d["advice_notes"])
    assert "another --port" in notes, notes


def test_the_bind_record_is_read_as_uvicorn_prints_it_and_only_so() -> None:
    """BJ1's reader on the real line (its CI quote prefix peeled): uvicorn's own level prefix and asyncio's words. The
    same words as an exception line (anybody's OSError) or vLLM's launcher DEBUG line naming the port's holder (also
    logged on every stop by a signal while another process holds the port) are not this rule's."""
    line = next(x for x in lines("eval32bj/007.log") if "bind on address" in x)
    text = line.split("] ", 1)[1].strip()
    f = hosted.death(text, _RUN)
    assert f is not None and f.details["before_serving"] and "--port" in f.details["fix"], f
    assert hosted.death("OSError: " + text.split("    ", 1)[1], _RUN) is None
    holder = next(x for x in lines("eval32bj/007.log") if "is used by process" in x)
    assert hosted.death(holder.split("] ", 2)[2], _RUN) is None
    assert hosted.death(text, RunState(shutdown=True, stats_seen=False, requested=True)) is None


def test_a_traceback_cut_at_the_scripts_frame_while_the_weights_are_loaded_is_a_failed_start() -> None:
    """BJ2 (024): v0.4.1's start-up up to 'Loading model weights took 1.7517 GB', then 'Traceback (most recent call
    last):' and the script's own frame ('File "…", line 3, in <module>'), cut there. The engine's constructor loads the
    weights, profiles and sizes the KV cache in one call of the script: a traceback opening in between is that call
    raising — a failed start (phase profiling), never a crash."""
    d = diagnose("eval32bj/024.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert by_id(d)["engine_startup_failed"]["data"].get("phase") == "profiling", by_id(d)[
        "engine_startup_failed"
    ]


def test_the_scripts_module_frame_tells_only_while_the_start_up_loads() -> None:
    """BJ2's reader on the real frame: under the traceback's header, after vLLM's lines, while the start-up is between
    loading the weights and sizing the KV cache (RunState.loading). Once the cache is sized (or the engine served), or
    without the header, a script's module frame says nothing of vLLM's start-up."""
    frame = lines("eval32bj/024.log")[-1].strip()
    loading = RunState(shutdown=False, stats_seen=False, vllm_seen=True, loading=True)
    f = mainexit.died(frame, loading, headed=True)
    assert f is not None and f.details["phase"] == "startup" and f.details["cut"], f
    assert mainexit.died(frame, loading._replace(loading=False), headed=True) is None
    assert mainexit.died(frame, loading._replace(stats_seen=True), headed=True) is None
    assert mainexit.died(frame, loading, headed=False) is None


def test_the_kv_cache_sized_ends_the_loading_window() -> None:
    """The window BJ2 reads in: opened by the weights' lines, closed by V0's '# GPU blocks' (the cache sized)."""
    p = Parser()
    for i, t in enumerate(lines("eval32bj/024.log")[:7], 1):
        p.feed(LogLine("x", i, t))
    assert p._run().loading
    p.feed(LogLine("x", 8, "INFO 08-02 16:15:45 gpu_executor.py:94] # GPU blocks: 2000, # CPU blocks: 500"))
    assert not p._run().loading
