"""`observe capacity` refuses what vLLM refuses, with the exit code of the table (errors.EXIT_CONFIG)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from observe import capacity, errors

ROOT = Path(__file__).resolve().parents[1]


def observe(*args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", *args], capture_output=True, text=True, env=env
    )


def test_tp_that_does_not_divide_the_heads_is_refused() -> None:
    spec = capacity.model_spec("llama-3-70b")
    assert spec.heads % 3 and spec.kv_heads % 3  # the model's own head counts, not typed in
    r = observe("capacity", "--model", "llama-3-70b", "--gpu", "H100", "--tp", "3")
    assert r.returncode == errors.EXIT_CONFIG
    assert f"{spec.heads} attention heads and {spec.kv_heads} KV heads" in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "fits" not in r.stdout


def test_weights_that_do_not_fit_answer_no() -> None:
    r = observe("capacity", "--model", "llama-3-70b", "--gpu", "H100", "--tp", "1")
    assert r.returncode == errors.EXIT_FOUND and "weights need" in r.stderr


@pytest.mark.parametrize("tp", ["2", "4", "8", "16"])
def test_tp_that_divides_or_replicates_is_accepted(tp: str) -> None:
    # --max-num-seqs 256: at TP=2 the 16-bit weights (65.7 GiB per GPU) leave no room for the
    # profile run's sampler at vLLM's default 1,024 sequences (exit 1, a different question)
    r = observe("capacity", "--model", "llama-3-70b", "--gpu", "H100", "--tp", tp, "--max-num-seqs", "256")
    assert r.returncode == 0, r.stderr


def test_70b_on_two_h100s_at_the_default_sequences_has_no_room_for_the_sampler() -> None:
    r = observe(
        "capacity", "--model", "llama-3-70b", "--gpu", "H100", "--tp", "2", "--vllm-version", "0.33.0"
    )
    assert r.returncode == errors.EXIT_FOUND and "sampler peak" in r.stdout and "--max-num-seqs" in r.stdout


@pytest.mark.parametrize(
    "args", [["--model", "no-such-model", "--gpu", "H100"], ["--model", "llama-3-8b", "--gpu", "no-such-gpu"]]
)
def test_unknown_names_have_the_config_exit_code(args: list[str]) -> None:
    r = observe("capacity", *args)
    assert r.returncode == errors.EXIT_CONFIG and "unknown" in r.stderr
