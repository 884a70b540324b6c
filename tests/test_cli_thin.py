"""The command line is thin (issue 19): options parsed in observe/cli/, everything else below it;
every `--format json` document built in observe/report/; `recommend` is manage.propose's answer;
a proposal is printed one way, by `run` and by `recommend` alike."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from observe import manage, report
from observe.cli import command
from observe.model import Finding, Recommendation
from tests.services import replay_metrics_server

ROOT = Path(__file__).resolve().parents[1]
CLI = ROOT / "observe" / "cli"
KV_LOG = ROOT / "examples" / "kv-pressure" / "vllm.log"
SNAPS = [(ROOT / "tests" / "data" / "metrics" / f"metrics-kvpressure-{i}.txt").read_text() for i in (1, 2)]


def test_the_cli_layer_is_under_600_lines_in_all() -> None:
    lines = sum(len(p.read_text().splitlines()) for p in CLI.rglob("*.py"))
    assert lines < 600, f"observe/cli/ has {lines} lines: move what is not option parsing below it"


def test_no_json_document_is_built_in_the_cli() -> None:
    """No json.dumps and no schema literal under observe/cli/; each `observe.<doc>/v1` literal is
    written once, in report/jsonout.py."""
    for p in CLI.rglob("*.py"):
        tree = ast.parse(p.read_text())
        names = {n.attr for n in ast.walk(tree) if isinstance(n, ast.Attribute)}
        assert "dumps" not in names, f"{p.name} builds JSON: build it in observe/report/jsonout.py"
    literals: dict[str, list[str]] = {}
    for p in (ROOT / "observe").rglob("*.py"):
        for m in re.finditer(r"[\"'](observe\.[a-z]+/v\d+)[\"']", p.read_text()):
            literals.setdefault(m.group(1), []).append(str(p.relative_to(ROOT)))
    assert set(literals) >= {"observe.diagnosis/v1", "observe.recommend/v1", "observe.capacity/v1"}
    assert all(where == ["observe/report/jsonout.py"] for where in literals.values()), literals


def _cli(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(command(), list(args), prog_name="observe")
    return r.exit_code, r.stdout, r.stderr


def test_recommend_prints_what_manage_proposes(monkeypatch) -> None:
    """The same vLLM (replayed real kv-pressure snapshots and its log): manage.propose_for_url
    proposes the KV-cache change; `recommend` prints the very Proposal it gets from there, as
    report.recommend_json (--format json) or report.proposal_text (text)."""
    with replay_metrics_server(SNAPS, mode="per_request") as (url, _):
        prop = manage.propose_for_url(url, [str(KV_LOG)], sleep=lambda s: None)
    assert prop.before is None and prop.after is None  # a vLLM observe did not launch
    assert prop.accepted and prop.command and "--kv-cache-memory-bytes" in prop.command
    assert "kv_cache_saturated" in [f.id for f in prop.findings]
    doc = json.loads(report.recommend_json(prop, url))
    assert doc["schema"] == "observe.recommend/v1" and doc["command"] == prop.command

    seen: list[manage.Proposal] = []
    real = manage.propose_for_url
    monkeypatch.setattr(manage, "propose_for_url", lambda *a, **k: seen.append(real(*a, **k)) or seen[-1])
    for fmt in ("json", "text"):
        with replay_metrics_server(SNAPS, mode="per_request") as (url, _):
            rc, out, _err = _cli(
                "recommend", "--vllm-url", url, "--log", str(KV_LOG), "--interval", "0", "--format", fmt
            )
        assert rc == 0 and seen
        assert out == (
            report.recommend_json(seen[-1], url) + "\n" if fmt == "json" else report.proposal_text(seen[-1])
        )


def _rec(flag: str, current, suggested, reason: str = "r") -> Recommendation:
    return Recommendation(flag=flag, current=current, suggested=suggested, reason=reason)


def test_one_proposal_text_for_run_and_recommend(tmp_path: Path) -> None:
    spec = manage.parse_command(["vllm", "serve", "m", "--max-num-seqs", "256"])
    ok = [_rec("--max-num-seqs", 256, 64, "fewer sequences")]
    bad = [(_rec("--no-such-flag", None, 3), "vLLM has no flag --no-such-flag")]
    finding = Finding(id="kv_cache_saturated", severity="critical", title="t", evidence="KV full")
    after = manage.apply(spec, ok)
    prop = manage.Proposal(spec, after, ok, bad, [finding], tmp_path, command=after.command())
    assert report.proposal_text(prop) == (
        "[critical] kv_cache_saturated: KV full\n"
        "--max-num-seqs: 256 → 64  # fewer sequences\n"
        "not suggested: --no-such-flag 3 (vLLM has no flag --no-such-flag)\n"
        "new command:\n"
        "  vllm serve m --max-num-seqs 64\n"
    )
    assert report.proposal_text(prop, title=f"diagnosis of {tmp_path}") == (
        f"observe: diagnosis of {tmp_path}\n"
        "  [critical] kv_cache_saturated: KV full\n"
        "  --max-num-seqs: 256 → 64  # fewer sequences\n"
        "  not suggested: --no-such-flag 3 (vLLM has no flag --no-such-flag)\n"
        "new command:\n"
        "  vllm serve m --max-num-seqs 64\n"
    )
    # every change refused: both say so (`run` used to print only the refusals)
    none = manage.Proposal(spec, spec, [], bad, [], tmp_path)
    assert report.proposal_text(none, title="diagnosis of x").splitlines()[1:] == [
        "  no flag changes recommended",
        "  not suggested: --no-such-flag 3 (vLLM has no flag --no-such-flag)",
    ]


def test_python_dash_m_observe_is_the_command() -> None:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    for mod in ("observe", "observe.cli"):
        r = subprocess.run(
            [sys.executable, "-m", mod, "--version"], capture_output=True, text=True, env=env, timeout=120
        )
        assert r.returncode == 0 and r.stdout.startswith("observe "), (mod, r.stderr)
