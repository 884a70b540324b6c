"""The classes the late blind set eval32ad found (tests/data/eval32ad/RESULTS.md QA, QB, QC), each on its real
excerpt. Sources in tests/data/PROVENANCE.md."""

from __future__ import annotations

from pathlib import Path

from observe.parse.triggers import may_matter
from tests.diagnosekit import DATA, critical, diagnose


def test_a_traceback_before_the_server_shut_down_is_the_failure_not_the_stops_noise() -> None:
    """QA. V0's engine logged its exception ('Exception: Transfer Return Error' out of the Mooncake KV pipe, an
    engine.py:140 record no rule reads) and uvicorn then shut the server down: that shutdown began after the
    failure, so the unread traceback is not a requested stop's noise — the log is failing."""
    d = diagnose("eval32ad/022.log")
    assert [f["id"] for f in critical(d)] == ["engine_error"], d["findings"]


def test_a_traceback_printed_once_the_stop_began_is_still_its_noise(tmp_path: Path) -> None:
    """QA's edge: the same lines with uvicorn's shutdown moved above the engine's record — a traceback printed once
    a requested stop had begun stays the stop's noise, as before."""
    lines = (DATA / "eval32ad/022.log").read_text().splitlines(keepends=True)
    stop = [ln for ln in lines if ln.startswith("INFO:")]
    log = tmp_path / "022-stop-first.log"
    log.write_text("".join(stop + [ln for ln in lines if ln not in stop]))
    assert not critical(diagnose(log))


def test_a_notebook_cell_whose_llm_call_raised_is_the_engines_failed_start() -> None:
    """QB. IPython's header ('ImportError  Traceback (most recent call last)') over the cell's own line that raised,
    '----> 4 llm = LLM(…)', the frames below it cut: the exception came out of vLLM's offline entry point, the
    engine's start-up."""
    crit = critical(diagnose("eval32ad/011.log"))
    assert crit and crit[0]["data"]["phase"] == "startup", crit
    assert crit[0]["data"]["type"] == "ImportError", crit[0]


def test_rays_exception_line_closes_the_traceback_even_when_the_scan_prefilters() -> None:
    """QC. 015 ends in Ray's 'ray.exceptions.OutOfMe…' line: read (its literal is a trigger), it closes the frames
    held under the traceback's header in the scan's prefiltered parse as in the full one."""
    last = (DATA / "eval32ad/015.log").read_text().splitlines()[-1]
    assert may_matter(last), last  # the full-vs-prefiltered equality itself: tests/test_parse_triggers.py
