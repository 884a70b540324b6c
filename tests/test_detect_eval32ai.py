"""The classes the final blind set eval32ai found (tests/data/eval32ai/RESULTS.md VA-VB), each on its real excerpt.
Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.model import LogLine
from observe.parse import pasted
from tests.diagnosekit import DATA, by_id, diagnose


def test_a_prefixed_traceback_hard_wrapped_at_80_columns_is_rejoined_and_a_failed_start() -> None:
    """VB (024: the API server's start-up traceback behind '(APIServer pid=45883)', cut before its exception and
    pasted wrapped at 80 columns so that '…/site-packages/vll' / 'm/entrypoints/openai/api_server.py", line 678,
    in run_server' splits a frame): the continuation lacks the prefix vLLM prints on every line, so each wrapped
    frame is glued back and the stack under build_async_engine_client is read: the engine failed to start."""
    head = (DATA / "eval32ai" / "024.log").read_bytes()
    assert pasted.looks_wrapped(head)
    rows = head.decode().splitlines()
    lines = list(pasted.rejoin(LogLine("024", i, t) for i, t in enumerate(rows, 1)))
    assert any(
        x.text.endswith('vllm/entrypoints/openai/api_server.py", line 678, in run_server') for x in lines
    )
    assert len(lines) < len(rows)
    d = diagnose("eval32ai/024.log")
    assert by_id(d)["engine_startup_failed"]["severity"] == "critical", d["findings"]


def test_an_unwrapped_prefixed_traceback_is_not_taken_for_a_wrapped_one() -> None:
    """VB's guard: the same stack printed whole (027) has no cut frame line, so nothing is glued."""
    head = (DATA / "eval32ai" / "027.log").read_bytes()
    assert not pasted.looks_wrapped(head)
