"""The misses of issue 32's blind set eval32y (tests/data/eval32y/RESULTS.md), each on its real excerpt. Sources in
tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from tests.diagnosekit import diagnose as _diagnose

DATA = Path(__file__).parent / "data"


def test_argparse_refusal_under_the_vllm_serve_sub_command_is_a_refused_launch() -> None:
    """LB (023: a 2026 vLLM on Cloud Run, 'vllm serve: error: argument --limit-mm-per-prompt: Value image:4 cannot be
    converted to <function loads …>'): the CLI's sub-parsers print their prog as "vllm serve" (argparse's
    ``prog = f"{parent prog} {name}"``), two words before ': error: '. That is vLLM refusing the flag at launch:
    launch_rejected, naming the flag, and the evidence quotes argparse's reason."""
    d = _diagnose(DATA / "eval32y" / "023.log")
    rejected = [f for f in d["findings"] if f["id"] == "launch_rejected"]
    assert len(rejected) == 1 and rejected[0]["severity"] == "critical", d["findings"]
    assert rejected[0]["data"]["flag"] == "--limit-mm-per-prompt"
    assert "cannot be converted" in rejected[0]["evidence"]
    assert "engine_crashed" not in {f["id"] for f in d["findings"]}
