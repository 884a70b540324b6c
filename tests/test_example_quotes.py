"""What the docs quote of observe's output on the shipped examples is what it prints now (issue 34:
docs/managed.md and examples/README once quoted `2 → 4`, `32 → 1280` and a rotated file that was
gone): tools/regen_example_quotes.py writes each quote from `observe diagnose examples/NAME`."""

from __future__ import annotations

from pathlib import Path

from tests import regenkit

ROOT = Path(__file__).resolve().parents[1]


def test_the_quotes_are_what_observe_says_now() -> None:
    assert not regenkit.check("regen_example_quotes")


def test_every_doc_quotes_and_a_stale_quote_is_rewritten() -> None:
    tool = regenkit.load("regen_example_quotes")
    for name in tool.DOCS:
        assert "<!-- observe: " in (ROOT / name).read_text(), name
    stale = "advice: <!-- observe: seq-bound advice -->`--max-num-seqs 2 → 4`<!-- /observe -->"
    now = tool.render(ROOT, stale)
    assert now != stale and "`--max-num-seqs 2 → " in now  # the example is bound by --max-num-seqs 2
    files = tool.render(ROOT, "<!-- observe: normal files -->`vllm.log.1`<!-- /observe -->")
    assert "`vllm.log`" in files and "vllm.log.1" not in files
    assert (
        tool.render(ROOT, "<!-- observe: shared-prefix advice -->x<!-- /observe -->").count(
            "no recommendation"
        )
        == 1
    )
