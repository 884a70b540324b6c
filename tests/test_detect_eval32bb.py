"""The classes of the blind set eval32bb fixed after its measurement (tests/data/eval32bb/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

import pytest

from observe.parse import errrun
from tests.diagnosekit import DATA, by_id, critical, diagnose


def _failed(d: dict) -> bool:
    return bool(critical(d)) or any(la.get("status") == "failed" for la in d.get("launches") or [])


@pytest.mark.parametrize(
    "log",
    [
        # llm-scaler's vLLM on Intel Arc: twelve chat requests answered 500 and nothing else
        "eval32bb/018.log",
        # Tenstorrent's vLLM fork after its backend crashed: fourteen chat requests answered 500 (tenstorrent/vllm#145)
        "excerpts/access-500-run-tenstorrent-vllm-145.log",
    ],
)
def test_a_run_of_5xx_answers_on_the_openai_routes_ending_the_log_is_a_server_that_cannot_serve(
    log: str,
) -> None:
    """BB5: every request of a run of at least errrun.RUN on /v1/ answered 5xx, none answered otherwise after them:
    the server cannot serve. Failing (critical), while serving: never a failed start-up."""
    d = diagnose(log)
    assert [(f["id"], f["severity"], f["data"]["phase"]) for f in critical(d)] == [
        ("engine_error", "critical", "serving")
    ], d["findings"]
    assert "engine_startup_failed" not in by_id(d), d["findings"]


@pytest.mark.parametrize(
    "log",
    [
        # MinerU's vllm-server: one request answered 500 (its ASGI traceback cut), the server up
        "eval32ay/014.log",
        # two 500s on one client connection (an SDK's retry) after healthy stats lines
        "eval32k/026.log",
    ],
)
def test_a_few_5xx_answers_among_a_working_servers_are_not_failing(log: str) -> None:
    """BB5's other side: one request's 500, or a client's retries of it, is not a server that cannot serve."""
    assert not _failed(diagnose(log))


def _lines() -> list[str]:
    return (DATA / "eval32bb" / "018.log").read_text().splitlines()


def test_a_success_after_the_run_ends_it(tmp_path: Path) -> None:
    """The run must reach the log's end: a request answered 200 after it (018's lines, one answer turned 200 at the
    end) is a server that served again. Built from 018's lines."""
    lines = _lines()
    lines.append(lines[-1].replace("500 Internal Server Error", "200 OK"))
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(lines) + "\n")
    assert not _failed(diagnose(log))


def test_a_run_shorter_than_the_count_is_not_read(tmp_path: Path) -> None:
    """Fewer than errrun.RUN answers in a row (018's first RUN - 1) tell nothing: a client's retries of a few
    failing requests. Built from 018's lines."""
    log = tmp_path / "vllm.log"
    log.write_text("\n".join(_lines()[: errrun.RUN - 1]) + "\n")
    assert not _failed(diagnose(log))
    log.write_text("\n".join(_lines()[: errrun.RUN]) + "\n")
    assert critical(diagnose(log))
