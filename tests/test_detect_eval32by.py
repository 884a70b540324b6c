"""The classes of the blind set eval32by fixed after its measurement (tests/data/eval32by/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.model import EngineError, LogLine
from observe.parse import hosted
from observe.parse.parser import Parser
from observe.sidecar.config import SidecarSettings
from observe.sidecar.service import Sidecar
from tests.diagnosekit import by_id, critical, diagnose, lines, not_failing, suggestions
from tests.sidecarkit import Clock, append_to

#: since CC1 (tests/test_detect_eval32cc.py) fa_utils' FA2 line is a notice vLLM carries on from, read as nothing; the
#: BY1 reading is shown on the same real start-up with that record's words swapped for an error no rule knows
_FA2 = "Cannot use FA version 2 is not supported due to FA2 is only supported on devices with compute capability >= 8"
_OTHER = "Failed to load the flash-attention kernels: the prebuilt library is missing"


def _swapped(tmp_path: Path, name: str, move_last: bool = False) -> Path:
    ls = [x.replace(_FA2, _OTHER) for x in lines("eval32by/007.log")]
    if move_last:
        err = next(x for x in ls if "[fa_utils.py:57]" in x)
        ls = [x for x in ls if x != err] + [err]
    log = tmp_path / name
    log.write_text("\n".join(ls) + "\n")
    return log


def test_an_error_record_before_the_api_server_started_is_no_exit(tmp_path: Path) -> None:
    """BY1 (007, the false alarm): an ERROR record early in the start-up (in 007 fa_utils.py's FA2 line, swapped here for
    words no rule knows), then the whole start-up and 'Starting vLLM API server 0 on …': the engine was built after it,
    so the record is the engine's error it went on from (a warning), never 'did not serve after it'."""
    d = diagnose(_swapped(tmp_path, "before.log"))
    assert not critical(d), d["findings"]
    err = by_id(d).get("engine_error")
    assert err is not None and err["severity"] == "warning", d["findings"]
    assert "the API server started after it" in err["evidence"], err
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert not critical(diagnose("eval32by/007.log")), "the real excerpt itself stays quiet"


def test_the_same_record_after_the_api_server_started_still_pages(tmp_path: Path) -> None:
    """The other side: the start line must come after the record. The same ERROR record put after 'Starting vLLM API
    server' (and nothing after it) is an error the log does not show the engine going on from: critical, as before."""
    d = diagnose(_swapped(tmp_path, "after.log", move_last=True))
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


# ---------------------------------------------------------------- BY2 (024): Ray's placement group never got its GPUs


def test_a_start_waiting_for_gpus_ray_does_not_have_is_a_failed_start() -> None:
    """BY2 (024): V0 0.8.5 over Ray, TP 4: ray_utils.py's 'The number of required GPUs exceeds the total number of
    available GPUs in the placement group.', then 'Waiting for creating a placement group of specs for 10 / 30 / 70 /
    150 seconds', then Abseil's '*** SIGTERM received at time=… ***'. The start stuck waiting for GPUs Ray does not
    have: a failed start naming Ray's GPUs and the parallel sizes, never a crash, never a memory flag."""
    d = diagnose("eval32by/024.log")
    f = by_id(d).get("engine_startup_failed")
    assert f is not None and f["severity"] == "critical", d["findings"]
    assert (
        "SIGTERM" in f["evidence"] and "after waiting 150 s for a placement group of 4 GPUs" in f["evidence"]
    ), f
    fix = f["data"].get("fix") or ""
    assert "ray status" in fix and "--tensor-parallel-size" in fix and "--pipeline-parallel-size" in fix, f
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)


def test_the_stuck_start_is_told_on_the_line_that_arrives() -> None:
    """Live: the sidecar never ends its stream, so the reading comes on a line itself, never on a later one: here on
    Abseil's SIGTERM line, the start given up on after the 150 s waiting line; the waiting lines before it tell nothing
    (a wait may still end well: an autoscaler adding a node takes minutes)."""
    p = Parser()
    told: list[int] = []
    for i, t in enumerate(lines("eval32by/024.log"), 1):
        if any(isinstance(e, EngineError) for e in p.feed(LogLine("x", i, t))):
            told.append(i)
    [at] = told
    assert "*** SIGTERM received at time=" in lines("eval32by/024.log")[at - 1]


def test_a_wait_of_ten_minutes_is_a_stuck_start_by_itself(tmp_path: Path) -> None:
    """Without a stop: the default back-off's next lines (310 s, then 630 s) after the excerpt's 150 s line; the 630 s
    line (past PAGE_WAIT_S) is the start stuck by itself, told on that line; the 310 s line is not."""
    ls = lines("eval32by/024.log")[:-1]
    last = ls[-1]
    later = [last.replace("150 seconds", "310 seconds"), last.replace("150 seconds", "630 seconds")]
    p = Parser()
    told = [
        i
        for i, t in enumerate([*ls, *later], 1)
        if any(isinstance(e, EngineError) for e in p.feed(LogLine("x", i, t)))
    ]
    assert told == [len(ls) + 2], told
    log = tmp_path / "ten.log"
    log.write_text("\n".join([*ls, *later]) + "\n")
    f = by_id(diagnose(log)).get("engine_startup_failed")
    assert f is not None and f["severity"] == "critical" and "630 seconds" in f["evidence"], f


def test_abseils_sigterm_line_is_a_stop_not_a_crash() -> None:
    """BY2 part 1: Abseil's failure-signal handler prints '*** SIGTERM received at time=…' for SIGTERM as for the
    faults; SIGTERM (SIGINT, SIGHUP) is a stop someone asked for: no crash. The faults stay crashes."""
    sigterm = lines("eval32by/024.log")[-1]
    assert hosted.fatal_signal(sigterm) is None
    assert hosted.fatal_signal(sigterm.replace("SIGTERM", "SIGINT")) is None
    assert hosted.fatal_signal(sigterm.replace("SIGTERM", "SIGSEGV")) == "SIGSEGV"


def test_the_same_place_with_a_sigsegv_line_is_still_a_crash(tmp_path: Path) -> None:
    """The other side: the excerpt's start up to its first waiting line, then Abseil's line naming SIGSEGV in place of
    SIGTERM: a native crash, as before."""
    ls = lines("eval32by/024.log")
    log = tmp_path / "segv.log"
    log.write_text("\n".join([*ls[:10], ls[-1].replace("SIGTERM", "SIGSEGV")]) + "\n")
    d = diagnose(log)
    crashed = by_id(d).get("engine_crashed")
    assert crashed is not None and crashed["data"]["signal"] == "SIGSEGV", d["findings"]


def test_a_placement_group_wait_that_ends_with_the_model_loading_is_no_failure(tmp_path: Path) -> None:
    """The other side: a multi-node start where the wait ends well (a node joins within 30 s): the warning, the 10 s
    and 30 s waiting lines, then the model loading and its KV cache sized. No failure, nothing critical."""
    ls = lines("eval32by/024.log")
    ok = [
        "INFO 05-26 18:54:31 [ray_distributed_executor.py:176] use_ray_spmd_worker: False",
        "INFO 05-26 18:54:52 [model_runner.py:1108] Starting to load model Qwen/Qwen2.5-32B-Instruct...",
        "INFO 05-26 18:56:10 [model_runner.py:1140] Model loading took 15.3492 GiB and 77.892543 seconds",
        "INFO 05-26 18:56:31 [executor_base.py:112] # cuda blocks: 9011, # CPU blocks: 16384",
    ]
    log = tmp_path / "joined.log"
    log.write_text("\n".join([*ls[:11], *ok]) + "\n")
    d = diagnose(log)
    not_failing(d)


def test_waiting_lines_without_the_short_warning_are_not_this_reading(tmp_path: Path) -> None:
    """Narrow: without initialize_ray_cluster's warning (the cluster has the GPUs in all, e.g. busy with another job)
    the waiting lines alone say nothing here, even past 150 s."""
    ls = lines("eval32by/024.log")
    log = tmp_path / "nowarn.log"
    log.write_text("\n".join(x for x in ls[:13] if "exceeds the total number" not in x) + "\n")
    d = diagnose(log)
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_the_waits_own_exception_is_the_same_failed_start() -> None:
    """BY2's end of the wait, on eval32bd 024's real excerpt: V1's engine core's 'ValueError: Cannot provide a placement
    group requiring 4.0 GPUs (…) within 1800 seconds.' (_wait_until_pg_ready gave up): the same failed start, with
    the same fix (Ray's GPUs or the parallel sizes), never a crash or a memory flag."""
    d = diagnose("eval32bd/024.log")
    f = by_id(d).get("engine_startup_failed")
    assert f is not None and f["severity"] == "critical", d["findings"]
    assert "ray status" in (f["data"].get("fix") or ""), f
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)


def test_the_sidecar_pages_on_the_stop_and_not_before(tmp_path: Path) -> None:
    """Live (tests/test_sidecar_paging.py's way): the sidecar tailing 024 as it is written says nothing while the wait
    may still end (through the 150 s line), and pages engine_startup_failed once the stop's line is written."""
    ls = [x + "\n" for x in lines("eval32by/024.log")]
    log = tmp_path / "vllm.log"
    log.write_bytes(b"")
    car = Sidecar(
        SidecarSettings(logs=[str(log)], listen_port=0, use_watchdog=False, from_start=True), clock=Clock()
    )
    append_to(log, "".join(ls[:13]).encode())
    car.poll_logs_once()
    inst = car.analyze_once()
    assert inst is not None and not [f for f in inst.findings if f.severity == "critical"], inst.findings
    append_to(log, ls[13].encode())
    car.poll_logs_once()
    inst = car.analyze_once()
    assert inst is not None
    assert [f.severity for f in inst.findings if f.id == "engine_startup_failed"] == ["critical"], (
        inst.findings
    )
