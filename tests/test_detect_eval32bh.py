"""The classes of the blind set eval32bh fixed after its measurement (tests/data/eval32bh/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose, lines


def _write(tmp_path: Path, lines: list[str]) -> Path:
    p = tmp_path / "cut.log"
    p.write_text("\n".join(lines) + "\n")
    return p


@pytest.mark.parametrize(
    "log",
    [
        # BH2: InstructLab's 'vLLM failed to start.  Retry with --enable-serving-output ...' alone (its CI)
        "eval32bh/007.log",
        # BH2, second real excerpt: behind ilab's 'Failed to start server: ', after its backend's start-up lines
        "excerpts/ilab-vllm-failed-to-start-instructlab-2258.log",
        # BH2: llm-d-benchmark's '❌ Crashed container in pod: vllm-standalone-...' while it waits for Ready (the only
        # real excerpt found of it)
        "eval32bh/025.log",
    ],
)
def test_a_launchers_own_verdict_that_vllm_did_not_start_is_a_failed_start(log: str) -> None:
    """BH2: the program that launched vLLM says, in its own words, the vLLM process it waits on died before it came
    up (vLLM's output hidden): a failed start-up, never a death while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_crashed_pod_that_is_not_vllms_is_not_read() -> None:
    """BH2, narrowly: llm-d-benchmark's crash note for a pod whose name does not say vLLM (its harness's pod, a
    gateway's) is not the engine's; its later form names the pod and the container."""
    run = RunState(shutdown=False, stats_seen=False)
    assert hosted.death("16:53:24 - ❌ Crashed container in pod: llmdbench-harness-launcher", run) is None
    later = (
        "ERROR: Crashed container in pod: vllm-standalone-qwen-0-6b-5d9c-x2, container: vllm-standalone-qwen"
    )
    f = hosted.death(later, run)
    assert (
        f is not None
        and f.details["phase"] == "startup"
        and "vllm-standalone-qwen-0-6b-5d9c-x2" in f.details["cause"]
    )
    # InstructLab's words must be the whole message: a sentence that merely quotes them is not read
    assert hosted.death("INFO user note: if vLLM failed to start. we retry later", run) is None


@pytest.mark.parametrize(
    "log",
    [
        # BH3: cot-eval's 'llm = VLLM(' -> langchain_core serializable -> pydantic v1 validate_model -> validator, cut
        "eval32bh/015.log",
        # BH3: ART's model.register(backend) -> art/local/backend.py _prepare_backend_for_training, cut
        "eval32bh/021.log",
    ],
)
def test_a_host_traceback_through_its_in_process_vllm_build_is_a_failing_start(log: str) -> None:
    """BH3 (only these two real excerpts of the cut form were found): LangChain's VLLM wrapper builds vllm.LLM in its
    validator, ART's local backend starts its vLLM-backed server in _prepare_backend_for_training; a traceback cut
    there is that start raising: critical, never a death while serving."""
    d = diagnose(log)
    assert critical(d), d["findings"]
    assert {"engine_startup_failed", "engine_error"} & set(by_id(d)), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_only_the_wrappers_build_and_the_local_backend_are_read() -> None:
    """BH3, narrowly: a printed repr of the wrapper, another class ending in VLLM (DSPy's HTTP client), and ART's
    serverless backend (which starts no engine) are not the in-process engine's start."""
    run = RunState(shutdown=False, stats_seen=False)
    assert hosted.death("llm = VLLM(", run) is not None
    assert hosted.death("return VLLM(model=name, tensor_parallel_size=2)", run) is not None
    assert hosted.death("VLLM(model='x', tensor_parallel_size=1) loaded", run) is None
    assert hosted.death("lm = dspy.HFClientVLLM(model=name, port=8000)", run) is None
    local = '  File "/x/ART/src/art/local/backend.py", line 272, in _prepare_backend_for_training'
    serverless = '  File "/x/ART/src/art/serverless/backend.py", line 90, in _prepare_backend_for_training'
    assert hosted.frame(local.strip(), run) is not None
    assert hosted.frame(serverless.strip(), run) is None


def test_verls_driver_traceback_after_its_vllm_rollout_is_the_run_failing() -> None:
    """BH4 (013): verl's rollout lines ('VLLM generating sequences'), then the driver's traceback through main_ppo's
    main (ray.get(main_task.remote(config))) into Ray's wrappers, cut: Hydra prints what main raised and exits, so the
    run failed — critical, never a failed start-up (it was generating)."""
    d = diagnose("eval32bh/013.log")
    assert critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_verls_driver_frame_alone_with_no_line_of_the_run_is_not_read(tmp_path: Path) -> None:
    """BH4, narrowly (BA3's precedent): the same driver traceback with none of the run's lines before it says nothing
    of vLLM — refused, as before; and the second real excerpt of that driver frame (eval32am 023, its RayTaskError
    through generate_sequences) keeps its reading, the engine's death while serving."""
    with pytest.raises(InputError):
        diagnose(_write(tmp_path, lines("eval32bh/013.log")[6:]))
    d = diagnose("eval32am/023.log")
    assert "engine_crashed" in by_id(d) and "engine_startup_failed" not in by_id(d), d["findings"]


def test_a_notebook_header_ending_the_paste_after_vllms_lines_is_the_cell_failing(tmp_path: Path) -> None:
    """BH4 (019, the only real excerpt of the form found): V0's 'Model loading took', then IPython's 'RuntimeError
    Traceback (most recent call last)' header as the paste's last line: the cell running vLLM raised — critical, not a
    death while serving; a line after the header (its frames) leaves the reading to them."""
    d = diagnose("eval32bh/019.log")
    assert critical(d), d["findings"]
    assert {"engine_startup_failed", "engine_error"} & set(by_id(d)), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert not critical(diagnose(_write(tmp_path, [*lines("eval32bh/019.log"), "Cell In[4], line 12"])))


@pytest.mark.parametrize(
    "log",
    [
        # BH1: an OpenRLHF Ray worker's traceback through vLLM's worker_base.py init_worker (the worker's class
        # resolved and built while the executor is set up), cut in importlib
        "eval32bh/009.log",
        # BH1's second real excerpt of the frame: a 2026 worker's multiproc_executor ERROR records cut under
        # v1/worker/worker_base.py init_worker (worker_class(**kwargs))
        "eval32l/002.log",
        # BH1: a 2026 EngineCore's record through gpu_model_runner.py profile_cudagraph_memory →
        # _init_minimal_kv_cache_for_profiling (the start-up's CUDA-graph memory estimate), cut
        "eval32bh/011.log",
    ],
)
def test_a_traceback_cut_in_a_start_up_only_frame_is_a_failed_start(log: str) -> None:
    """A cut traceback through a function vLLM runs only while it starts (a worker's construction, the CUDA-graph
    memory profiling) is the failed start-up, not an error of phase unknown, and never a crash while serving."""
    d = diagnose(log)
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_loggings_report_of_a_failed_log_call_is_no_failure() -> None:
    """BH5: the tail of Python logging's 'Logging error' report (handleError: the log call's stack printed as a
    traceback's frames, through from_engine_args → SchedulerConfig → logger.info, then 'Message: ...' and 'Arguments:
    (None,)'): the record is lost and the program goes on. No critical finding, no failed start-up."""
    d = diagnose("eval32bh/018.log")
    assert not critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]
    assert all(la.get("status") != "failed" for la in d.get("launches") or []), d.get("launches")


def test_bare_frames_without_loggings_message_and_arguments_still_tell(tmp_path: Path) -> None:
    """The other side of BH5: the same bare frames with the report's 'Arguments:' line gone are read as before (a
    start-up frame under a cut traceback); and a bare traceback cut in frames still tells at the stream's end
    (eval32bh 001, FastChat's worker under runpy)."""
    lines = (DATA / "eval32bh/018.log").read_text().splitlines()
    log = tmp_path / "no-arguments.log"
    log.write_text("\n".join(lines[:-1]) + "\n")
    assert "engine_startup_failed" in by_id(diagnose(log))
    assert critical(diagnose("eval32bh/001.log"))


def test_fastchats_vllm_worker_dying_before_it_registered_is_a_failed_start(tmp_path: Path) -> None:
    """BH1: V1's engine came up, then FastChat's model_worker announced 'Loading the model [...] ... worker type: vLLM
    worker...' and its stderr traceback through runpy's _run_module_as_main followed, cut, before 'Register to
    controller': the worker never came up (a failed start-up, not an error of unknown phase). Registered first, the
    same traceback is read as before (phase unknown)."""
    d = diagnose("eval32bh/001.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    lines = (DATA / "eval32bh/001.log").read_text().splitlines()
    log = tmp_path / "registered.log"
    log.write_text(
        "\n".join(
            [*lines[:8], "2025-03-27 11:37:40 | INFO | model_worker | Register to controller", *lines[8:]]
        )
    )
    assert "engine_startup_failed" not in by_id(diagnose(log))
