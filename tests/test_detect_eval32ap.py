"""The classes of the blind set eval32ap fixed after its measurement (tests/data/eval32ap/RESULTS.md), on their real
excerpts. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

import pytest

from tests.diagnosekit import by_id, critical, diagnose, suggestions


@pytest.mark.parametrize(
    ("log", "tokens", "length"),
    [
        # AP4: verl's driver line in a Markdown backtick span (redacted whole: the quoted text holds no number)
        ("eval32ap/026.log", 8192, 9216),
        # AP4: pydantic's 'ValidationError: 1 validation error for SchedulerConfig' header quoted as the text
        ("eval32ap/027.log", 8192, 131072),
        # the 'Value error,' line alone (the quoted text holds the numbers): the same levers as before
        ("eval32ap/028.log", 4096, 32768),
    ],
)
def test_the_batched_tokens_check_suggests_its_levers_from_the_parsed_numbers(
    log: str, tokens: int, length: int
) -> None:
    """SchedulerConfig's "max_num_batched_tokens (B) is smaller than max_model_len (L)": the numbers the parser read
    reach the advisor whatever the finding quotes, so it offers each value that passes the check."""
    d = diagnose(log)
    f = by_id(d).get("launch_rejected")
    assert critical(d) and f is not None, d["findings"]
    assert (f["data"]["max_num_batched_tokens"], f["data"]["max_model_len"]) == (tokens, length)
    s = suggestions(d)
    assert s.get("--max-num-batched-tokens") == [length], s
    assert s.get("--enable-chunked-prefill") == [True], s
    assert s.get("--max-model-len") == [tokens], s
