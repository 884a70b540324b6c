"""The classes of the blind set eval32bp fixed after its measurement (tests/data/eval32bp/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse.envelope import WRAP_RE
from tests.diagnosekit import by_id, critical, diagnose, lines


def _peeled(line: str) -> str:
    w = WRAP_RE.match(line)
    assert w is not None and w.group("rfc"), line
    return line[w.end() :]


def test_a_docker_stamped_langchain_vllm_traceback_is_a_failed_start() -> None:
    """BP1 (015): cot-eval's traceback building LangChain's VLLM wrapper, every line under a `docker logs -t` stamp
    (moby writes RFC3339NanoFixed and one space). The stamp takes only its separator, so each frame's source line stays
    indented under its 'File' line and the held LangChain start-up failure (parse/hosted.py) survives the paste's end: a
    failed start, never a crash while serving."""
    d = diagnose("eval32bp/015.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert any(la.get("status") == "failed" for la in d.get("launches") or []), d.get("launches")


def test_a_docker_stamp_takes_one_space_and_keeps_the_lines_indentation() -> None:
    """BP1: the stamp's one separating space goes, the traceback's own indentation stays (015's real lines)."""
    log = lines("eval32bp/015.log")
    assert _peeled(next(x for x in log if "llm = VLLM(" in x)) == "    llm = VLLM("
    assert _peeled(next(x for x in log if 'cot-eval", line 8' in x)).startswith(
        '  File "/usr/local/bin/cot-eval"'
    )
    assert _peeled(next(x for x in log if "Traceback" in x)) == "Traceback (most recent call last):"


def test_a_rust_tracing_level_keeps_losing_its_padding() -> None:
    """The other shape the same pattern serves: Dynamo's Rust tracing lines, an RFC 3339 stamp then the level word
    right-aligned in five columns ('  INFO', ' WARN'): the padding goes with the stamp, as before (eval32ag 018, eval32x
    025)."""
    info = next(x for x in lines("eval32ag/018.log") if "  INFO dynamo_engine_vllm" in x)
    assert _peeled(info).startswith("INFO dynamo_engine_vllm::worker: ")
    warn = next(x for x in lines("eval32x/025.log") if "  WARN " in x)
    assert _peeled(warn).startswith("WARN engine_monitor.")
