"""The classes of the final blind set eval32ah fixed after its measurement (tests/data/eval32ah/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import compiled
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_gpustacks_provisioning_error_is_a_failed_start() -> None:
    """UB: GPUStack's 'gpustack.worker.serve_manager - ERROR - Error provisioning model instance …: Failed to get
    vLLM backend image' and its traceback (no line vLLM wrote): the instance's engine never started — a failed
    start, not a crash."""
    d = diagnose("eval32ah/024.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


_RUN = RunState(shutdown=False, stats_seen=False)


def test_an_engine_cores_raw_traceback_through_the_compiled_graph_is_its_failure() -> None:
    """UA (006: '(EngineCore_DP0 pid=…)' lines, no ERROR prefix, every frame torch's — aot_autograd's runtime
    wrappers, inductor's output_code.py __call__, a /tmp/torchinductor module's call — cut before the exception):
    the model's compiled forward raised inside the engine core, where vLLM catches nothing: a critical failure."""
    d = diagnose("eval32ah/006.log")
    assert critical(d), d["findings"]
    rows = (DATA / "eval32ah" / "006.log").read_text().splitlines()
    frame = next(x for x in rows if "output_code.py" in x).split(") ", 1)[1].strip()
    assert compiled.forward(frame, _RUN, "EngineCore_DP0") is not None


def test_the_same_frame_bare_or_under_another_programs_prefix_is_nobodys_failure() -> None:
    """UA's guard: printed bare (no engine process named) the same torch frames are any torch program's."""
    rows = (DATA / "eval32ah" / "006.log").read_text().splitlines()
    frame = next(x for x in rows if "output_code.py" in x).split(") ", 1)[1].strip()
    assert compiled.forward(frame, _RUN, None) is None
    assert compiled.forward(frame, _RUN, "APIServer") is None
    assert (
        compiled.forward(frame, RunState(shutdown=False, stats_seen=False, requested=True), "EngineCore")
        is None
    )
