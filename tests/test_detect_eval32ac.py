"""Fixes of issue 32's blind set eval32ac (tests/data/eval32ac/RESULTS.md), each on its real excerpt: PA, a vLLM
process's traceback through multiprocessing's _bootstrap, cut before its cause (parse/unread.py); PC, a launcher's
logfmt records around the lines vLLM printed (parse/logfmt.py)."""

from __future__ import annotations

from pathlib import Path

from observe.errors import InputError
from observe.parse import logfmt
from tests.diagnosekit import DATA, by_id, critical, diagnose


def test_a_vllm_process_traceback_through_bootstrap_is_that_process_dying() -> None:
    """PA (002: '(EngineCore_DP0 pid=1325938) Traceback (most recent call last):', multiprocessing/process.py's
    _bootstrap and its self.run(), cut): _bootstrap prints a traceback only for an exception the process's target
    let out, then exits 1 — the engine core died, its cause cut: a critical engine_error, phase unknown."""
    d = diagnose("eval32ac/002.log")
    assert [f["id"] for f in critical(d)] == ["engine_error"], d["findings"]
    f = by_id(d)["engine_error"]
    assert f["data"]["phase"] == "unknown" and "_bootstrap" in f["evidence"], f


def test_a_bootstrap_frame_without_a_vllm_process_prefix_stays_anybodys(tmp_path: Path) -> None:
    """PA's limit: the same lines bare (no '(EngineCore_DP0 pid=N)' prefix) are any Python program's process — not
    read as vLLM's (refused: no line of vLLM's)."""
    bare = tmp_path / "bare.log"
    lines = (DATA / "eval32ac" / "002.log").read_text(encoding="utf-8").splitlines(True)
    bare.write_text("".join(ln.split(") ", 1)[1] for ln in lines), encoding="utf-8")
    try:
        d = diagnose(bare)
    except InputError as e:  # the CLI's one-line refusal
        assert "no vLLM log lines" in str(e)
    else:
        assert critical(d) == [], d["findings"]


def test_logfmt_records_are_read_as_the_lines_vllm_printed() -> None:
    """PC (026: Docker Model Runner's 'time="…" level=info msg="  File \\"/opt/vllm-env/bin/vllm\\", …"
    component=vllm' around the console script's traceback, cut): unwrapped, it is the failed vllm command (main's
    reading of the console script's frames), not a refused file."""
    d = diagnose("eval32ac/026.log")
    assert [f["id"] for f in critical(d)] in (["engine_startup_failed"], ["engine_error"]), d["findings"]
    rec = 'time="2026-01-29T14:55:54Z" level=info msg="  File \\"/opt/x/bin/vllm\\", line 10, in <module>" component=vllm'
    assert logfmt.message(rec) == ['2026-01-29T14:55:54Z   File "/opt/x/bin/vllm", line 10, in <module>']
    assert logfmt.message("level=info msg=ready component=vllm") == ["ready"]
    assert logfmt.message('Traceback (most recent call last):" component=vllm') is None  # cut before its msg
    assert logfmt.message("INFO 05-06 06:08:29 [core.py:299] msg=x") is None  # vLLM's own line
