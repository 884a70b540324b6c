"""The classes of the final blind set eval32ak fixed after its measurement (tests/data/eval32ak/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import frames
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose

_RUN = RunState(shutdown=False, stats_seen=False)


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


def test_the_model_registrys_import_traceback_is_a_failed_start() -> None:
    """XD (026): the model registry's ERROR record ([registry.py:975], logger.exception of _try_load_model_cls /
    _try_inspect_model_cls) with a frame of importing the model's module (qwen3_5.py, in <module>; a Windows build's
    backslashes): the model class cannot be imported, so the architecture cannot be inspected and the config is never
    built — a failed start, never a crash."""
    d = diagnose("eval32ak/026.log")
    assert critical(d), d["findings"]
    assert d["findings"][0]["data"]["phase"] == "startup", d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert [la["status"] for la in d["launches"]] == ["failed"], d["launches"]
    line = next(x for x in (DATA / "eval32ak" / "026.log").read_text().splitlines() if "qwen3_5.py" in x)
    msg = line.split("] ", 1)[1]
    f = frames.cut_frame(msg, _RUN, "registry.py")
    assert f is not None and f.details["phase"] == "startup" and f.details["frame"] == "qwen3_5.<module>"
    # the same frame under another logger's record, or a layer's module import under the registry's: not this reading
    assert frames.cut_frame(msg, _RUN, "utils.py") is None
    deeper = next(
        x for x in (DATA / "eval32ak" / "026.log").read_text().splitlines() if "qwen_gdn_linear_attn.py" in x
    )
    assert frames.cut_frame(deeper.split("] ", 1)[1], _RUN, "registry.py") is None
