"""The classes of the final blind set eval32am fixed after its measurement (tests/data/eval32am/RESULTS.md), each on its
real excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import envelope
from tests.diagnosekit import by_id, critical, diagnose


def test_the_console_scripts_traceback_behind_a_bare_compose_name_and_a_process_prefix_is_read() -> None:
    """ZA (003): docker compose's column for a service named plainly ('vllm  | ') in front of vLLM's process prefix
    ('(APIServer pid=7)') is peeled like the dashed forms, so the vllm console script's frame (bin/vllm, in <module>)
    under them, cut, is the launch's death (parse/mainexit.py): failing, never a crash while serving."""
    d = diagnose("eval32am/003.log")
    assert critical(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]


def test_a_bare_compose_name_is_peeled_only_before_vllms_own_prefixes() -> None:
    """ZA's other side: 'word  | ' is docker compose's column only where vLLM's process or logger prefix follows; a
    table row ('model  | size') or a shell's pipe is left as it is."""
    assert envelope.WRAP_RE.match("vllm  | (APIServer pid=7) Traceback (most recent call last):") is not None
    assert (
        envelope.WRAP_RE.match("vllm  | INFO 09-07 00:03:50 [__init__.py:241] Automatically detected")
        is not None
    )
    assert envelope.WRAP_RE.match("model  | size  | dtype") is None
    assert envelope.WRAP_RE.match("cat x.log | (grep pid=3)") is None
