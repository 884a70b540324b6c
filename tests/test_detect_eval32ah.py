"""The classes the final blind set eval32ah found (tests/data/eval32ah/RESULTS.md UA-UB), each on its real excerpt.
Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import compiled
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, critical, diagnose

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
