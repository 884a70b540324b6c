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
from tests.standin import HANDLER

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


# ---------------------------------------------------------------- another server on the port


def listening(port: int) -> socket.socket:
    """A server socket on 127.0.0.1:`port`, as another server holding it (closed by the caller)."""
    s = socket.socket()
    s.bind(("127.0.0.1", port))
    s.listen()
    return s


def test_a_port_another_server_holds_is_exit_4_before_anything_starts(tmp_path: Path) -> None:
    """Before: tune launched vLLM anyway, measured the other server, and exited 0."""
    port = closed_port()
    with listening(port):
        r = observe("--out", str(tmp_path / "out"), "--", *COMMAND[1:-1], str(port))
    assert r.returncode == errors.EXIT_LAUNCH
    line = one_line(r)
    assert f"port {port} is already in use" in line and "another --port" in line
    assert not (tmp_path / "out").exists()  # nothing launched, no traffic, nothing written


def test_observe_run_says_it_checks_the_flags_and_refuses_a_taken_port(tmp_path: Path) -> None:
    port = closed_port()
    e = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    e["PYTHONPATH"] = str(ROOT)
    with listening(port):
        r = subprocess.run(
            [sys.executable, "-m", "observe.cli", "run", "--no-sidecar", "--run-dir", str(tmp_path / "runs"),
             "--", *COMMAND[1:-1], str(port)],
            capture_output=True, text=True, env=e, timeout=300,
        )  # fmt: skip
    assert r.returncode == errors.EXIT_LAUNCH and "Traceback" not in r.stderr
    said = r.stderr.splitlines()
    assert said[0].startswith("observe: checking the command's flags with the installed vLLM's parser")
    assert said[-1].startswith("observe: error: port") and f"{port} is already in use" in said[-1]
    assert not (tmp_path / "runs" / "001").exists()  # no launch folder: nothing was started


STANDIN = (
    "import http.server, sys\n"
    "args = dict(zip(sys.argv[1::2], sys.argv[2::2]))\n"
    "body = b'# no metrics'\n"
    "models = ['another/model']\n" + HANDLER + "\n"
    "http.server.ThreadingHTTPServer(('127.0.0.1', int(args['--port'])), H).serve_forever()\n"
)


def test_a_server_answering_for_another_model_is_exit_4_before_any_traffic(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The launch answers /health, but /v1/models lists another model: no benchmark run is made."""
    from observe.manage import LaunchError, LaunchSpec
    from observe.settings import Settings
    from observe.tune import Tuner

    script = tmp_path / "standin.py"
    script.write_text(STANDIN)
    runs: list[str] = []
    monkeypatch.setattr(bench, "run", lambda *a, **k: runs.append("run") or {})
    spec = LaunchSpec(
        program=(sys.executable, str(script)),
        form="api_server",
        model="m",
        flags={"--port": str(closed_port())},
    )
    t = Tuner(spec, tmp_path / "out", workload=Workload(), settings=Settings(), python=sys.executable)
    with pytest.raises(LaunchError) as e:
        t.run()
    assert e.value.exit_code == errors.EXIT_LAUNCH
    assert "answers for another/model, not m" in str(e.value) and "\n" not in str(e.value)
    assert runs == []  # no traffic
    assert not t.launcher.alive()
    assert t.trials[0].outcome == "failed"
