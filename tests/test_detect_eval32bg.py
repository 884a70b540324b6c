"""The classes of the blind set eval32bg fixed after its measurement (tests/data/eval32bg/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from tests.diagnosekit import DATA, by_id, critical, diagnose, suggestions


def test_a_flattened_start_up_whose_worker_died_before_the_core_was_ready_is_a_failed_start() -> None:
    """BG3 (015): one flattened line, CUDA-graph capture failing at 143/147, 'Worker proc VllmWorker-7 died
    unexpectedly, shutting down executor.' and then, on the same line, the client's 'RuntimeError: Engine core
    initialization failed.' (raised when a core process exits before its ready handshake): the engine died starting,
    it never served. (The only real excerpt of the flattened form found.)"""
    d = diagnose("eval32bg/015.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_workers_death_notice_alone_is_still_a_crash() -> None:
    """The other side of BG3 (eval32r 025): the engine client's 'died unexpectedly' notice with no failed start after
    it on its line stays the crash it was."""
    d = diagnose("eval32r/025.log")
    assert "engine_crashed" in by_id(d), d["findings"]


def test_nccls_full_dev_shm_is_a_failed_start_whose_fix_is_the_containers_shm() -> None:
    """BG4 (019): NCCL's bare 'Error: failed to extend /dev/shm/nccl-YrFC5V to 33030532 bytes, error: No space left on
    device' (shmutils.cc's fallocate of its segment, under Dynamo with TP > 1 in docker's 64 MB /dev/shm): the
    process's failed start, the fix the container's --shm-size or --ipc=host, never GPU memory."""
    d = diagnose("eval32bg/019.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    (note,) = [n["text"] for n in d["advice_notes"] if "engine_startup_failed" in n["finding_ids"]]
    assert "--shm-size" in note and "--ipc=host" in note, note


def test_nccls_second_warning_of_a_full_dev_shm_under_its_prefix_is_read_the_same() -> None:
    """BG4's second real excerpt (llm-d#352): NCCL's 'misc/shmutils.cc:129 NCCL WARN Error while creating shared memory
    segment /dev/shm/nccl-… (size 33030528), error: No space left on device (28)' behind NCCL's host:pid:tid [rank]
    prefix, its INFO return trail, and a vLLM worker's 'Parent process exited': the same failed start."""
    d = diagnose("excerpts/nccl-shm-full-deepseek-ep-llm-d-352.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_bare_killed_after_vllms_start_up_lines_is_the_process_killed_starting() -> None:
    """BG5 (020): four V0 start-up INFO lines (the last one about loading the weights), then the shell's bare 'Killed'
    (SIGKILL: here the host's OOM killer, 2x RTX 4090 with 128 GB RAM): the launch's failed start, no CUDA OOM, no
    GPU memory flag, the note pointing at host RAM. (The only real excerpt of the OOM form found.)"""
    d = diagnose("eval32bg/020.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert not {"engine_crashed", "cuda_oom"} & set(by_id(d)), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), d["recommendations"]
    (note,) = [n["text"] for n in d["advice_notes"] if "engine_startup_failed" in n["finding_ids"]]
    assert "host RAM" in note, note


@pytest.mark.parametrize("log", ["eval32aw/013.log", "eval32d/019.log"])
def test_killed_after_vllms_own_fatal_signal_keeps_the_failure_it_follows(log: str) -> None:
    """The other real 'Killed' lines of the sets follow V1's client 'Got fatal signal from worker processes' (its
    handler kills its own process tree): the failure before it stays the root cause, still a failed start."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    (note,) = [n["text"] for n in d["advice_notes"] if "engine_startup_failed" in n["finding_ids"]]
    assert "host RAM" not in note, note


def test_killed_is_read_only_after_vllms_lines_and_alone_on_its_line(tmp_path: Path) -> None:
    """BG5's bounds, on 020's own lines: 'Killed' with no vLLM line before it is anybody's; inside other text it is no
    shell report; after a stats line it is the engine's death by SIGKILL while serving."""
    lines = (DATA / "eval32bg" / "020.log").read_text(encoding="utf-8").splitlines()
    alone = tmp_path / "alone.log"
    alone.write_text("Killed\n", encoding="utf-8")
    with pytest.raises(InputError):  # refused: no line is vLLM's, nothing read
        diagnose(alone)
    inline = tmp_path / "inline.log"
    inline.write_text(
        "\n".join([*lines[:-1], "the job was Killed by the scheduler"]) + "\n", encoding="utf-8"
    )
    assert not critical(diagnose(inline))
    stats = next(
        x
        for x in (DATA / "eval32bg" / "004.log").read_text(encoding="utf-8").splitlines()
        if "Avg prompt throughput" in x
    )
    served = tmp_path / "served.log"
    served.write_text("\n".join([*lines[:-1], stats, "Killed"]) + "\n", encoding="utf-8")
    d = diagnose(served)
    assert "engine_crashed" in by_id(d) and "engine_startup_failed" not in by_id(d), d["findings"]


@pytest.mark.parametrize("log", ["eval32bg/004.log", "eval32/020.log"])
def test_a_filling_kv_cache_with_nothing_waiting_or_preempted_gets_no_lever(log: str) -> None:
    """BG6 (004, and eval32 020 as its second real excerpt): V1 stats lines with the KV cache climbing (11.7 % to
    99.3 %; 93.9 % to 95.8 %), 'Waiting: 0 reqs' in every sample and no preemption: kv_cache_saturated stays a
    warning, but no flag is suggested, and its note says in one sentence why (the memory is used, not short)."""
    d = diagnose(log)
    assert "kv_cache_saturated" in by_id(d) and not critical(d), d["findings"]
    assert not suggestions(d), d["recommendations"]
    (note,) = [n["text"] for n in d["advice_notes"] if "kv_cache_saturated" in n["finding_ids"]]
    assert "no request waited or was preempted" in note, note


def test_the_same_lines_with_requests_waiting_keep_the_kv_plan(tmp_path: Path) -> None:
    """The other side of BG6, on 004's own lines: the last two samples with requests waiting bring the KV plan back
    (a cache full while requests queue is short)."""
    lines = (DATA / "eval32bg" / "004.log").read_text(encoding="utf-8").splitlines()
    waited = [x.replace("Waiting: 0 reqs", "Waiting: 4 reqs") if i >= 5 else x for i, x in enumerate(lines)]
    p = tmp_path / "waited.log"
    p.write_text("\n".join(waited) + "\n", encoding="utf-8")
    d = diagnose(p)
    assert "--gpu-memory-utilization" in suggestions(d), d["recommendations"]
