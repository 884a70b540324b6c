"""CLI conventions: --version, -h, completion, OBSERVE_* environment variables, usage lines, one
exit-code table (README = errors.EXIT_CODES = behaviour), JSON Schemas for every --format json."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from importlib import resources
from pathlib import Path

import jsonschema
import pytest

from observe import __version__, cli, errors
from tests.services import free_port, replay_metrics_server

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"


def observe(
    *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> subprocess.CompletedProcess:
    e = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    e.update({"PYTHONPATH": str(ROOT), "COLUMNS": "200", **(env or {})})
    return subprocess.run(
        [sys.executable, "-m", "observe.cli", *args], capture_output=True, text=True, env=e, timeout=timeout
    )


def leaf_commands():
    """(path, click command) of every command, e.g. (("generate", "alerts"), cmd)."""
    out = []

    def walk(cmd, path):
        if hasattr(cmd, "commands"):
            for name, sub in cmd.commands.items():
                walk(sub, (*path, name))
        else:
            out.append((path, cmd))

    walk(cli.command(), ())
    return out


def test_version_and_version_in_help() -> None:
    r = observe("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"observe {__version__}"
    assert observe("-V").stdout.strip() == f"observe {__version__}"
    assert f"observe {__version__}" in observe("--help").stdout


@pytest.mark.parametrize("path", [p for p, _ in leaf_commands()], ids=lambda p: " ".join(p))
def test_every_command_has_dash_h_and_a_clean_usage_line(path: tuple[str, ...]) -> None:
    r = observe(*path, "-h")
    assert r.returncode == 0, r.stderr
    usage = next(ln for ln in r.stdout.splitlines() if "Usage:" in ln)
    assert f"observe {' '.join(path)}" in usage
    assert not re.search(r"[{}<>]", usage), usage


def test_every_option_has_its_environment_variable() -> None:
    for path, cmd in leaf_commands():
        for p in cmd.params:
            if p.opts and p.opts[0].startswith("-") and not p.is_eager:
                long = max(p.opts, key=len).lstrip("-")
                want = "_".join(["OBSERVE", *path, long]).upper().replace("-", "_")
                assert p.envvar == want, (path, p.opts, p.envvar)
    assert "OBSERVE_SIDECAR_VLLM_URL" in observe("sidecar", "-h").stdout


def test_environment_variables_are_read() -> None:
    r = observe("config", "show", env={"OBSERVE_CONFIG_SHOW_FORMAT": "json"})
    assert r.returncode == 0 and isinstance(json.loads(r.stdout), list)
    # a bad value from the environment is refused like one from the command line
    r = observe("sidecar", env={"OBSERVE_SIDECAR_VLLM_URL": "127.0.0.1:8000"})
    assert r.returncode == errors.EXIT_USAGE and "'127.0.0.1:8000' is not an http(s) URL" in r.stderr
    # the command line wins over the environment
    r = observe("config", "show", "--format", "yaml", env={"OBSERVE_CONFIG_SHOW_FORMAT": "json"})
    assert r.returncode == 0 and not r.stdout.lstrip().startswith("[")
    r = observe(
        "capacity",
        "--gpu",
        "H100",
        env={"OBSERVE_CAPACITY_MODEL": "llama-3-8b", "OBSERVE_CAPACITY_FORMAT": "json"},
    )
    assert r.returncode == 0, r.stderr
    assert "llama-3-8b" in json.loads(r.stdout)["model"].lower()
    # a repeatable option takes a space-separated list
    r = observe(
        "recommend",
        env={
            "OBSERVE_RECOMMEND_VLLM_URL": "http://127.0.0.1:1",
            "OBSERVE_RECOMMEND_LOG": "/nx/a.log /nx/b.log",
        },
    )
    assert "no log file matches /nx/a.log /nx/b.log" in r.stderr


def test_install_completion_writes_a_bash_completion(tmp_path: Path) -> None:
    # the shell named, not detected: typer otherwise walks the process tree (shellingham) and, under a parent it cannot
    # name (a detached job), answers "Shell None is not supported" whatever the argument says
    env = {"HOME": str(tmp_path), "SHELL": "/bin/bash", "_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION": "1"}
    r = observe("--install-completion", "bash", env=env)
    assert r.returncode == 0, r.stderr
    written = "".join(p.read_text() for p in tmp_path.rglob("*") if p.is_file())
    assert "_OBSERVE_COMPLETE" in written


def test_readme_exit_code_table_is_errors_exit_codes() -> None:
    text = (ROOT / "README.md").read_text()
    table = text.split("### Exit codes", 1)[1].split("\n\n", 2)[1]
    rows = [ln for ln in table.splitlines() if re.match(r"^\| \d+ \|", ln)]
    assert rows == [f"| {c} | {short} | {when} |" for c, _, short, when in errors.EXIT_CODES]
    assert len({c for c, *_ in errors.EXIT_CODES}) == len(errors.EXIT_CODES)


def test_exit_codes_are_what_the_table_says(tmp_path: Path) -> None:
    assert observe("diagnose", "--no-such-option").returncode == errors.EXIT_USAGE
    assert observe("diagnose").returncode == errors.EXIT_USAGE
    assert observe("diagnose", str(tmp_path / "missing.log")).returncode == errors.EXIT_INPUT
    sat = EXAMPLES / "kv-pressure" / "vllm.log"
    assert observe("diagnose", str(sat), "--fail-on", "warning").returncode == errors.EXIT_FOUND
    assert observe("diagnose", str(sat)).returncode == errors.EXIT_OK
    dead = f"http://127.0.0.1:{free_port()}"
    r = observe("recommend", "--vllm-url", dead, "--interval", "0")
    assert r.returncode == errors.EXIT_TARGET and "cannot read" in r.stderr


# ---------------------------------------------------------------- JSON Schemas
def schema(name: str) -> dict:
    return json.loads((resources.files("observe") / "schemas" / f"{name}.json").read_text())


def valid(doc, name: str) -> None:
    s = schema(name)
    jsonschema.Draft202012Validator.check_schema(s)
    jsonschema.Draft202012Validator(s).validate(doc)


def test_schemas_are_shipped_as_package_data() -> None:
    pyproject = (ROOT / "pyproject.toml").read_text()
    assert '"schemas/*.json"' in pyproject
    names = sorted(p.name for p in (ROOT / "observe" / "schemas").glob("*.json"))
    assert names == [
        "capacity-v1.json",
        "compare-v1.json",
        "diagnosis-v1.json",
        "recommend-v1.json",
        "settings-v1.json",
        "tune-v1.json",
        "upgrade-v1.json",
    ]


@pytest.mark.parametrize("folder", ["kv-pressure", "normal", "bad-launch"])
def test_diagnose_json_validates(folder: str) -> None:
    r = observe("diagnose", str(EXAMPLES / folder), "--format", "json")
    assert r.returncode == 0, r.stderr
    valid(json.loads(r.stdout), "diagnosis-v1")


def test_diagnose_json_of_many_instances_validates() -> None:
    r = observe("diagnose", str(EXAMPLES / "kv-pressure"), str(EXAMPLES / "normal"), "--format", "json")
    doc = json.loads(r.stdout)
    assert len(doc["instances"]) == 2
    valid(doc, "diagnosis-v1")
    # the per-instance results are the place to read from: no instance's stats pose as the whole's
    assert doc["engine"] is doc["stats"] is doc["events"] is doc["command"] is None
    assert all(i["stats"]["samples"] for i in doc["instances"])
    first = doc["instances"][0]
    with pytest.raises(jsonschema.ValidationError):
        valid({**doc, "engine": first["engine"], "stats": first["stats"]}, "diagnosis-v1")


def test_diagnose_json_of_one_instance_keeps_the_top_level_keys() -> None:
    r = observe("diagnose", str(EXAMPLES / "kv-pressure"), "--format", "json")
    doc = json.loads(r.stdout)
    assert len(doc["instances"]) == 1
    only = doc["instances"][0]
    assert doc["engine"] == only["engine"] and doc["stats"] == only["stats"]
    assert doc["events"] == only["events"]
    valid(doc, "diagnosis-v1")


def test_capacity_json_validates() -> None:
    r = observe(
        "capacity", "--model", "llama-3-70b", "--gpu", "H100", "--tp", "4",
        "--concurrency", "100", "--context", "4000", "--format", "json",
    )  # fmt: skip
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert "alternative" in doc
    valid(doc, "capacity-v1")
    with pytest.raises(jsonschema.ValidationError):
        valid({**doc, "bytes_per_token": "many"}, "capacity-v1")


def test_compare_json_validates() -> None:
    r = observe(
        "compare", str(EXAMPLES / "kv-pressure"), str(EXAMPLES / "kv-pressure-applied"), "--format", "json"
    )
    assert r.returncode == 0, r.stderr
    valid(json.loads(r.stdout), "compare-v1")


def test_config_show_json_validates() -> None:
    valid(json.loads(observe("config", "show", "--format", "json").stdout), "settings-v1")


def test_recommend_json_validates() -> None:
    snaps = [
        (ROOT / "tests" / "data" / "metrics" / f"metrics-kvpressure-{i}.txt").read_text() for i in (1, 2)
    ]
    log = EXAMPLES / "kv-pressure" / "vllm.log"
    with replay_metrics_server(snaps, mode="per_request") as (url, _):
        r = observe(
            "recommend", "--vllm-url", url, "--log", str(log), "--interval", "0.5", "--format", "json"
        )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["findings"]
    valid(doc, "recommend-v1")


@pytest.mark.parametrize("cmd", [["compare", "a", "b"], ["recommend", "--vllm-url", "http://127.0.0.1:1"]])
@pytest.mark.parametrize("fmt", ["markdown", "html"])
def test_compare_and_recommend_do_not_offer_formats_they_cannot_make(cmd: list[str], fmt: str) -> None:
    r = observe(*cmd, "--format", fmt)
    assert r.returncode == errors.EXIT_USAGE and "text" in r.stderr and "json" in r.stderr
