"""The classes of the blind set eval32bp fixed after its measurement (tests/data/eval32bp/RESULTS.md), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from observe.parse import euroeval
from observe.parse.envelope import WRAP_RE
from observe.parse.failtypes import RunState
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


def test_euroevals_word_that_vllm_hid_why_the_model_did_not_load_is_a_failed_start() -> None:
    """BP2 (027): only EuroEval's own lines. Its 'The model '<id>' could not be loaded, but vLLM did not mention exactly
    what happened. Try re-running ... `FULL_LOG` set to `1` ...' is raised (benchmark_modules/vllm.py) only when building
    vllm.LLM for the model raised with vLLM's 'See root cause above.': the engine never started. A failed start, its
    lever re-running with FULL_LOG=1 (vLLM's own output then shows why), no launch flag; no crash while serving."""
    d = diagnose("eval32bp/027.log")
    assert critical(d) and "engine_startup_failed" in by_id(d), d["findings"]
    assert "engine_crashed" not in by_id(d), d["findings"]
    assert "FULL_LOG=1" in by_id(d)["engine_startup_failed"]["data"]["fix"]
    assert not d["recommendations"], d["recommendations"]
    assert not d["unreadable"], d["unreadable"]


def test_euroevals_sentence_alone_is_read_and_its_other_words_are_not() -> None:
    """BP2: the sentence (also in its verbose form) is the reading; EuroEval's other 'could not be loaded' messages
    carry vLLM's own error and are not this reading, nor is any line of its healthy FULL_LOG output (026: still refused
    as holding no vLLM log line), nor the sentence after a requested stop."""
    run = RunState(shutdown=False, stats_seen=False)
    line = next(x for x in lines("eval32bp/027.log") if "could not be loaded" in x)
    f = euroeval.death(line.strip(), run)
    assert f is not None and f.key == ("euroeval", "load_hidden") and f.details["before_serving"]
    verbose = (
        line.split(" Try ", 1)[0] + " Since you're running in verbose mode, you might see a descriptive error"
    )
    assert euroeval.death(verbose, run) is not None
    assert euroeval.death("The model 'm' could not be loaded. The error was ValueError('x').", run) is None
    assert all(euroeval.death(x.strip(), run) is None for x in lines("eval32bp/026.log"))
    stopped = RunState(shutdown=True, stats_seen=False, requested=True)
    assert euroeval.death(line.strip(), stopped) is None
