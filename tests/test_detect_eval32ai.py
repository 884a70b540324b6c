"""The classes the final blind set eval32ai found (tests/data/eval32ai/RESULTS.md VA-VB), each on its real excerpt.
Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.failures.kinds import FailureKind
from observe.flags import vllmflags
from observe.model import LogLine
from observe.parse import failures, pasted
from observe.parse.envelope import Ctx
from observe.parse.failtypes import RunState
from tests.diagnosekit import DATA, by_id, diagnose, suggestions


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


def test_an_adapter_over_max_lora_rank_is_a_refused_launch_with_the_rank_as_lever() -> None:
    """VA (003: 'ValueError: LoRA rank 64 is greater than max_lora_rank 16.', vLLM's own check of an adapter
    against LoRAConfig, one wording from 0.3's worker_manager.py to 0.32's peft_helper.py): the launch vLLM
    refused, and --max-lora-rank 64 (the least rank vLLM accepts that holds the adapter) is the lever."""
    d = diagnose("eval32ai/003.log")
    assert by_id(d)["launch_rejected"]["severity"] == "critical", d["findings"]
    assert suggestions(d).get("--max-lora-rank") == [64], d.get("recommendations")
    assert "cuda_oom" not in by_id(d)


def test_the_same_refusal_after_the_engine_served_is_no_launch_refusal() -> None:
    """VA's guard: an adapter loaded once the engine served (a request naming it) is refused the same way, but
    the launch was not: the LoRA row leaves it to the other rows."""
    line = (DATA / "eval32ai" / "003.log").read_text().strip()
    serving = failures.failure(line, Ctx("003", 1), RunState(shutdown=False, stats_seen=True))
    starting = failures.failure(line, Ctx("003", 1), RunState(shutdown=False, stats_seen=False))
    assert starting is not None and starting.kind is FailureKind.INVALID_CONFIG
    assert serving is None or serving.kind is not FailureKind.INVALID_CONFIG


def test_max_lora_rank_is_in_the_flag_table_from_0_3_with_each_releases_ranks() -> None:
    """The lever only where the release has the flag: LoRA came in 0.3.0 (none in the 0.2.7 wheel); 0.3-0.4 accept
    ranks 8-64 only (LoRAConfig's possible_max_ranks), 0.32 also 1, 128-512."""
    assert vllmflags.has_flag("--max-lora-rank", "0.2.7") is False
    assert vllmflags.has_flag("--max-lora-rank", "0.3.0") is True
    assert vllmflags.valid_value("--max-lora-rank", 128, "0.4.3") is False
    assert vllmflags.valid_value("--max-lora-rank", 128, "0.32.0") is True
