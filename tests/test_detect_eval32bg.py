"""The classes of the blind set eval32bg fixed after its measurement (tests/data/eval32bg/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from tests.diagnosekit import DATA, by_id, critical, diagnose, lines, not_failing, suggestions


def _kinds(d: dict) -> list[str]:
    return [e["kind"] for e in d["events"]["errors"]]


def test_an_asgi_traceback_cut_at_the_route_decorator_is_one_requests() -> None:
    """BG1 (010): a 2026 API server's uvicorn record 'Exception in ASGI application', its traceback elided down to the
    route decorator's frame (entrypoints/serve/utils/api_utils.py, with_cancellation's ``wrapper``: ``return
    handler_task.result()`` re-raises the one request's handler error, answered 500). The server went on: a warning at
    most, phase serving. (The only real excerpt of this cut form found in the sets and the stored threads.)"""
    d = diagnose("eval32bg/010.log")
    not_failing(d)
    assert by_id(d)["engine_error"]["data"]["phase"] == "serving", d["findings"]


def test_a_frame_below_the_route_decorator_or_no_asgi_record_is_read_as_before(tmp_path: Path) -> None:
    """The other side of BG1 (010): the same record going on into the engine's own frame (V0's engine_step, as eval32ad
    015's ASGI traceback prints it) stays critical, and the decorator's frame with uvicorn's record taken out is read
    as before (a traceback cut in vLLM's code, critical)."""
    step = next(ln for ln in lines("eval32ad/015.log") if "in engine_step" in ln)
    log = tmp_path / "deeper.log"
    log.write_text("\n".join([*lines("eval32bg/010.log"), step]) + "\n")
    assert critical(diagnose(log))
    log = tmp_path / "no-asgi.log"
    log.write_text("\n".join(ln for ln in lines("eval32bg/010.log") if "ASGI" not in ln) + "\n")
    assert critical(diagnose(log))


def test_a_requests_precomputed_embeddings_refused_by_the_schema_is_one_requests() -> None:
    """BG1 (012): the bare 'ValueError: image_embeds has rank 3 but expected 2' (vllm/utils/tensor_schema.py's words,
    the model's ImageEmbeddingInputs refusing a request's precomputed embeddings; only a request carries *_embeds, the
    start-up's profiling feeds dummy raw media): one request's input refused, not a failed launch. (The only real
    excerpt found: the sets and the stored threads hold no other line of it.)"""
    d = diagnose("eval32bg/012.log")
    not_failing(d)
    assert "launch_rejected" not in by_id(d)
    assert _kinds(d) == ["request_error"], d["events"]["errors"]


def test_the_schemas_refusal_in_an_engine_core_or_of_raw_media_stays_critical(tmp_path: Path) -> None:
    """The other side of BG1 (012): the same words as the last line of an engine core's record (its process prefix and
    core.py logger: the engine's step raised) and a schema refusal of a raw-media field (pixel_values, which the
    start-up's dummy inputs carry too) are read as before, critical."""
    text = lines("eval32bg/012.log")[0]
    log = tmp_path / "core.log"
    log.write_text(f"(EngineCore_DP0 pid=41) ERROR 05-29 20:32:45 [core.py:710] {text}\n")
    assert critical(diagnose(log))
    log = tmp_path / "pixels.log"
    log.write_text(text.replace("image_embeds", "pixel_values") + "\n")
    assert critical(diagnose(log))


def test_a_grammar_rejecting_one_requests_token_ends_that_request_only() -> None:
    """BG2 (014): a flattened paste of xgrammar's 'Failed to advance FSM for request … Please file an issue.'
    (backend_xgrammar.py accept_tokens), the scheduler's 'Unexpected: grammar rejected tokens […] for request ….
    Terminating request.' (update_from_output: that request FINISHED_ERROR), the API server's 'Request … failed with an
    internal error during generation' and its 500: one request ended, the engine goes on. A warning at most, phase
    serving (not start-up). Second real excerpts: 018's scheduler line and 016's FSM lines (quoted without prefixes,
    vllm#42619's rendering), each read as one request's error."""
    d = diagnose("eval32bg/014.log")
    not_failing(d)
    assert by_id(d)["engine_error"]["data"]["phase"] == "serving", d["findings"]
    assert _kinds(d)[:2] == ["request_error", "request_error"], d["events"]["errors"]
    for log in ("eval32bg/016.log", "eval32bg/018.log"):
        d = diagnose(log)
        not_failing(d)
        assert "request_error" in _kinds(d), (log, d["events"]["errors"])


def test_the_engines_death_beside_a_grammar_rejection_stays_critical(tmp_path: Path) -> None:
    """The other side of BG2: 014's lines with the V1 client's record of a dead engine core before them (eval32s 028's
    first line, 'Engine core proc EngineCore_DP1 died unexpectedly') is the engine's crash, as before."""
    log = tmp_path / "died.log"
    log.write_text("\n".join([*lines("eval32bg/014.log"), lines("eval32s/028.log")[0]]) + "\n")
    d = diagnose(log)
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]


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


def test_a_filling_kv_cache_with_nothing_waiting_or_preempted_gets_no_lever() -> None:
    """BG6 (004, its only real excerpt): V1 stats lines with the KV cache climbing (11.7 % to 99.3 %) while the batch
    that filled it leaves (13 running at most, 1 at the last line), 'Waiting: 0 reqs' in every sample and no
    preemption: kv_cache_saturated stays a warning, but no flag is suggested, and its note says in one sentence why
    (the memory is used, not short)."""
    d = diagnose("eval32bg/004.log")
    assert "kv_cache_saturated" in by_id(d) and not critical(d), d["findings"]
    assert not suggestions(d), d["recommendations"]
    (note,) = [n["text"] for n in d["advice_notes"] if "kv_cache_saturated" in n["finding_ids"]]
    assert "no request waited or was preempted" in note, note


@pytest.mark.parametrize("log", ["corpus/005-v0-tt-fork-heartbeat-kv-climbing.log", "eval32/020.log"])
def test_the_same_requests_decoding_into_a_full_cache_keep_the_kv_plan(log: str) -> None:
    """The other side of BG6: nothing waits either, but the same requests run in every sample (16 in V0 at 92.1 % →
    94.9 %, 8 in V1 at 93.9 % → 95.8 %) while their decodes fill the cache: their next blocks have nowhere to go and
    preemption follows (the corpus expert's reading of 005), so the KV plan stays."""
    d = diagnose(log)
    assert "kv_cache_saturated" in by_id(d), d["findings"]
    assert {"--gpu-memory-utilization", "--max-num-seqs", "--kv-cache-dtype"} & set(suggestions(d)), d[
        "recommendations"
    ]


def test_the_same_lines_with_requests_waiting_keep_the_kv_plan(tmp_path: Path) -> None:
    """The other side of BG6, on 004's own lines: the last two samples with requests waiting bring the KV plan back
    (a cache full while requests queue is short)."""
    lines = (DATA / "eval32bg" / "004.log").read_text(encoding="utf-8").splitlines()
    waited = [x.replace("Waiting: 0 reqs", "Waiting: 4 reqs") if i >= 5 else x for i, x in enumerate(lines)]
    p = tmp_path / "waited.log"
    p.write_text("\n".join(waited) + "\n", encoding="utf-8")
    d = diagnose(p)
    assert "--gpu-memory-utilization" in suggestions(d), d["recommendations"]
