"""The classes of the final blind set eval32al fixed after its measurement (tests/data/eval32al/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import hosted
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_ipex_llms_usage_error_banner_before_serving_is_a_failed_start() -> None:
    """YA (028): ipex-llm's '****Usage Error****' banner (log4Error's invalidInputError, which then raises
    RuntimeError) over its vLLM conversion's 'Currently, ipex-vllm does not support linear layers with skip_bias_add
    argument', no line vLLM wrote: the serving wrapper refused the model while it loaded. A failed start (the log
    read from its host's lines), never a death while serving."""
    d = diagnose("eval32al/028.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_the_banner_is_read_only_in_ipex_llms_own_form_and_before_serving() -> None:
    """The banner's exact line from the real excerpt is read before the engine served; after a stats line it is not
    (a request's refusal and the engine's cannot be told apart from it), nor another project's banner of other
    widths (analytics-zoo's 32 + 28 stars)."""
    banner = (DATA / "eval32al" / "028.log").read_text().splitlines()[0].strip()
    before = RunState(shutdown=False, stats_seen=False)
    f = hosted.death(banner, before)
    assert f is not None and f.details.get("before_serving"), f
    assert hosted.death(banner, RunState(shutdown=False, stats_seen=True)) is None
    assert hosted.death("*" * 32 + "Usage Error" + "*" * 28, before) is None
