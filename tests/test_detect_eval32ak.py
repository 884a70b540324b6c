"""The classes of the final blind set eval32ak fixed after its measurement (tests/data/eval32ak/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import frames
from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_bare_frames_through_vllms_ipex_ops_are_vllms_traceback() -> None:
    """XA (004): bare frames from vLLM's own vllm/_ipex_ops.py (the Intel Extension for PyTorch ops vLLM calls on
    CPU / XPU in place of _custom_ops) into ipex's fusions, cut before the exception line: a traceback through vLLM's
    code, read (not refused) and failing, its phase unknown."""
    d = diagnose("eval32ak/004.log")
    assert critical(d) and "engine_error" in by_id(d), d["findings"]
    line = next(x for x in (DATA / "eval32ak" / "004.log").read_text().splitlines() if "_ipex_ops.py" in x)
    m = frames.vllm_frame(line)
    assert m is not None and m.group("func") == "rotary_embedding"
    # a user's own folder named vllm holding a module of that name is not vLLM's package
    assert frames.vllm_frame(line.replace("/vllm/vllm/_ipex_ops.py", "/vllm/my_ops.py")) is None
