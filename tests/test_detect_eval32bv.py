"""The classes of the blind set eval32bv fixed after its measurement (tests/data/eval32bv/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.parse import euroeval, hosted, startonly
from observe.parse.envelope import Ctx
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose, lines

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


# ---------------------------------------------------------------------------------------------------------------------
# BV2, BV4, BV5 (branch fix-bv-b)
# ---------------------------------------------------------------------------------------------------------------------

_STARTING = RunState(shutdown=False, stats_seen=False)
_SERVING = RunState(shutdown=False, stats_seen=True)
_STOPPED = RunState(shutdown=True, stats_seen=False, requested=True)


def test_bv2_a_ray_workers_empty_worker_base_error_line_among_load_lines_is_a_failed_start() -> None:
    """BV2 (014): V0 0.8 over Ray, one '(RayWorkerWrapper pid=322, ip=…) ERROR … [worker_base.py:620] ' line with
    nothing after the prefix: a line of execute_method's logger.exception record (worker_base.py's only ERROR call,
    0.5.5 → 0.11 and v1/worker/worker_base.py since), each line prefixed by vLLM's formatter. A worker's method raised;
    Ray's '[repeated 14x across cluster]' load lines after it put the launch in loading and nothing served: the failed
    start (loading), no crash while serving."""
    d = diagnose("eval32bv/014.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert by_id(d)["engine_startup_failed"]["data"]["phase"] == "loading"
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_bv2_only_worker_base_s_empty_error_line_of_a_worker_reads_and_the_phase_is_the_runs(
    tmp_path,
) -> None:
    """BV2's other side: the same empty line after a stats line is the worker failing while serving (engine_error,
    not a failed start); an empty ERROR line of another file, or of worker_base.py under the API server's prefix, or
    after a requested stop, reads nothing."""
    from observe.parse import workerbase

    line = lines("eval32bv/014.log")[0]
    assert line.rstrip().endswith("[worker_base.py:620]")
    ray = Ctx("x", 1, level="ERROR", process="RayWorkerWrapper", pid=322, logger_file="worker_base.py")
    f = workerbase.method_failed("", ray, _STARTING)
    assert f is not None and f.details["worker_method"] and f.details["phase"] == "startup"
    assert workerbase.method_failed("", ray, _SERVING).details["phase"] == "serving"  # type: ignore[union-attr]
    assert workerbase.method_failed("", ray, _STOPPED) is None
    other = Ctx("x", 1, level="ERROR", process="RayWorkerWrapper", pid=322, logger_file="model_runner.py")
    assert workerbase.method_failed("", other, _STARTING) is None
    api = Ctx("x", 1, level="ERROR", process="APIServer", pid=1, logger_file="worker_base.py")
    assert workerbase.method_failed("", api, _STARTING) is None
    warn = Ctx("x", 1, level="WARNING", process="RayWorkerWrapper", pid=322, logger_file="worker_base.py")
    assert workerbase.method_failed("", warn, _STARTING) is None
    # after a stats line: a worker's method failed while serving, not a start
    stats = (
        "INFO 04-29 13:38:40 [metrics.py:488] Avg prompt throughput: 0.0 tokens/s, Avg generation throughput: 10.0 "
        "tokens/s, Running: 1 reqs, Swapped: 0 reqs, Pending: 0 reqs, GPU KV cache usage: 1.0%, CPU KV cache usage: "
        "0.0%."
    )
    log = tmp_path / "serving.log"
    log.write_text(stats + "\n" + line + "\n")
    d = diagnose(log)
    assert "engine_startup_failed" not in by_id(d) and "engine_crashed" not in by_id(d), d["findings"]
    assert by_id(d)["engine_error"]["data"]["phase"] == "serving", d["findings"]


def test_bv4_vllm_tgis_adapters_termination_log_failure_before_serving_is_a_failed_start() -> None:
    """BV4 (020): ramalama's vLLM CPU image, 'Started engine process with PID 23', then vllm-tgis-adapter's 'Unable to
    write termination logs to /dev/termination-log' (utils.py write_termination_log, called only by __main__.py
    run_and_catch_termination_cause when the server's main task raised an Exception, then re-raised) and a traceback cut
    at 'Traceback (most': the server went down with an error before any stats line, the failed start; no crash."""
    d = diagnose("eval32bv/020.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_bv4_the_termination_log_line_alone_and_its_other_side() -> None:
    """BV4's other side: after a stats line the same line is the server's exit while serving (not a start); after a
    requested stop nothing; other words about a termination log read nothing."""
    line = next(x for x in lines("eval32bv/020.log") if "termination" in x).strip()
    f = hosted.death(line, _STARTING)
    assert f is not None and f.details["before_serving"] and f.key == ("tgis_adapter", "termination")
    g = hosted.death(line, _SERVING)
    assert g is not None and g.details["phase"] == "serving" and not g.details.get("before_serving")
    assert hosted.death(line, _STOPPED) is None
    assert (
        hosted.death("Not writing to termination log /dev/termination-log since it does not exist", _STARTING)
        is None
    )
    assert hosted.death("We were unable to write termination logs to disk, retrying", _STARTING) is None


def test_bv5_euroevals_named_vllm_config_refusal_is_the_refused_launch() -> None:
    """BV5 (021): EuroEval's 'The model '<id>' could not be loaded. The error was ValueError('Unsupported config format:
    auto').' (benchmark_modules/vllm.py: building vllm.LLM raised; vLLM 0.8.2's get_config with neither config.json nor
    params.json in the repository, a GGUF repository): the refused launch, its fix pointing vLLM at the .gguf file with
    --tokenizer; no crash; the model id stays out of the output."""
    d = diagnose("eval32bv/021.log")
    assert critical(d) and "launch_rejected" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    notes = str(d["advice_notes"])
    assert ".gguf file" in notes and "--tokenizer" in notes, d["advice_notes"]
    assert not d["recommendations"], d["recommendations"]
    assert "gemma" not in str(d).lower()


def test_bv5_only_vllms_config_refusal_named_is_read() -> None:
    """BV5's other side: the same sentence naming another error (benchmark_modules/hf.py raises it word for word for
    transformers' encoder loads) is not read; vLLM 0.8.4+'s wording of the same refusal is; after a requested stop or
    once served, nothing."""
    line = next(x for x in lines("eval32bv/021.log") if "could not be loaded" in x)
    text = line.split(" ⋅ ", 1)[1].strip()
    f = euroeval.death(text, _STARTING)
    assert f is not None and f.details["reason"] == "config_format" and f.details["value"] == "auto"
    assert (
        euroeval.death("The model 'm' could not be loaded. The error was ValueError('x').", _STARTING) is None
    )
    oserr = "The model 'm' could not be loaded. The error was OSError(\"m does not appear to have a file named config.json\")."
    assert euroeval.death(oserr, _STARTING) is None
    newer = (
        "The model 'm' could not be loaded. The error was ValueError(\"Invalid repository ID or local directory "
        "specified: 'm'.\\nPlease verify the following requirements:\")."
    )
    g = euroeval.death(newer, _STARTING)
    assert g is not None and g.details["reason"] == "config_format" and g.details["value"] is None
    assert euroeval.death(text, _STOPPED) is None
    assert euroeval.death(text, _SERVING) is None


# ---------------------------------------------------------------------------------------------------------------------
# Found while fixing BV2: execute_method's record names the method by its repr from 0.6 on
# ---------------------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "log, method",
    [
        ("eval32bd/008.log", "load_model"),
        ("eval32as/010.log", "initialize_cache"),
        ("eval32al/023.log", "init_device"),
    ],
)
def test_a_quoted_start_up_method_in_execute_methods_record_is_the_failed_start(
    log: str, method: str
) -> None:
    """V0's WorkerWrapperBase.execute_method logs f"Error executing method {method!r}. This might cause deadlock …"
    (0.6 → 0.11: the name in quotes; 0.4 / 0.5 bare): the worker-method row read only the bare name, so these three real
    excerpts ('load_model' over Ray, 'initialize_cache', 'init_device') fell to the catch-all engine_error. The quoted
    name is read: the worker's start-up method raised, the failed start, its method named in the evidence (a method's
    name is vLLM's, not a user's: kept by redaction's template)."""
    d = diagnose(log)
    start = by_id(d).get("engine_startup_failed")
    assert start is not None and start["data"].get("method") == method, d["findings"]
    assert f"'{method}'" in start["evidence"] and "<redacted" not in start["evidence"], start


def test_a_quoted_serving_method_in_execute_methods_record_is_no_start(tmp_path: Path) -> None:
    """The other side: the same record for 'execute_model' (the step, while serving) is not a failed start."""
    line = next(x for x in lines("eval32bd/008.log") if "Error executing method 'load_model'" in x)
    log = tmp_path / "serving.log"
    log.write_text(line.replace("'load_model'", "'execute_model'") + "\n")
    d = diagnose(log)
    assert "engine_startup_failed" not in by_id(d), d["findings"]
