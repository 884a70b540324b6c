"""The classes of the blind set eval32bv fixed after its measurement (tests/data/eval32bv/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.parse import startonly
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose

_RUN = RunState(shutdown=False, stats_seen=False)


def test_a_cut_traceback_at_the_kv_sizing_rpc_is_the_failed_start() -> None:
    """BV1 (008): a bare V1 traceback cut at both ends, its first line the executor's
    'return self.collective_rpc("determine_available_memory")' (v1/executor/abstract.py: called only by
    EngineCore._initialize_kv_caches), then multiproc_executor's collective_rpc / result / _wait_for_response: the
    workers' memory profiling failed, so the start-up failed (profiling), never a crash while serving."""
    d = diagnose("eval32bv/008.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    f = by_id(d)["engine_startup_failed"]
    assert f["data"]["phase"] == "profiling" and f["data"]["frame"] == "determine_available_memory", f
    assert "engine_crashed" not in by_id(d) and "engine_error" not in by_id(d), d["findings"]


def test_the_same_cut_traceback_at_a_serving_rpc_keeps_its_phase_unknown(tmp_path: Path) -> None:
    """The other side of BV1: the same excerpt, its first line naming a method the executor asks for while serving
    ('execute_model'), or one it asks for again when a data-parallel group grows ('compile_or_warm_up_model'), names no
    start-up: engine_error, phase unknown, as before."""
    text = (DATA / "eval32bv/008.log").read_text()
    for method in ("execute_model", "compile_or_warm_up_model"):
        log = tmp_path / f"{method}.log"
        log.write_text(text.replace('"determine_available_memory"', f'"{method}"'))
        d = diagnose(log)
        assert critical(d) and "engine_error" in by_id(d), d["findings"]
        assert by_id(d)["engine_error"]["data"]["phase"] == "unknown", d["findings"]
        assert "engine_startup_failed" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    ("line", "method"),
    [
        ('return self.collective_rpc("determine_available_memory")', "determine_available_memory"),
        ("self.collective_rpc('initialize_from_config', args=(kv_cache_configs,))", "initialize_from_config"),
        ('self.collective_rpc("load_model")', "load_model"),
        ('output = self.collective_rpc("execute_model", args=(scheduler_output,))', None),
        ('self.collective_rpc("compile_or_warm_up_model")', None),
        ("return self.collective_rpc(method)", None),
    ],
)
def test_only_a_start_up_rpc_names_the_start(line: str, method: str | None) -> None:
    """BV1's reading, line by line: only a method the executor asks for while the engine is built."""
    f = startonly.frame(line, _RUN)
    if method is None:
        assert f is None
    else:
        assert f is not None and f.details["frame"] == method and f.details["before_serving"], f


def test_a_v0_model_runners_warm_up_that_raised_is_the_failed_start() -> None:
    """BV3 (015): HabanaAI's vllm-fork, a '[rank0]:' traceback through vllm/worker/hpu_model_runner.py warmup_model
    ending 'AssertionError: HabanaWorker.determine_num_available_blocks needs to be called before warming up the
    model.': the worker's warm-up runs only from its initialize_cache (hpu_worker.py _warm_up_model), before the engine
    serves: the failed start-up, not an error of unknown standing."""
    d = diagnose("eval32bv/015.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d) and "engine_error" not in by_id(d), d["findings"]


def test_the_same_exception_without_the_warm_up_frame_is_not_read_as_the_start(tmp_path: Path) -> None:
    """The other side of BV3: the exception line alone (no frame of the warm-up) stays the catch-all's engine_error;
    a frame named warmup_model outside vLLM's V0 worker folder names nothing."""
    last = (DATA / "eval32bv/015.log").read_text().splitlines()[-1]
    log = tmp_path / "alone.log"
    log.write_text(last + "\n")
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" not in by_id(d), d["findings"]
    other = 'File "/srv/app/runner.py", line 12, in warmup_model'
    assert startonly.frame(other, _RUN) is None
