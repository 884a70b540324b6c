"""The classes of the final blind set eval32am fixed after its measurement (tests/data/eval32am/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.errors import InputError
from observe.parse import accel, envelope, hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import by_id, critical, diagnose, suggestions


def test_the_console_scripts_traceback_behind_a_bare_compose_name_and_a_process_prefix_is_read() -> None:
    """ZA (003): docker compose's column for a service named plainly ('vllm  | ') in front of vLLM's process prefix
    ('(APIServer pid=7)') is peeled like the dashed forms, so the vllm console script's frame (bin/vllm, in <module>)
    under them, cut, is the launch's death (parse/mainexit.py): failing, never a crash while serving."""
    d = diagnose("eval32am/003.log")
    assert critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_bare_compose_name_is_peeled_only_before_vllms_own_prefixes() -> None:
    """ZA's other side: 'word  | ' is docker compose's column only where vLLM's process or logger prefix follows; a
    table row ('model  | size') or a shell's pipe is left as it is."""
    assert envelope.WRAP_RE.match("vllm  | (APIServer pid=7) Traceback (most recent call last):") is not None
    assert (
        envelope.WRAP_RE.match("vllm  | INFO 09-07 00:03:50 [__init__.py:241] Automatically detected")
        is not None
    )
    assert envelope.WRAP_RE.match("model  | size  | dtype") is None
    assert envelope.WRAP_RE.match("cat x.log | (grep pid=3)") is None


def test_a_cuda_kernels_device_side_assertion_is_the_engines_death() -> None:
    """ZB (008): PyTorch's IndexKernel.cu 'Assertion `… "index out of bounds"` failed.' lines, bare (the GPU's printf
    never carries vLLM's process prefix), after a multi-modal warning: CUDA's assert error is sticky, the process's
    context is gone, so the engine is dead; the excerpt shows no serving, so the phase is unknown. Failing, an
    engine_error, and no memory advice."""
    d = diagnose("eval32am/008.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    assert "--gpu-memory-utilization" not in suggestions(d), suggestions(d)


def test_a_device_side_assertion_is_read_only_from_pytorchs_kernels_and_not_after_a_stop() -> None:
    """ZB's other side: the same words from a kernel outside PyTorch's ATen tree, or after a requested stop, are not
    read."""
    line = (
        "../aten/src/ATen/native/cuda/IndexKernel.cu:93: operator(): block: [8529,0,0], thread: [0,0,0] Assertion "
        '`-sizes[i] <= index && index < sizes[i] && "index out of bounds"` failed.'
    )
    assert accel.death(line, RunState(False, False), False) is not None
    assert accel.death(line, RunState(True, False, True), False) is None
    other = "kernel.cu:12: void k(): block: [0,0,0], thread: [0,0,0] Assertion `i < n` failed."
    assert accel.death(other, RunState(False, False), False) is None


def test_runpods_word_that_the_worker_exited_is_its_death() -> None:
    """ZD (022): RunPod's '[error]worker exited with exit code 136' beside a V0 'Added request' line: the serverless
    worker running the engine died (136 = 128 + SIGFPE). Failing, and not a failed start (nothing says it was
    starting)."""
    d = diagnose("eval32am/022.log")
    assert critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_runpods_worker_exit_is_read_only_under_its_error_tag_and_a_non_zero_code() -> None:
    """ZD's other side: code 0, or the words under another tag, or after a requested stop, are not read."""
    run = RunState(False, False)
    f = hosted.death("abc123[error]worker exited with exit code 136", run, False)
    assert f is not None and "SIGFPE" in f.details["cause"], f
    assert hosted.death("abc123[error]worker exited with exit code 0", run, False) is None
    assert hosted.death("abc123[info]worker exited with exit code 1", run, False) is None
    assert (
        hosted.death("abc123[error]worker exited with exit code 1", RunState(True, False, True), False)
        is None
    )


def test_verls_driver_traceback_of_a_dead_rollout_actor_is_the_engines_death() -> None:
    """ZE (023): TinyZero's driver traceback, its frames unindented and its colour codes garbled, cut: Ray's
    'RayTaskError(ActorDiedError): ray::main_task()' then verl's trainer calling 'self.actor_rollout_wg.
    generate_sequences(…)': the actor running vLLM's rollout died under the call, after the start-up. Failing, not a
    failed start (no line of vLLM's own: read as the host's)."""
    d = diagnose("eval32am/023.log")
    assert critical(d), d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


def test_an_actors_death_tells_only_under_verls_rollout_call(tmp_path: Path) -> None:
    """ZE's other side: Ray's RayTaskError(ActorDiedError) is anybody's actor's; the trainer calling another worker
    group (a critic's) tells nothing (a log with nothing else is refused)."""
    head = (
        "ray.exceptions.RayTaskError(ActorDiedError): ray::main_task() (pid=1, ip=10.0.0.1)\n"
        'File "/x/verl/trainer/ppo/ray_trainer.py", line 589, in fit\n'
    )
    other, rollout = tmp_path / "other.log", tmp_path / "rollout.log"
    other.write_text(head + "values = self.critic_wg.compute_values(batch)\n")
    rollout.write_text(head + "gen_batch_output = self.actor_rollout_wg.generate_sequences(gen_batch)\n")
    with pytest.raises(InputError):
        diagnose(other)
    d = diagnose(rollout)
    assert critical(d) and "engine_crashed" in by_id(d), d["findings"]


def test_an_engine_cores_raw_traceback_through_its_engines_construction_is_a_failed_start() -> None:
    """ZC (013): a 2026 EngineCore process's raw traceback, header and exception cut: run_engine_core's
    'engine_core = EngineCoreProc(*args, engine_index=dp_rank, **kwargs)' then EngineCoreProc's __init__. A raise
    under that construction is what run_engine_core logs as 'EngineCore failed to start.': a failed start-up, never a
    crash while serving."""
    d = diagnose("eval32am/013.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
