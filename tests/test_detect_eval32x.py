"""The misses of issue 32's late blind set eval32x (tests/data/eval32x/RESULTS.md), each on its real excerpt. Sources
in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import mainexit
from observe.parse.failtypes import RunState
from tests.diagnosekit import critical
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data" / "eval32x"


def test_a_traceback_cut_under_runpys_launch_frame_is_the_launchs_death() -> None:
    """KA (012: vLLM 0.3.3's 'Initializing an LLM engine (v0.3.3)' on a Neuron host, then 'Traceback (most recent
    call last):' and runpy's two frames of ``python -m`` — _run_module_as_main, _run_code — cut there): a traceback
    through the interpreter's launch frame is an exception that reached the top of the main module, so the server
    exits; critical, and not a death while serving (the excerpt does not say where it was)."""
    d = _diagnose(DATA / "012.log")
    crit = critical(d)
    assert crit and crit[0]["id"] in ("engine_error", "engine_startup_failed"), d["findings"]
    assert crit[0]["data"]["frame"] == "_run_module_as_main" and crit[0]["data"]["phase"] == "unknown", crit[
        0
    ]
    assert "engine_crashed" not in {f["id"] for f in d["findings"]}


def test_runpys_frame_in_both_forms_and_after_a_requested_stop() -> None:
    """runpy's frame as Python 3.10 prints it (a path) and as 3.11+ does ('<frozen runpy>'); another function of runpy
    is no launch frame; after a requested stop (Ctrl-C) the traceback is the stop's, not a failure."""
    run = RunState(False, False)
    old = '  File "/usr/lib/python3.10/runpy.py", line 196, in _run_module_as_main'
    new = '  File "<frozen runpy>", line 198, in _run_module_as_main'
    assert mainexit.died(old, run) is not None and mainexit.died(new, run) is not None
    assert mainexit.died('  File "/usr/lib/python3.10/runpy.py", line 86, in _run_code', run) is None
    assert mainexit.died(old, RunState(True, False, True)) is None


def test_enginedeaderrors_own_text_quoted_by_a_hosts_monitor_is_the_engines_death() -> None:
    """KC (025: Dynamo's engine monitor, 'ERROR engine_monitor._check_engine_health: vLLM AsyncLLM health check
    failed: EngineCore encountered an issue. See stack trace (above) for the root cause.' then Dynamo's 'Initiating
    Dynamo Runtime shutdown.'): V1 EngineDeadError's own message quoted by a host's logger without its class name
    says the engine core died — a failing log, not 'no vLLM log lines'."""
    d = _diagnose(DATA / "025.log")
    crit = critical(d)
    assert crit and {f["id"] for f in crit} <= {"engine_startup_failed", "engine_crashed", "engine_error"}, d
    assert "EngineCore encountered an issue" in crit[0]["evidence"], crit[0]


def test_a_workers_death_in_the_profiling_run_is_a_failed_start() -> None:
    """KB (015: V1 0.11's EngineCore records at core.py:708 through determine_available_memory → collective_rpc,
    'Worker failed with error 'cu_seqlens_q must be on CUDA'', then 'Worker proc VllmWorker-1 died unexpectedly,
    shutting down executor.'): the worker died while the engine was still being built (the profiling run), so the
    engine never started — a failed start-up at profiling, not a crash, and no out-of-memory."""
    d = _diagnose(DATA / "015.log")
    crit = critical(d)
    assert crit and {f["id"] for f in crit} == {"engine_startup_failed"}, d["findings"]
    assert crit[0]["data"]["phase"] == "profiling" and "VllmWorker-1" in crit[0]["evidence"], crit[0]
    assert not {f["id"] for f in d["findings"]} & {"engine_crashed", "cuda_oom"}
