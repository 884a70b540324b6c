"""The misses of issue 32's blind set eval32p (tests/data/eval32p/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import failures, oom
from observe.parse.failures import RunState
from tests.diagnosekit import critical, diagnose, suggestions

DATA = Path(__file__).parent / "data" / "eval32p"


def test_the_tool_choice_fallback_logged_at_error_is_no_failure() -> None:
    """CA (008: V1 ~0.8.5, three '[serving_chat.py:898] Error in chat_completion_full_generator - cannot determine if
    tools should be extracted. Returning a standard chat completion.' records, each followed by a 200): 0.8.5's
    serving_chat.py logs that with logger.error in the branch where neither auto tool choice nor a named tool
    applies, then answers with a plain chat completion. No critical finding, no engine_error; the record is no
    error record at all."""
    d = diagnose(DATA / "008.log")
    assert not critical(d), d["findings"]
    assert "engine_error" not in {f["id"] for f in d["findings"]}
    lines = (DATA / "008.log").read_text().splitlines()
    msgs = [ln.split("] ", 1)[1] for ln in lines if ln.startswith("ERROR")]
    assert len(msgs) == 3 and all(failures.error_line(m, RunState(False, True)) is None for m in msgs)
    # another ERROR record of the same module still is one
    other = msgs[0].replace("cannot determine if tools should be extracted", "something else failed")
    assert failures.error_line(other, RunState(False, True)) is not None


def test_an_oom_allocating_the_kv_cache_beside_other_processes_lowers_the_utilization() -> None:
    """CB (018: V0 ~0.7 MQLLMEngine, frames _init_cache_engine → CacheEngine → _allocate_kv_cache, then 'CUDA out of
    memory. Tried to allocate 418.00 MiB … 193.25 MiB is free. Process 1254 has 730.00 MiB memory in use. … Process
    2167142 has 14.90 GiB memory in use.'): the phase is the KV cache's allocation (worker.py's initialize_cache →
    _init_cache_engine, cache_engine.py's _allocate_kv_cache: start-up only), and with several 'Process N has' and no
    'this process has' clause (NVML's PIDs seen from outside the container) which one is this engine is unknown — not
    the first listed. The lever: a lower --gpu-memory-utilization (the profile sized the cache to it; other
    processes hold ~8.6 GiB)."""
    d = diagnose(DATA / "018.log")
    ooms = [f for f in d["findings"] if f["id"] == "cuda_oom"]
    assert ooms and ooms[0]["severity"] == "critical", d["findings"]
    assert ooms[0]["data"]["phase"] == "kv_cache_init"
    assert ooms[0]["data"].get("process_in_use_gib") is None
    util = suggestions(d).get("--gpu-memory-utilization")
    assert util and all(isinstance(v, float) and v < 0.9 for v in util), d["recommendations"]
    reason = d["recommendations"][0]["reason"]
    assert "KV cache" in reason and "really free" in reason


def test_one_process_listed_without_the_this_process_clause_is_still_read_as_this_one() -> None:
    """PyTorch 2.1's wording names no 'this process' and lists one 'Process N has …': that one may be this engine, as
    before (018's figures, one process kept)."""
    msg = (DATA / "018.log").read_text().splitlines()[-1].split("] ", 1)[1]
    one = msg.split(" Process 1243")[0] + " Of the allocated memory 14"
    assert oom.oom_details("CUDA", one)["process_in_use_gib"] == round(730 / 1024, 6)
    assert "process_in_use_gib" not in oom.oom_details("CUDA", msg)


def test_a_rank_prefixed_traceback_header_cut_after_the_model_load_began_is_a_failure() -> None:
    """CC (026: V0 0.6.1.post2 offline LLM, 'Starting to load model …' then '[rank0]: Traceback (most recent call
    last):', cut): from 2.3 PyTorch's init_process_group installs an excepthook that prints an uncaught exception's
    traceback under '[rankN]: ' (distributed_c10d.py _distributed_excepthook); only an exception nothing caught
    reaches it, so the process was exiting. A critical engine error on rank 0."""
    d = diagnose(DATA / "026.log")
    crit = critical(d)
    assert crit and crit[0]["id"] in ("engine_startup_failed", "engine_error"), d["findings"]
    assert crit[0]["data"]["rank"] == 0 and "excepthook" in crit[0]["evidence"]


def test_the_same_header_without_the_rank_prefix_is_not_read_alone(tmp_path: Path) -> None:
    """A bare 'Traceback (most recent call last):' is also what traceback.print_exc() prints for an exception a
    handler caught (uvicorn's 'Exception in ASGI application'): without PyTorch's rank prefix the header alone
    says nothing (026's lines, the prefix taken off)."""
    log = tmp_path / "vllm.log"
    log.write_text((DATA / "026.log").read_text().replace("[rank0]: ", ""))
    assert not critical(diagnose(log))
