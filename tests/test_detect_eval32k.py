"""The misses of issue 32's eleventh blind set (tests/data/eval32k/RESULTS.md), each on its real excerpt. Sources
in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import parse_text
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def test_a_client_disconnects_cancelled_error_is_a_report_not_a_crash_of_observe() -> None:
    """AF (014: starlette's 'Exception in ASGI application' after a 200, a client disconnect's CancelledError in
    listen_for_disconnect, cut at the next traceback): the only unexplained error wraps nothing observe can name.
    diagnose raised AssertionError on it (a traceback instead of a report); now it reports, and nothing critical."""
    d = _diagnose("eval32k/014.log")
    assert not any(f["severity"] == "critical" for f in d["findings"]), d["findings"]
    assert "engine_crashed" not in {f["id"] for f in d["findings"]}


def test_markdowns_stars_before_a_process_prefix_are_peeled() -> None:
    """AG (018: vllm-ascend 0.13.0rc2's one line '****(EngineCore_DP0 pid=1804) RuntimeError: Worker failed with
    error …', the reporter's markdown '****' in front): vLLM's EngineCore line, read as its failure, never refused."""
    line = (DATA / "eval32k" / "018.log").read_text().splitlines()[0]
    assert line.startswith("****(EngineCore_DP0 pid=")
    events = parse_text(line + "\n")
    assert events and all(getattr(e.env, "process", None) == "EngineCore_DP0" for e in events), events
    d = _diagnose("eval32k/018.log")
    found = {f["id"]: f for f in d["findings"]}
    assert found["engine_error"]["severity"] == "critical" and "cuda_oom" not in found
