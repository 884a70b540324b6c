"""`observe tune` on bad input: one clear line each, its exit code, no traceback, nothing launched.

A budget of zero, one benchmark run per configuration (no spread to judge by), a vLLM without
`bench serve` (an interpreter with no vLLM at all), an unreachable server. The workload the
client rejects needs the real client: tests/test_tune_realvllm.py.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from observe import errors
from observe.errors import TargetError
from observe.tune import Workload, bench

ROOT = Path(__file__).resolve().parents[1]


def observe(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    e["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", "tune", *args],
        capture_output=True,
        text=True,
        env=e,
        timeout=timeout,
    )


def one_line(r: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in r.stderr, r.stderr
    lines = [ln for ln in r.stderr.splitlines() if ln.strip() and not ln.startswith("observe: checking")]
    assert len(lines) == 1, r.stderr
    return lines[0]


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


COMMAND = ["--", sys.executable, "-m", "vllm.entrypoints.openai.api_server", "--model", "m", "--port", "8999"]


@pytest.mark.parametrize(
    ("option", "words"),
    [
        (["--trials", "0"], "--trials must be at least 1"),
        (["--time-budget", "0"], "--time-budget must be more than 0"),
        (["--repeats", "1"], "--repeats must be at least 2"),
        (["--num-prompts", "0"], "--num-prompts must be at least 1"),
        (["--objective", "latency"], "--objective must be one of throughput, goodput"),
    ],
)
def test_zero_budget_and_bad_options_start_nothing(tmp_path: Path, option: list[str], words: str) -> None:
    r = observe("--out", str(tmp_path / "out"), *option, *COMMAND)
    assert r.returncode == errors.EXIT_USAGE
    assert words in one_line(r)
    assert not (tmp_path / "out").exists()  # nothing launched, nothing written


def test_a_vllm_without_bench_serve(tmp_path: Path) -> None:
    # this interpreter has no vLLM at all, so no `vllm bench serve` either
    r = observe("--out", str(tmp_path / "out"), *COMMAND)
    assert r.returncode == errors.EXIT_USAGE
    line = one_line(r)
    assert "has no `vllm bench serve`" in line and sys.executable in line
    assert not (tmp_path / "out").exists()


def test_not_a_vllm_command(tmp_path: Path) -> None:
    r = observe("--out", str(tmp_path / "out"), "--", "sleep", "100")
    assert r.returncode == errors.EXIT_USAGE and "not a vLLM launch command" in one_line(r)


def test_an_unreachable_server() -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(TargetError, match=f"vLLM at {url} cannot be reached"):
        bench.reachable(url)
    with pytest.raises(TargetError) as e:
        bench.run(sys.executable, url, "m", None, Workload(), Path("/nonexistent/result.json"))
    assert e.value.exit_code == errors.EXIT_TARGET


def test_workload_words_are_the_clients() -> None:
    w = Workload(
        num_prompts=40, input_len=100, output_len=20, max_concurrency=8, seed=3, extra=("--temperature", "0")
    )
    assert w.args() == [
        "--dataset-name", "random", "--num-prompts", "40", "--request-rate", "inf", "--seed", "3",
        "--random-input-len", "100", "--random-output-len", "20", "--max-concurrency", "8", "--ignore-eos",
        "--temperature", "0",
    ]  # fmt: skip
    assert "--random-input-len" not in Workload(dataset="sharegpt").args()
