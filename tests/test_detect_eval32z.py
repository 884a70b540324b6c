"""The misses of issue 32's late blind set eval32z (tests/data/eval32z/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse import frames, native
from observe.parse.failtypes import RunState
from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data" / "eval32z"


def _critical(log: str) -> list[dict]:
    return [f for f in _diagnose(DATA / log)["findings"] if f["severity"] == "critical"]


def _messages(log: str) -> list[str]:
    """The messages of the excerpt's vLLM records (after the '[file:line]' prefix)."""
    return [ln.split("] ", 1)[1] for ln in (DATA / log).read_text().splitlines() if "] " in ln]


def test_a_worker_record_whose_frame_line_a_terminal_hard_wrapped_is_still_read() -> None:
    """MA (013: V1 0.8.4's '(VllmWorker rank=3 pid=285) ERROR … [multiproc_executor.py:380]' records in torch._dynamo's
    frames, each frame line hard-wrapped after its path: '…/convert_frame.py", li' / 'ne 715, in compile_inner'): the
    path still names the frame, so the worker's failed method is read — at start-up, torch.compile running while the
    engine starts and nothing served."""
    crit = _critical("013.log")
    assert crit and {f["id"] for f in crit} == {"engine_error"}, crit
    assert crit[0]["data"]["phase"] == "startup", crit[0]
    cut = [m for m in _messages("013.log") if m.rstrip().endswith((", li", "line 95,"))]
    assert len(cut) == 3
    assert all(frames.cut_frame(m, RunState(False, False), "multiproc_executor.py") is not None for m in cut)


def test_a_complete_frame_is_read_as_before_and_a_cut_one_only_in_a_vllm_record() -> None:
    """The cut tail reads a whole frame line as before (its function), and a cut one only where a vLLM logger wrote
    it: a bare line stays anybody's."""
    whole = '  File "/usr/lib/python3.12/site-packages/torch/_dynamo/convert_frame.py", line 715, in compile_inner'
    f = frames.cut_frame(whole, RunState(False, False), "multiproc_executor.py")
    assert f is not None and f.details["frame"] == "torch.compile:compile_inner"
    cut = '  File "/usr/lib/python3.12/site-packages/torch/_dynamo/convert_frame.py", li'
    assert frames.cut_frame(cut, RunState(False, False), None) is None


def test_an_engine_record_of_a_native_backtrace_is_the_engines_failure() -> None:
    """MB (026: Tenstorrent's V0 fork, 'ERROR 12-20 03:17:19 [engine.py:187]  --- …/python(_PyEval_EvalFrameDefault+
    0x29f4) [0x559d06bbe794]' and nine more, no head): MQLLMEngine.start's logger.exception(repr(e)) logging an
    exception whose message carries its native stack (tt-metal's '--- ' backtrace), so the engine failed; the excerpt
    cannot say when (phase unknown)."""
    crit = _critical("026.log")
    assert crit and {f["id"] for f in crit} == {"engine_error"}, crit
    assert crit[0]["data"]["phase"] == "unknown", crit[0]
    msgs = _messages("026.log")
    assert len(msgs) == 10 and native.backtrace_frame(msgs[0].strip()) == "_PyEval_EvalFrameDefault"
    assert native.backtrace_frame(msgs[1].strip()) == "?"  # '(+0x1981d1)': no symbol
    assert frames.cut_frame(msgs[0], RunState(False, False), None) is None  # not a vLLM record: anybody's
