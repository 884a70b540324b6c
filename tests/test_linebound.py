"""The long-line bound (observe/parse/linebound.py, Settings.max_line_bytes): a line longer than the
bound is cut there and counted, whatever the pieces the bytes come in; memory stays flat on a
200 MB line through the real CLI under an address-space limit."""

from __future__ import annotations

import os
import random
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from observe import settings as settings_mod
from observe.errors import ConfigError
from observe.parse.linebound import LineBound, lines
from observe.sidecar.config import SidecarSettings

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("seed", range(5))
def test_every_line_is_cut_at_the_bound_and_counted(seed: int) -> None:
    rnd = random.Random(seed)
    for _ in range(400):
        mx = rnd.randint(1, 40)
        sizes = [0, 1, mx - 1, mx, mx + 1, 3 * mx, rnd.randint(0, 100)]
        want_lines = [bytes([97 + i % 26]) * rnd.choice(sizes) for i in range(rnd.randint(0, 8))]
        data = b"\n".join(want_lines) + rnd.choice([b"", b"\n"])
        pieces, i = [], 0
        while i < len(data):
            k = rnd.randint(1, 120)
            pieces.append(data[i : i + k])
            i += k
        lb = LineBound(mx)
        out = b"".join(kept for p in pieces for kept in lb.feed(p))
        assert out == b"\n".join(ln[:mx] for ln in data.split(b"\n"))
        assert lb.cut == sum(len(ln) > mx for ln in data.split(b"\n"))
        body = data[:-1] if data.endswith(b"\n") else data
        assert list(lines(iter(pieces))) == (body.split(b"\n") if data else [])


def test_the_bound_is_a_setting_shared_with_the_sidecar() -> None:
    s = settings_mod.Settings(max_line_bytes=4096)
    assert SidecarSettings.from_cli(logs=["x.log"], vllm_url=None, thresholds=s).max_line_bytes == 4096
    assert (
        SidecarSettings.from_cli(logs=["x.log"], vllm_url=None).max_line_bytes
        == settings_mod.Settings().max_line_bytes
    )
    with pytest.raises(ConfigError, match="max_line_bytes"):
        settings_mod.Settings(max_line_bytes=10)


def _limit_memory() -> None:  # runs in the child: 640 MiB of address space for all of observe
    resource.setrlimit(resource.RLIMIT_AS, (640 << 20, 640 << 20))


def test_a_200_mb_line_is_cut_and_memory_stays_flat(tmp_path: Path) -> None:
    src = (ROOT / "examples" / "kv-pressure" / "vllm.log").read_bytes()
    log = tmp_path / "vllm.log"
    with log.open("wb") as f:
        head, rest = src.split(b"\n", 40)[:40], src.split(b"\n", 40)[40]
        f.write(b"\n".join(head) + b"\n")
        f.write(b"INFO 11-29 19:02:48 [serving.py:1] Received request: prompt: '")
        chunk = b"a" * (1 << 20)
        for _ in range(200):
            f.write(chunk)
        f.write(b"'\n")
        f.write(rest)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    env.update({"PYTHONPATH": str(ROOT), "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"})
    r = subprocess.run(
        [sys.executable, "-m", "observe.cli", "diagnose", str(log), "--format", "text"],
        capture_output=True,
        text=True,
        env=env,
        preexec_fn=_limit_memory,
        timeout=300,
    )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "1 line cut at 65,536 bytes" in r.stdout
    assert "kv_cache_saturated" in r.stdout  # the lines around it were read as ever
    # the same through standard input (the line-by-line reader)
    with log.open("rb") as f:
        r = subprocess.run(
            [sys.executable, "-m", "observe.cli", "diagnose", "-"],
            stdin=f,
            capture_output=True,
            text=True,
            env=env,
            preexec_fn=_limit_memory,
            timeout=300,
        )
    assert r.returncode == 0, r.stderr[-2000:]
    assert "1 line cut at 65,536 bytes" in r.stdout and "kv_cache_saturated" in r.stdout


def test_the_bound_comes_from_config_and_the_cut_is_in_the_json(tmp_path: Path) -> None:
    import json
    from importlib import resources

    import jsonschema

    log = tmp_path / "vllm.log"
    src = (ROOT / "examples" / "kv-pressure" / "vllm.log").read_text().splitlines(keepends=True)
    log.write_text(
        "".join(src[:30]) + "INFO 11-29 19:02:48 [x.py:1] " + "b" * 9000 + "\n" + "".join(src[30:])
    )
    cfg = tmp_path / "s.yml"
    cfg.write_text("max_line_bytes: 8192\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OBSERVE_")}
    env["PYTHONPATH"] = str(ROOT)
    r = subprocess.run(
        [sys.executable, "-m", "observe.cli", "diagnose", str(log), "--config", str(cfg), "--format", "json"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    doc = json.loads(r.stdout)
    assert doc["sources"][0]["cut_lines"] == 1 and doc["sources"][0]["max_line_bytes"] == 8192
    schema = json.loads((resources.files("observe") / "schemas" / "diagnosis-v1.json").read_text())
    jsonschema.Draft202012Validator(schema).validate(doc)
    html = subprocess.run(
        [sys.executable, "-m", "observe.cli", "diagnose", str(log), "--config", str(cfg), "--format", "html"],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert "(1 line cut at 8,192 bytes)</td>" in html.stdout
