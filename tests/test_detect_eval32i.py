"""Issue 32, the ninth blind set's classes (tests/data/eval32i/RESULTS.md), each on the real excerpt that showed it
(tests/data/eval32i/, all from vllm-project/vllm; sources in tests/data/PROVENANCE.md).

A. PyTorch's NCCL watchdog (``ProcessGroupNCCL.cpp``) takes the worker down: a collective timeout ("ran for N
   milliseconds before timing out", the first one SeqNum=1 at start-up) or a CUDA error it met ("Process group
   watchdog thread terminated with exception") is the worker's death.
C/F. The OpenAI server's ``build_async_engine_client(_from_engine_args)`` runs before it serves: a traceback cut in
   it, and V0's "Engine process failed to start" raised there, are a failed start.
D. "Model architectures [...] are not supported for now" is vLLM's own refusal, even as a bare line.
B. A Jupyter / IPython traceback (the exception's type in its header, frames as ``File [/…/vllm/x.py:N](url), in f(``
   or ``[/…/vllm/x.py](url) in f(``) through vLLM's package: an OutOfMemoryError is the OOM, another type an error.
G. ``# GPU blocks: 0`` from a V0 engine of an unknown release at --gpu-memory-utilization 0.98 is not answered
   with "raise it to 1": V0's default was 0.9, the newest release's 1.0 does not apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.diagnosekit import by_id, suggestions
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


@pytest.mark.parametrize(
    ("log", "said"),
    [
        ("005", "illegal memory access"),
        ("006", "collective GATHER (#158046) waited 600 s"),
        ("007", "the first collective ALLREDUCE (#1)"),
    ],
)
def test_the_nccl_watchdog_taking_the_worker_down_is_its_death(log: str, said: str) -> None:
    d = _diagnose(f"eval32i/{log}.log")
    crash = by_id(d)["engine_crashed"]
    assert crash["severity"] == "critical", crash
    assert said in crash["evidence"], crash["evidence"]
    assert "cuda_oom" not in by_id(d)
    assert "--gpu-memory-utilization" not in suggestions(d)


def test_the_first_collective_timing_out_is_the_start_ups() -> None:
    crash = by_id(_diagnose("eval32i/007.log"))["engine_crashed"]
    assert crash["data"]["phase"] == "startup", crash["data"]


@pytest.mark.parametrize("log", ["017", "023"])
def test_a_traceback_cut_in_build_async_engine_client_is_a_failed_start(log: str) -> None:
    ids = by_id(_diagnose(f"eval32i/{log}.log"))
    failed = ids["engine_startup_failed"]
    assert failed["severity"] == "critical" and failed["data"]["phase"] == "startup", failed
    assert failed["data"]["frame"] == "build_async_engine_client", failed["data"]
    assert "engine_crashed" not in ids


def test_v0s_engine_process_failed_to_start_is_a_failed_start() -> None:
    ids = by_id(_diagnose("eval32i/004.log"))
    assert ids["engine_startup_failed"]["data"]["message"].startswith("Engine process failed to start")
    assert "engine_error" not in ids and "engine_crashed" not in ids


def test_a_bare_unsupported_architectures_line_is_vllms_refusal() -> None:
    d = _diagnose("eval32i/020.log")  # refused as "no vLLM log lines" before
    err = by_id(d)["engine_error"]
    assert err["severity"] == "critical" and "are not supported for now" in err["data"]["message"], err
    assert "--gpu-memory-utilization" not in suggestions(d)


def test_no_kv_blocks_at_098_under_an_unknown_v0_release_is_not_raised_to_1() -> None:
    d = _diagnose("eval32i/013.log")
    assert "no_kv_cache_memory" in by_id(d)
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)
    notes = [n["text"] for n in d["advice_notes"] if "no_kv_cache_memory" in n["finding_ids"]]
    assert notes and "quantized checkpoint" in notes[0], d["advice_notes"]


def test_a_notebooks_out_of_memory_traceback_through_llm_init_is_the_oom() -> None:
    # IPython's header: "OutOfMemoryError   Traceback (most recent call last)"
    d = _diagnose("eval32i/014.log")
    oom = by_id(d)["cuda_oom"]
    assert oom["severity"] == "critical" and oom["data"]["frame"] == "LLM.__init__", oom
    assert oom["data"]["phase"] == "startup", oom["data"]


def test_a_notebooks_runtimeerror_through_vllms_frames_is_an_error_with_its_cause_cut() -> None:
    ids = by_id(_diagnose("eval32i/016.log"))  # Colab's "[/…/vllm/utils.py](url) in inner(…)" frame
    err = ids["engine_error"]
    assert err["severity"] == "critical" and err["data"]["type"] == "RuntimeError", err
    assert err["data"]["cause_cut_off"] and err["data"]["frame"] == "inner", err["data"]
    assert "cuda_oom" not in ids
