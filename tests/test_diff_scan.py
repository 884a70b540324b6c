"""Differential test: `diagnose` with the byte-level scan gives byte-identical JSON to the line-by-line path.

Inputs: every corpus log, every example folder, the vLLM CPU logs, and edge inputs built here from
their real lines (CRLF, a last line without newline, ANSI colours, ``\\r``-joined lines, truncated
and corrupt .gz, rotated and multi-instance folders, access lines in every wrapper vLLM's output
goes through, a stats record wrapped across lines before access lines, a New Year in the stamps).
The general path is the same code with the scan switched off (``scan.ENABLED = False``) and the
canonical-stats pattern too (``parser.FAST_STATS = False``); the scan runs with each classifier, the
compiled one (``observe.parse._scanc``) and the pure-Python one.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from observe import pipeline, report
from observe.parse import parser as parser_mod
from observe.parse import scan
from tests.scaninputs import ACCESS_LINES, ANSI_LOG, NORMAL, NOW, edge_inputs, real_inputs


def diag_json(path: Path) -> str:
    return json.dumps(report.to_dict(pipeline.diagnose_paths([path], now=NOW)), indent=1, sort_keys=True)


@pytest.fixture(autouse=True, params=["compiled", "python"])
def classifier(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Every test here runs with each classifier."""
    if request.param == "compiled" and scan._scanc is None:
        pytest.skip("observe.parse._scanc is not built (tests/test_scanc.py says whether it must be)")
    monkeypatch.setattr(scan, "COMPILED", request.param == "compiled")
    return request.param


def _both(path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.setattr(scan, "ENABLED", False)
    monkeypatch.setattr(parser_mod, "FAST_STATS", False)
    general = diag_json(path)
    monkeypatch.setattr(scan, "ENABLED", True)
    monkeypatch.setattr(parser_mod, "FAST_STATS", True)
    fast = diag_json(path)
    return general, fast


@pytest.mark.parametrize("path", real_inputs(), ids=lambda p: p.name[:40])
def test_real_inputs_identical(path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    general, fast = _both(path, monkeypatch)
    assert fast == general


def test_edge_inputs_identical(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for path in edge_inputs(tmp_path):
        general, fast = _both(path, monkeypatch)
        assert fast == general, path.name


@pytest.mark.parametrize("block", [1, 7, 64, 4096])
def test_block_edges_identical(block: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Small blocks put block edges inside lines, inside CRLF pairs and inside multi-byte characters."""
    inputs = [p for p in edge_inputs(tmp_path) if p.name.startswith(("crlf", "no-final", "wrap-apis", "gz"))]
    monkeypatch.setattr(scan, "BLOCK", block)
    for path in inputs + [ACCESS_LINES, ANSI_LOG]:
        general, fast = _both(path, monkeypatch)
        assert fast == general, path.name


def test_scan_credits_access_lines(monkeypatch: pytest.MonkeyPatch) -> None:
    """The fast path is not a no-op: on a busy log most lines are counted without being parsed."""
    calls = []
    real = scan.Scanner.feed_line
    monkeypatch.setattr(scan.Scanner, "feed_line", lambda self, *a: calls.append(1) or real(self, *a))
    diag_json(NORMAL)
    assert 0 < len(calls) < NORMAL.read_bytes().count(b"\n") // 5
